package blob_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/blob"
	"github.com/plumehq/plume/shared/blob/blobtest"
	"github.com/plumehq/plume/shared/blob/s3local"
	"github.com/plumehq/plume/shared/errs"
)

const (
	accessKey = "plume-test"
	secretKey = "plume-test-secret"
	bucket    = "plume-test-bucket"
)

// startS3 runs an s3local server for the test.
func startS3(t *testing.T) *s3local.Server {
	t.Helper()
	srv, err := s3local.Start("127.0.0.1:0", accessKey, secretKey)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, srv.Close()) })
	return srv
}

// newClient returns a client of endpoint signing with the given key pair.
func newClient(endpoint, region, access, secret string) *s3.Client {
	return blob.NewClient(aws.Config{
		Region:       region,
		Credentials:  credentials.NewStaticCredentialsProvider(access, secret, ""),
		BaseEndpoint: aws.String(endpoint),
	}, false)
}

// newStore starts a server and returns a store on a bucket created in it.
func newStore(t *testing.T) (*blob.Store, *s3local.Server) {
	t.Helper()
	srv := startS3(t)
	store := blob.New(newClient(srv.URL(), "us-east-1", accessKey, secretKey), bucket)
	require.NoError(t, store.EnsureBucket(t.Context()))
	return store, srv
}

// fetch sends method to rawURL with body and headers and returns the status and body.
func fetch(t *testing.T, method, rawURL string, body []byte, header http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, rawURL, bytes.NewReader(body))
	require.NoError(t, err)
	for k, vs := range header {
		req.Header[k] = vs
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(data)
}

// editURL returns rawURL changed by edit.
func editURL(t *testing.T, rawURL string, edit func(u *url.URL, q url.Values)) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	require.NoError(t, err)
	q := u.Query()
	edit(u, q)
	u.RawQuery = q.Encode()
	return u.String()
}

// flipHex changes the first hex digit of s to another one.
func flipHex(s string) string {
	if s == "" {
		return s
	}
	c := byte('0')
	if s[0] == '0' {
		c = '1'
	}
	return string(c) + s[1:]
}

func TestPutGet(t *testing.T) {
	store, _ := newStore(t)
	ctx := t.Context()
	big := bytes.Repeat([]byte("0123456789abcdef"), 64<<10) // 1 MiB

	tests := []struct {
		name        string
		key         string
		body        []byte
		contentType string
	}{
		{name: "text", key: "attachments/project=p1/a.txt", body: []byte("hello, world"), contentType: "text/plain"},
		{name: "ndjson batch", key: "spans/project=p1/date=2026-01-02/hour=03/b1.ndjson", body: []byte("{\"a\":1}\n{\"b\":2}\n"), contentType: "application/x-ndjson"},
		{name: "empty object", key: "raw/project=p1/empty", body: []byte{}},
		{name: "binary without content type", key: "raw/project=p1/bin", body: []byte{0, 1, 2, 0xff, 0xfe}},
		{name: "one MiB", key: "raw/project=p1/big", body: big, contentType: "application/octet-stream"},
		{name: "key with spaces and unicode", key: "attachments/project=p1/my file é.png", body: []byte("png"), contentType: "image/png"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, store.Put(ctx, tt.key, tt.body, tt.contentType))
			got, err := store.Get(ctx, tt.key)
			require.NoError(t, err)
			assert.Equal(t, tt.body, got)
		})
	}

	t.Run("overwrite", func(t *testing.T) {
		key := "raw/project=p1/overwrite"
		require.NoError(t, store.Put(ctx, key, []byte("first"), ""))
		require.NoError(t, store.Put(ctx, key, []byte("second"), ""))
		got, err := store.Get(ctx, key)
		require.NoError(t, err)
		assert.Equal(t, "second", string(got))
	})
}

func TestGetMissing(t *testing.T) {
	store, srv := newStore(t)
	ctx := t.Context()
	require.NoError(t, store.Put(ctx, "spans/project=p1/present", []byte("x"), ""))

	_, err := store.Get(ctx, "spans/project=p1/absent")
	assert.Equal(t, errs.CodeNotFound, errs.CodeOf(err), "Get: %v", err)
	_, err = store.GetRange(ctx, "spans/project=p1/absent", 0, 1)
	assert.Equal(t, errs.CodeNotFound, errs.CodeOf(err), "GetRange: %v", err)

	// A missing bucket is a misconfiguration, not a missing object.
	other := blob.New(newClient(srv.URL(), "us-east-1", accessKey, secretKey), "no-such-bucket")
	_, err = other.Get(ctx, "spans/project=p1/present")
	require.Error(t, err)
	assert.Equal(t, errs.CodeInternal, errs.CodeOf(err), "Get from a missing bucket: %v", err)
}

func TestGetRange(t *testing.T) {
	store, _ := newStore(t)
	ctx := t.Context()
	const key = "spans/project=p1/date=2026-01-02/hour=03/b1.ndjson"
	body := []byte("0123456789abcdefghijklmnopqrstuvwxyz")
	require.NoError(t, store.Put(ctx, key, body, "application/x-ndjson"))
	size := int64(len(body))

	tests := []struct {
		name           string
		offset, length int64
	}{
		{name: "first byte", offset: 0, length: 1},
		{name: "last byte", offset: size - 1, length: 1},
		{name: "middle", offset: 10, length: 6},
		{name: "prefix", offset: 0, length: 10},
		{name: "suffix", offset: 30, length: size - 30},
		{name: "whole object", offset: 0, length: size},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := store.GetRange(ctx, key, tt.offset, tt.length)
			require.NoError(t, err)
			assert.Equal(t, string(body[tt.offset:tt.offset+tt.length]), string(got))
		})
	}

	bad := []struct {
		name           string
		offset, length int64
		code           errs.Code
	}{
		{name: "negative offset", offset: -1, length: 1, code: errs.CodeInvalid},
		{name: "zero length", offset: 0, length: 0, code: errs.CodeInvalid},
		{name: "negative length", offset: 0, length: -5, code: errs.CodeInvalid},
		{name: "overflowing end", offset: 1, length: 1<<63 - 1, code: errs.CodeInvalid},
		{name: "starts past the end", offset: size, length: 1, code: errs.CodeInvalid},
		{name: "runs past the end", offset: size - 2, length: 5, code: errs.CodeInternal},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			got, err := store.GetRange(ctx, key, tt.offset, tt.length)
			require.Error(t, err)
			assert.Nil(t, got)
			assert.Equal(t, tt.code, errs.CodeOf(err), "%v", err)
		})
	}
}

func TestInvalidKeys(t *testing.T) {
	store, _ := newStore(t)
	ctx := t.Context()
	keys := []struct{ name, key string }{
		{name: "empty", key: ""},
		{name: "leading slash", key: "/spans/project=p1/x"},
		{name: "too long", key: strings.Repeat("k", 1025)},
		{name: "not UTF-8", key: "spans/\xff"},
	}
	ops := []struct {
		name string
		call func(key string) error
	}{
		{"Put", func(k string) error { return store.Put(ctx, k, []byte("x"), "") }},
		{"Get", func(k string) error { _, err := store.Get(ctx, k); return err }},
		{"GetRange", func(k string) error { _, err := store.GetRange(ctx, k, 0, 1); return err }},
		{"PresignGet", func(k string) error { _, err := store.PresignGet(ctx, k, time.Minute); return err }},
		{"PresignPut", func(k string) error { _, err := store.PresignPut(ctx, k, "text/plain", 1, time.Minute); return err }},
		{"Sizes", func(k string) error { _, err := store.Sizes(ctx, k); return err }}, // a prefix, checked as a key
	}
	for _, k := range keys {
		for _, op := range ops {
			t.Run(op.name+"/"+k.name, func(t *testing.T) {
				err := op.call(k.key)
				assert.Equal(t, errs.CodeInvalid, errs.CodeOf(err), "%v", err)
			})
		}
	}

	require.NoError(t, store.Put(ctx, strings.Repeat("k", 1024), []byte("x"), ""), "a key of exactly 1024 bytes is allowed")
}

func TestEnsureBucket(t *testing.T) {
	srv := startS3(t)
	tests := []struct {
		name, region, bucket string
	}{
		{name: "us-east-1", region: "us-east-1", bucket: "plume-ensure-use1"},
		{name: "other region sends a location constraint", region: "eu-west-1", bucket: "plume-ensure-euw1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			store := blob.New(newClient(srv.URL(), tt.region, accessKey, secretKey), tt.bucket)
			require.NoError(t, store.EnsureBucket(ctx))
			require.NoError(t, store.Put(ctx, "k", []byte("kept"), ""))
			require.NoError(t, store.EnsureBucket(ctx), "second call")
			got, err := store.Get(ctx, "k")
			require.NoError(t, err)
			assert.Equal(t, "kept", string(got), "EnsureBucket must not recreate an existing bucket")
		})
	}

	t.Run("concurrent callers", func(t *testing.T) {
		store := blob.New(newClient(srv.URL(), "us-east-1", accessKey, secretKey), "plume-ensure-race")
		var wg sync.WaitGroup
		for range 16 {
			wg.Go(func() { assert.NoError(t, store.EnsureBucket(t.Context())) })
		}
		wg.Wait()
	})
}

// TestNewClientEndpointFromEnvironment is how deployments and plume-local configure S3: the
// endpoint comes from AWS_ENDPOINT_URL_S3 through the SDK's own configuration loader.
func TestNewClientEndpointFromEnvironment(t *testing.T) {
	srv := startS3(t)
	dir := t.TempDir()
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "credentials"))
	t.Setenv("AWS_ENDPOINT_URL", "")
	require.NoError(t, os.Unsetenv("AWS_ENDPOINT_URL"))
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_ENDPOINT_URL_S3", srv.URL())
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", accessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", secretKey)
	ctx := t.Context()

	cfg, err := awsconfig.LoadDefaultConfig(ctx)
	require.NoError(t, err)
	client := blob.NewClient(cfg, false)
	assert.True(t, client.Options().UsePathStyle, "a custom endpoint is addressed by path")

	store := blob.New(client, bucket)
	require.NoError(t, store.EnsureBucket(ctx))
	require.NoError(t, store.Put(ctx, "k", []byte("v"), ""))
	got, err := store.Get(ctx, "k")
	require.NoError(t, err)
	assert.Equal(t, "v", string(got))
}

func TestNewClientAddressing(t *testing.T) {
	tests := []struct {
		name      string
		endpoint  *string
		pathStyle bool
		want      bool
	}{
		{name: "AWS", want: false},
		{name: "AWS, path style asked for", pathStyle: true, want: true},
		{name: "custom endpoint", endpoint: aws.String("http://127.0.0.1:4566"), want: true},
		{name: "custom endpoint, path style asked for", endpoint: aws.String("http://127.0.0.1:4566"), pathStyle: true, want: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client := blob.NewClient(aws.Config{Region: "us-east-1", BaseEndpoint: tt.endpoint}, tt.pathStyle)
			assert.Equal(t, tt.want, client.Options().UsePathStyle)
		})
	}
}

func TestPresignGet(t *testing.T) {
	store, srv := newStore(t)
	ctx := t.Context()
	const key, other = "attachments/project=p1/photo.png", "attachments/project=p2/secret.png"
	require.NoError(t, store.Put(ctx, key, []byte("the photo"), "image/png"))
	require.NoError(t, store.Put(ctx, other, []byte("another tenant's photo"), "image/png"))

	signed, err := store.PresignGet(ctx, key, 5*time.Minute)
	require.NoError(t, err)

	tests := []struct {
		name   string
		edit   func(u *url.URL, q url.Values)
		status int
		body   string // substring of the response body
	}{
		{name: "as signed", edit: func(*url.URL, url.Values) {}, status: http.StatusOK, body: "the photo"},
		{name: "signature with one hex digit changed", status: http.StatusForbidden, body: "SignatureDoesNotMatch",
			edit: func(_ *url.URL, q url.Values) { q.Set("X-Amz-Signature", flipHex(q.Get("X-Amz-Signature"))) }},
		{name: "key of another object", status: http.StatusForbidden, body: "SignatureDoesNotMatch",
			edit: func(u *url.URL, _ url.Values) { u.Path = "/" + bucket + "/" + other }},
		{name: "longer expiry", status: http.StatusForbidden, body: "SignatureDoesNotMatch",
			edit: func(_ *url.URL, q url.Values) { q.Set("X-Amz-Expires", "3600") }},
		{name: "expiry beyond seven days", status: http.StatusForbidden, body: "X-Amz-Expires must be between",
			edit: func(_ *url.URL, q url.Values) { q.Set("X-Amz-Expires", "604801") }},
		{name: "later signing date", status: http.StatusForbidden, body: "SignatureDoesNotMatch",
			edit: func(_ *url.URL, q url.Values) {
				d, err := time.Parse("20060102T150405Z", q.Get("X-Amz-Date"))
				require.NoError(t, err)
				q.Set("X-Amz-Date", d.Add(time.Minute).Format("20060102T150405Z"))
			}},
		{name: "signature removed", status: http.StatusForbidden, body: "AccessDenied",
			edit: func(_ *url.URL, q url.Values) { q.Del("X-Amz-Signature") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := fetch(t, http.MethodGet, editURL(t, signed, tt.edit), nil, nil)
			assert.Equal(t, tt.status, status, body)
			assert.Contains(t, body, tt.body)
		})
	}

	t.Run("unsigned added x-amz header", func(t *testing.T) {
		status, body := fetch(t, http.MethodGet, signed, nil, http.Header{"X-Amz-Meta-Evil": {"1"}})
		assert.Equal(t, http.StatusForbidden, status, body)
	})

	t.Run("other method", func(t *testing.T) {
		status, body := fetch(t, http.MethodPut, signed, []byte("overwritten"), nil)
		assert.Equal(t, http.StatusForbidden, status, body)
		got, err := store.Get(ctx, key)
		require.NoError(t, err)
		assert.Equal(t, "the photo", string(got))
	})

	t.Run("signed with a wrong secret", func(t *testing.T) {
		wrong := blob.New(newClient(srv.URL(), "us-east-1", accessKey, "not-the-secret"), bucket)
		forged, err := wrong.PresignGet(ctx, key, time.Minute)
		require.NoError(t, err)
		status, body := fetch(t, http.MethodGet, forged, nil, nil)
		assert.Equal(t, http.StatusForbidden, status, body)
		assert.Contains(t, body, "SignatureDoesNotMatch")
	})
}

// TestPresignGetExpires waits out a one-second URL: gofakes3 refuses a presigned request once
// the server's clock is past X-Amz-Date + X-Amz-Expires.
func TestPresignGetExpires(t *testing.T) {
	store, _ := newStore(t)
	ctx := t.Context()
	const key = "attachments/project=p1/short.txt"
	require.NoError(t, store.Put(ctx, key, []byte("brief"), "text/plain"))

	const ttl = 2 * time.Second
	// A fresh URL is served. X-Amz-Date has whole seconds, so the URL expires at most ttl after
	// signing: a machine slow enough to take that long before the fetch signs again.
	var signed string
	var signedAt time.Time
	for try := 1; ; try++ {
		var err error
		signed, err = store.PresignGet(ctx, key, ttl)
		require.NoError(t, err)
		u, err := url.Parse(signed)
		require.NoError(t, err)
		assert.Equal(t, "2", u.Query().Get("X-Amz-Expires"))
		signedAt, err = time.Parse("20060102T150405Z", u.Query().Get("X-Amz-Date"))
		require.NoError(t, err)
		status, body := fetch(t, http.MethodGet, signed, nil, nil)
		if status == http.StatusOK {
			assert.Equal(t, "brief", body)
			break
		}
		require.True(t, try < 5 && time.Now().After(signedAt.Add(ttl)), "fresh URL refused (%d): %s", status, body)
	}

	time.Sleep(time.Until(signedAt.Add(ttl + 100*time.Millisecond)))
	status, body := fetch(t, http.MethodGet, signed, nil, nil)
	assert.Equal(t, http.StatusForbidden, status, body)
	assert.Contains(t, body, "Request has expired")
}

func TestPresignTTL(t *testing.T) {
	store, _ := newStore(t)
	tests := []struct {
		ttl     time.Duration
		expires string // X-Amz-Expires, or "" when refused
	}{
		{ttl: 0},
		{ttl: 999 * time.Millisecond},
		{ttl: -time.Minute},
		{ttl: blob.MaxPresignTTL + time.Second},
		{ttl: time.Second, expires: "1"},
		{ttl: 90*time.Second + 500*time.Millisecond, expires: "90"},
		{ttl: blob.MaxPresignTTL, expires: "604800"},
	}
	for _, tt := range tests {
		t.Run(tt.ttl.String(), func(t *testing.T) {
			for name, presign := range map[string]func() (string, error){
				"get": func() (string, error) { return store.PresignGet(t.Context(), "k", tt.ttl) },
				"put": func() (string, error) { return store.PresignPut(t.Context(), "k", "text/plain", 1, tt.ttl) },
			} {
				got, err := presign()
				if tt.expires == "" {
					assert.Equal(t, errs.CodeInvalid, errs.CodeOf(err), "%s: %v", name, err)
					continue
				}
				require.NoError(t, err, name)
				u, err := url.Parse(got)
				require.NoError(t, err)
				assert.Equal(t, tt.expires, u.Query().Get("X-Amz-Expires"), name)
			}
		})
	}
}

// TestPresignPut sends real HTTP PUTs to URLs that PresignPut signed: only the signed key,
// content type and length get through, so the signed size bounds what a URL can store.
func TestPresignPut(t *testing.T) {
	store, _ := newStore(t)
	ctx := t.Context()
	const size = 16 // signed

	tests := []struct {
		name        string
		contentType string // signed
		send        int    // bytes sent; 0: size
		chunked     bool   // sent without Content-Length (Transfer-Encoding: chunked)
		edit        func(u *url.URL, q url.Values)
		header      http.Header // sent
		status      int
		body        string // substring of the response body
	}{
		{name: "as signed", contentType: "image/png",
			header: http.Header{"Content-Type": {"image/png"}}, status: http.StatusOK},
		{name: "no content type signed or sent", contentType: "", status: http.StatusOK},
		{name: "wrong content type", contentType: "image/png",
			header: http.Header{"Content-Type": {"text/html"}}, status: http.StatusForbidden, body: "SignatureDoesNotMatch"},
		{name: "content type missing", contentType: "image/png", status: http.StatusForbidden, body: "AccessDenied"},
		{name: "one byte more than signed", contentType: "image/png", send: size + 1,
			header: http.Header{"Content-Type": {"image/png"}}, status: http.StatusForbidden, body: "SignatureDoesNotMatch"},
		{name: "one byte less than signed", contentType: "image/png", send: size - 1,
			header: http.Header{"Content-Type": {"image/png"}}, status: http.StatusForbidden, body: "SignatureDoesNotMatch"},
		{name: "12 MiB", contentType: "image/png", send: 12 << 20,
			header: http.Header{"Content-Type": {"image/png"}}, status: http.StatusForbidden, body: "SignatureDoesNotMatch"},
		{name: "chunked, without Content-Length", contentType: "image/png", chunked: true,
			header: http.Header{"Content-Type": {"image/png"}}, status: http.StatusForbidden, body: "SignatureDoesNotMatch"},
		{name: "signature with one hex digit changed", contentType: "image/png",
			header: http.Header{"Content-Type": {"image/png"}}, status: http.StatusForbidden, body: "SignatureDoesNotMatch",
			edit: func(_ *url.URL, q url.Values) { q.Set("X-Amz-Signature", flipHex(q.Get("X-Amz-Signature"))) }},
		{name: "another key", contentType: "image/png",
			header: http.Header{"Content-Type": {"image/png"}}, status: http.StatusForbidden, body: "SignatureDoesNotMatch",
			edit: func(u *url.URL, _ url.Values) { u.Path += ".other" }},
		{name: "longer expiry", contentType: "image/png",
			header: http.Header{"Content-Type": {"image/png"}}, status: http.StatusForbidden, body: "SignatureDoesNotMatch",
			edit: func(_ *url.URL, q url.Values) { q.Set("X-Amz-Expires", "3600") }},
		{name: "unsigned copy source added", contentType: "image/png",
			header: http.Header{"Content-Type": {"image/png"}, "X-Amz-Copy-Source": {"/" + bucket + "/attachments/project=p2/secret"}},
			status: http.StatusForbidden, body: "AccessDenied"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := fmt.Sprintf("attachments/project=p1/upload-%d.png", i)
			signed, err := store.PresignPut(ctx, key, tt.contentType, size, time.Minute)
			require.NoError(t, err)
			u, err := url.Parse(signed)
			require.NoError(t, err)
			assert.Contains(t, strings.Split(u.Query().Get("X-Amz-SignedHeaders"), ";"), "content-length")
			if tt.edit != nil {
				signed = editURL(t, signed, tt.edit)
			}
			send := tt.send
			if send == 0 {
				send = size
			}
			payload := bytes.Repeat([]byte{byte('a' + i)}, send)

			var status int
			var body string
			if tt.chunked {
				status, body = fetchChunked(t, signed, payload, tt.header)
			} else {
				status, body = fetch(t, http.MethodPut, signed, payload, tt.header)
			}
			assert.Equal(t, tt.status, status, body)
			assert.Contains(t, body, tt.body)

			got, err := store.Get(ctx, key)
			if tt.status == http.StatusOK {
				require.NoError(t, err)
				assert.Equal(t, payload, got)
				return
			}
			assert.Equal(t, errs.CodeNotFound, errs.CodeOf(err), "a refused upload stores nothing: %v", err)
			_, err = store.Get(ctx, key+".other")
			assert.Equal(t, errs.CodeNotFound, errs.CodeOf(err), "nor under another key: %v", err)
		})
	}
}

// fetchChunked PUTs body to rawURL with a body of unknown length, which net/http sends chunked
// and without Content-Length, as a streaming client would.
func fetchChunked(t *testing.T, rawURL string, body []byte, header http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPut, rawURL, io.MultiReader(bytes.NewReader(body)))
	require.NoError(t, err)
	// ContentLength 0 with a body is "unknown" to net/http, which then sends it chunked.
	require.EqualValues(t, 0, req.ContentLength, "a reader of unknown length")
	for k, vs := range header {
		req.Header[k] = vs
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(data)
}

func TestPresignPutSize(t *testing.T) {
	store, _ := newStore(t)
	tests := []struct {
		size int64
		ok   bool
	}{
		{size: -1},
		{size: 0},
		{size: 1, ok: true},
		{size: blob.MaxPutBytes, ok: true},
		{size: blob.MaxPutBytes + 1},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.size), func(t *testing.T) {
			got, err := store.PresignPut(t.Context(), "k", "text/plain", tt.size, time.Minute)
			if !tt.ok {
				assert.Equal(t, errs.CodeInvalid, errs.CodeOf(err), "%v", err)
				assert.Empty(t, got)
				return
			}
			require.NoError(t, err)
			u, err := url.Parse(got)
			require.NoError(t, err)
			assert.Equal(t, "content-length;content-type;host", u.Query().Get("X-Amz-SignedHeaders"))
		})
	}
}

func TestSizes(t *testing.T) {
	store, counter, _ := blobtest.New(t)
	ctx := t.Context()
	const prefix = "attachments/project=p1/span=s1/"
	want := map[string]int64{}
	for i, n := range []int{1, 9, 4096} {
		key := fmt.Sprintf("%s%d.bin", prefix, i)
		require.NoError(t, store.Put(ctx, key, bytes.Repeat([]byte("x"), n), ""))
		want[key] = int64(n)
	}
	// Neighbours the prefix must not reach.
	require.NoError(t, store.Put(ctx, "attachments/project=p1/span=s10/0.bin", []byte("other span"), ""))
	require.NoError(t, store.Put(ctx, "attachments/project=p2/span=s1/0.bin", []byte("other project"), ""))

	// Unusable prefixes, the empty one included, are TestInvalidKeys'.
	tests := []struct {
		name   string
		prefix string
		want   map[string]int64
	}{
		{name: "the span's objects only", prefix: prefix, want: want},
		{name: "nothing under the prefix", prefix: "attachments/project=p3/", want: map[string]int64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			counter.Reset()
			got, err := store.Sizes(ctx, tt.prefix)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			assert.Equal(t, 1, counter.Count("ListObjectsV2"), "one request")
		})
	}

	t.Run("one request per 1,000 objects", func(t *testing.T) {
		const many = 1001
		for i := range many {
			require.NoError(t, store.Put(ctx, fmt.Sprintf("many/%04d", i), []byte("x"), ""))
		}
		counter.Reset()
		got, err := store.Sizes(ctx, "many/")
		require.NoError(t, err)
		assert.Len(t, got, many)
		assert.Equal(t, 2, counter.Count("ListObjectsV2"))
	})
}

// TestDelete: one request deletes the objects named (and no neighbour), keys with no object
// are no error, and more keys than one request takes are refused.
func TestDelete(t *testing.T) {
	store, counter, _ := blobtest.New(t)
	ctx := t.Context()
	keys := []string{"index/project=p1/a.run", "index/project=p1/b.run"}
	for _, k := range append(keys, "index/project=p1/kept.run") {
		require.NoError(t, store.Put(ctx, k, []byte("x"), ""))
	}
	counter.Reset()
	require.NoError(t, store.Delete(ctx, append(keys, "index/project=p1/never-written.run")...))
	assert.Equal(t, 1, counter.Count("DeleteObjects"), "one request")
	for _, k := range keys {
		_, err := store.Get(ctx, k)
		assert.Equal(t, errs.CodeNotFound, errs.CodeOf(err), "%s: %v", k, err)
	}
	got, err := store.Get(ctx, "index/project=p1/kept.run")
	require.NoError(t, err)
	assert.Equal(t, []byte("x"), got)

	require.NoError(t, store.Delete(ctx), "nothing to delete")
	err = store.Delete(ctx, make([]string, blob.MaxDeleteKeys+1)...)
	assert.Equal(t, errs.CodeInvalid, errs.CodeOf(err), "%v", err)
}

func TestWrongCredentials(t *testing.T) {
	store, srv := newStore(t)
	ctx := t.Context()
	require.NoError(t, store.Put(ctx, "k", []byte("v"), ""))

	tests := []struct {
		name           string
		access, secret string
		code           string // S3 error code
	}{
		{name: "wrong secret", access: accessKey, secret: "not-the-secret", code: "SignatureDoesNotMatch"},
		{name: "unknown access key", access: "someone-else", secret: secretKey, code: "InvalidAccessKeyId"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wrong := blob.New(newClient(srv.URL(), "us-east-1", tt.access, tt.secret), bucket)
			ops := map[string]func() error{
				"Put":          func() error { return wrong.Put(ctx, "k", []byte("overwritten"), "") },
				"Get":          func() error { _, err := wrong.Get(ctx, "k"); return err },
				"GetRange":     func() error { _, err := wrong.GetRange(ctx, "k", 0, 1); return err },
				"EnsureBucket": func() error { return wrong.EnsureBucket(ctx) },
			}
			for name, op := range ops {
				err := op()
				require.Error(t, err, name)
				assert.Equal(t, errs.CodeInternal, errs.CodeOf(err), "%s: %v", name, err)
				var api smithy.APIError
				if name != "EnsureBucket" { // HEAD responses have no body, so no error code
					require.ErrorAs(t, err, &api, name)
					assert.Equal(t, tt.code, api.ErrorCode(), name)
				}
			}
		})
	}

	got, err := store.Get(ctx, "k")
	require.NoError(t, err)
	assert.Equal(t, "v", string(got), "nothing was overwritten")

	status, body := fetch(t, http.MethodGet, srv.URL()+"/"+bucket+"/k", nil, nil)
	assert.Equal(t, http.StatusForbidden, status, "an unsigned request: %s", body)
}
