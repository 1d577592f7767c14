package tracing_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	wire "github.com/plumehq/plume/api"
	"github.com/plumehq/plume/functions/tracing"
	"github.com/plumehq/plume/shared/trace"
)

// testAttachmentMaxBytes is the attachment size limit of the test API.
const testAttachmentMaxBytes = 4096

var (
	testPNG = append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{1}, 64)...)
	testJPG = append([]byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00"), bytes.Repeat([]byte{2}, 64)...)
)

type listed struct {
	Attachments []struct {
		ID          string `json:"id"`
		Type        string `json:"type"`
		URL         string `json:"url"`
		Label       string `json:"label"`
		ContentType string `json:"content_type"`
		Size        int64  `json:"size"`
	} `json:"attachments"`
	Count     int       `json:"count"`
	ExpiresAt time.Time `json:"expires_at"`
}

type uploaded struct {
	UploadURL string            `json:"upload_url"`
	Method    string            `json:"method"`
	Headers   map[string]string `json:"headers"`
	Key       string            `json:"key"`
	ID        string            `json:"id"`
	ExpiresAt time.Time         `json:"expires_at"`
}

// httpDo sends a request with net/http, as a browser or SDK would use a presigned URL.
func httpDo(t *testing.T, method, rawURL string, body []byte, header http.Header) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, rawURL, bytes.NewReader(body))
	require.NoError(t, err)
	for k, v := range header {
		req.Header[k] = v
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	got, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, res.Header, got
}

// postSpan stores one span of tenant tn with the given attributes and output_data.
func (api *testAPI) postSpan(t *testing.T, tn tenant, attributes map[string]any, output any) (string, map[string]any) {
	t.Helper()
	sp := map[string]any{
		"id": uuid.NewString(), "trace_id": uuid.NewString(), "name": "vision", "kind": "llm",
		"started_at": api.clock.Now().Add(-time.Minute).Format(time.RFC3339Nano), "attributes": attributes,
	}
	if output != nil {
		sp["output_data"] = output
	}
	res := api.do(t, http.MethodPost, "/spans", tn.key, []any{sp})
	require.Equal(t, http.StatusOK, res.status, string(res.raw))
	var stored []map[string]any
	res.decode(t, &stored)
	require.Len(t, stored, 1)
	return sp["id"].(string), stored[0]
}

func (api *testAPI) listAttachments(t *testing.T, tn tenant, spanID string) listed {
	t.Helper()
	res := api.do(t, http.MethodGet, "/spans/"+spanID+"/attachments", tn.key, nil)
	require.Equal(t, http.StatusOK, res.status, string(res.raw))
	var out listed
	res.decode(t, &out)
	return out
}

func TestAttachmentsExtractedAndListed(t *testing.T) {
	api := newTestAPI(t)
	files := http.NewServeMux()
	files.HandleFunc("GET /photo.jpg", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "image/jpeg")
		_, _ = w.Write(testJPG)
	})
	srv := httptest.NewServer(files)
	t.Cleanup(srv.Close)
	notAllowed := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/photo.jpg"
	pngB64 := base64.StdEncoding.EncodeToString(testPNG)
	oversize := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("z"), testAttachmentMaxBytes+1))

	type file struct {
		typ, label, contentType string
		body                    []byte
	}
	tests := []struct {
		name       string
		attributes map[string]any
		output     any
		want       []file
		wantNotes  []string // error notes left in the span
	}{
		{
			name: "base64 and data URL in attributes",
			attributes: map[string]any{"model": "gpt-4o", "attachments": []any{
				map[string]any{"type": "image", "label": "chart", "base64": pngB64},
				map[string]any{"type": "file", "label": "notes", "base64": "data:text/plain;base64," + base64.StdEncoding.EncodeToString([]byte("some notes"))},
			}},
			want: []file{{"image", "chart", "image/png", testPNG}, {"file", "notes", "text/plain", []byte("some notes")}},
		},
		{
			name:       "image parts in output_data",
			attributes: map[string]any{},
			output: []any{
				map[string]any{"type": "image_url", "image_url": map[string]any{"url": "data:image/png;base64," + pngB64}},
				map[string]any{"type": "image", "base64": pngB64, "label": "again"},
			},
			want: []file{{"image", "", "image/png", testPNG}, {"image", "again", "image/png", testPNG}},
		},
		{
			name: "URL of an allow-listed host is fetched",
			attributes: map[string]any{"attachments": []any{
				map[string]any{"type": "image", "label": "remote", "url": srv.URL + "/photo.jpg"},
			}},
			want: []file{{"image", "remote", "image/jpeg", testJPG}},
		},
		{
			name: "URL of another host is kept, not fetched",
			attributes: map[string]any{"attachments": []any{
				map[string]any{"type": "image", "url": notAllowed},
			}},
		},
		{
			name: "oversize payload is dropped",
			attributes: map[string]any{"attachments": []any{
				map[string]any{"type": "file", "base64": oversize},
				map[string]any{"type": "image", "base64": pngB64},
			}},
			want:      []file{{"image", "", "image/png", testPNG}},
			wantNotes: []string{fmt.Sprintf("not stored: larger than %d bytes", testAttachmentMaxBytes)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spanID, stored := api.postSpan(t, api.a, tt.attributes, tt.output)
			raw, err := json.Marshal(stored)
			require.NoError(t, err)
			assert.NotContains(t, string(raw), pngB64[:24], "the answer carries no bytes")
			assert.NotContains(t, string(raw), oversize[:24])

			res := api.do(t, http.MethodGet, "/spans?id="+spanID, api.a.key, nil)
			require.Equal(t, http.StatusOK, res.status)
			var read []struct {
				Attributes json.RawMessage `json:"attributes"`
				OutputData *string         `json:"output_data"`
			}
			res.decode(t, &read)
			require.Len(t, read, 1)
			text := string(read[0].Attributes) // what the span says of its files
			if read[0].OutputData != nil {
				text += *read[0].OutputData
			}
			assert.NotContains(t, text, pngB64[:24], "the stored span carries no bytes")
			assert.NotContains(t, text, oversize[:24])
			for _, note := range tt.wantNotes {
				assert.Contains(t, text, note)
			}
			if strings.Contains(tt.name, "not fetched") {
				assert.Contains(t, text, notAllowed, "kept as a reference")
			}

			got := api.listAttachments(t, api.a, spanID)
			require.Equal(t, len(tt.want), got.Count)
			require.Len(t, got.Attachments, len(tt.want))
			assert.WithinDuration(t, time.Now().Add(tracing.DefaultAttachmentURLTTL), got.ExpiresAt, 5*time.Second)
			for i, w := range tt.want {
				a := got.Attachments[i]
				assert.Equal(t, w.typ, a.Type)
				assert.Equal(t, w.label, a.Label)
				assert.Equal(t, w.contentType, strings.Split(a.ContentType, ";")[0])
				assert.Equal(t, int64(len(w.body)), a.Size)
				assert.Contains(t, text, `"attachment":"`+a.ID+`"`, "the span references the attachment")
				status, header, body := httpDo(t, http.MethodGet, a.URL, nil, nil)
				require.Equal(t, http.StatusOK, status, string(body))
				assert.Equal(t, w.body, body, "the presigned URL serves exactly the bytes")
				assert.Equal(t, a.ContentType, header.Get("Content-Type"))
			}
		})
	}
}

// flipHex changes the last hex digit of s.
func flipHex(s string) string {
	last := s[len(s)-1]
	if last == '0' {
		return s[:len(s)-1] + "1"
	}
	return s[:len(s)-1] + "0"
}

func TestAttachmentURLsRefused(t *testing.T) {
	api := newTestAPI(t)
	pngB64 := base64.StdEncoding.EncodeToString(testPNG)
	mine, _ := api.postSpan(t, api.a, map[string]any{"attachments": []any{map[string]any{"base64": pngB64}}}, nil)
	theirs, _ := api.postSpan(t, api.b, map[string]any{"attachments": []any{map[string]any{"base64": base64.StdEncoding.EncodeToString(testJPG)}}}, nil)
	signed := api.listAttachments(t, api.a, mine).Attachments[0].URL
	other := api.listAttachments(t, api.b, theirs).Attachments[0].URL
	otherURL, err := url.Parse(other)
	require.NoError(t, err)

	edit := func(f func(u *url.URL, q url.Values)) string {
		u, err := url.Parse(signed)
		require.NoError(t, err)
		q := u.Query()
		f(u, q)
		u.RawQuery = q.Encode()
		return u.String()
	}
	tests := []struct {
		name   string
		url    string
		method string
		status int
	}{
		{name: "as signed", url: signed, method: http.MethodGet, status: http.StatusOK},
		{name: "tampered signature", method: http.MethodGet, status: http.StatusForbidden,
			url: edit(func(_ *url.URL, q url.Values) { q.Set("X-Amz-Signature", flipHex(q.Get("X-Amz-Signature"))) })},
		{name: "another project's key", method: http.MethodGet, status: http.StatusForbidden,
			url: edit(func(u *url.URL, _ url.Values) { u.Path = otherURL.Path })},
		{name: "longer expiry", method: http.MethodGet, status: http.StatusForbidden,
			url: edit(func(_ *url.URL, q url.Values) { q.Set("X-Amz-Expires", "604800") })},
		{name: "used to overwrite", url: signed, method: http.MethodPut, status: http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, _, body := httpDo(t, tt.method, tt.url, []byte("x"), nil)
			assert.Equal(t, tt.status, status, string(body))
			if tt.status == http.StatusOK {
				assert.Equal(t, testPNG, body)
			} else {
				assert.NotContains(t, string(body), string(testPNG[:8]))
			}
		})
	}

	t.Run("expired", func(t *testing.T) {
		const ttl = 2 * time.Second
		short := tracing.NewQueryHandler(trace.NewQueries(api.traces, api.blobs), nil, nil, time.Now, api.authn, tracing.AttachmentURLs{Bucket: api.blobs, TTL: ttl})
		// sign lists the span's attachments, signing its URL for ttl: the URL and when it was
		// signed (X-Amz-Date has whole seconds: the URL is dead at most ttl after it).
		sign := func() (string, time.Time) {
			req := httptest.NewRequest(http.MethodGet, "/spans/"+mine+"/attachments", nil)
			req.Header.Set("Authorization", "Bearer "+api.a.key)
			rec := httptest.NewRecorder()
			short.ServeHTTP(rec, req)
			require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
			var out listed
			require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &out))
			require.Len(t, out.Attachments, 1)
			u, err := url.Parse(out.Attachments[0].URL)
			require.NoError(t, err)
			assert.Equal(t, "2", u.Query().Get("X-Amz-Expires"))
			signedAt, err := time.Parse("20060102T150405Z", u.Query().Get("X-Amz-Date"))
			require.NoError(t, err)
			return out.Attachments[0].URL, signedAt
		}
		// A fresh URL is served. A machine slow enough to take ttl between signing and
		// fetching sees it expired: that is no failure of the URL, so it signs again.
		var signed string
		var signedAt time.Time
		for try := 1; ; try++ {
			signed, signedAt = sign()
			status, _, body := httpDo(t, http.MethodGet, signed, nil, nil)
			if status == http.StatusOK {
				break
			}
			require.True(t, try < 5 && time.Now().After(signedAt.Add(ttl)), "a fresh URL refused (%d): %s", status, body)
		}
		time.Sleep(time.Until(signedAt.Add(ttl + 200*time.Millisecond)))
		status, _, body := httpDo(t, http.MethodGet, signed, nil, nil)
		assert.Equal(t, http.StatusForbidden, status, string(body))
		assert.Contains(t, string(body), "expired")
	})
}

// uploadHeader is the header an upload sends: every header of the POST's answer.
func uploadHeader(up uploaded) http.Header {
	h := http.Header{}
	for k, v := range up.Headers {
		h.Set(k, v)
	}
	return h
}

func TestAttachmentUpload(t *testing.T) {
	api := newTestAPI(t)
	spanID, _ := api.postSpan(t, api.a, map[string]any{"attachments": []any{map[string]any{"base64": base64.StdEncoding.EncodeToString(testPNG)}}}, "done")

	pdf := []byte("%PDF-1.7")
	res := api.do(t, http.MethodPost, "/spans/"+spanID+"/attachments", api.a.key,
		map[string]any{"type": "document", "label": "report", "content_type": "application/pdf", "size": len(pdf)})
	require.Equal(t, http.StatusOK, res.status, string(res.raw))
	var up uploaded
	res.decode(t, &up)
	assert.Equal(t, http.MethodPut, up.Method)
	assert.Equal(t, map[string]string{"Content-Type": "application/pdf", "Content-Length": "8"}, up.Headers)
	assert.Regexp(t, `^attachments/project=`+api.a.projectID+`/span=`+spanID+`/upload-[0-9a-f-]{36}\.pdf$`, up.Key)
	assert.WithinDuration(t, time.Now().Add(tracing.DefaultAttachmentURLTTL), up.ExpiresAt, 5*time.Second)

	status, _, body := httpDo(t, http.MethodPut, up.UploadURL, pdf, http.Header{"Content-Type": {"text/html"}})
	assert.Equal(t, http.StatusForbidden, status, "another content type than the signed one: %s", body)
	status, _, body = httpDo(t, http.MethodPut, up.UploadURL, pdf, uploadHeader(up))
	require.Equal(t, http.StatusOK, status, string(body))

	got := api.listAttachments(t, api.a, spanID)
	require.Equal(t, 2, got.Count, "the extracted attachment and the upload")
	a := got.Attachments[1]
	assert.Equal(t, up.ID, a.ID)
	assert.Equal(t, "document", a.Type)
	assert.Equal(t, "report", a.Label)
	assert.Equal(t, "application/pdf", a.ContentType)
	assert.EqualValues(t, len(pdf), a.Size)
	status, header, body := httpDo(t, http.MethodGet, a.URL, nil, nil)
	require.Equal(t, http.StatusOK, status, string(body))
	assert.Equal(t, pdf, body)
	assert.Equal(t, "application/pdf", header.Get("Content-Type"))

	// The span is otherwise unchanged.
	res = api.do(t, http.MethodGet, "/spans?id="+spanID, api.a.key, nil)
	require.Equal(t, http.StatusOK, res.status)
	var spans []map[string]any
	res.decode(t, &spans)
	require.Len(t, spans, 1)
	assert.Equal(t, "vision", spans[0]["name"])
	assert.Equal(t, "done", spans[0]["output_data"])

	t.Run("type from the content type", func(t *testing.T) {
		res := api.do(t, http.MethodPost, "/spans/"+spanID+"/attachments", api.a.key, map[string]any{"content_type": "image/webp", "size": 3})
		require.Equal(t, http.StatusOK, res.status, string(res.raw))
		var up uploaded
		res.decode(t, &up)
		assert.True(t, strings.HasSuffix(up.ID, ".webp"), up.ID)
		status, _, body := httpDo(t, http.MethodPut, up.UploadURL, []byte("RIF"), uploadHeader(up))
		require.Equal(t, http.StatusOK, status, string(body))
		got := api.listAttachments(t, api.a, spanID)
		require.Equal(t, 3, got.Count)
		assert.Equal(t, up.ID, got.Attachments[2].ID)
		assert.Equal(t, "image", got.Attachments[2].Type)
	})
}

// TestAttachmentUploadSizeBound is issue 11: an upload declared 100 bytes could PUT 12 MiB,
// and the listing then said 100. The length is signed now, so the presigned URL refuses any
// other length, and the listing reports what S3 stored.
func TestAttachmentUploadSizeBound(t *testing.T) {
	api := newTestAPI(t)
	const declared = 100
	tests := []struct {
		name   string
		send   int // bytes PUT, with the answer's headers
		status int
	}{
		{name: "12 MiB", send: 12 << 20, status: http.StatusForbidden},
		{name: "just over the limit", send: testAttachmentMaxBytes + 1, status: http.StatusForbidden},
		{name: "one byte more", send: declared + 1, status: http.StatusForbidden},
		{name: "one byte less", send: declared - 1, status: http.StatusForbidden},
		{name: "exactly the declared size", send: declared, status: http.StatusOK},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spanID, _ := api.postSpan(t, api.a, map[string]any{}, nil)
			res := api.do(t, http.MethodPost, "/spans/"+spanID+"/attachments", api.a.key,
				map[string]any{"content_type": "image/png", "size": declared})
			require.Equal(t, http.StatusOK, res.status, string(res.raw))
			var up uploaded
			res.decode(t, &up)
			require.Equal(t, map[string]string{"Content-Type": "image/png", "Content-Length": "100"}, up.Headers)

			payload := bytes.Repeat([]byte{7}, tt.send)
			status, _, body := httpDo(t, up.Method, up.UploadURL, payload, uploadHeader(up))
			require.Equal(t, tt.status, status, string(body))

			api.s3.Reset()
			got := api.listAttachments(t, api.a, spanID)
			assert.Equal(t, 1, api.s3.Count("ListObjectsV2"), "one listing for the sizes")
			assert.Zero(t, api.s3.Count("HeadObject"), "no request per attachment")
			if tt.status != http.StatusOK {
				assert.Zero(t, got.Count, "a refused upload stored nothing and is not listed")
				assert.Empty(t, got.Attachments)
				return
			}
			require.Equal(t, 1, got.Count)
			assert.Equal(t, up.ID, got.Attachments[0].ID)
			assert.EqualValues(t, declared, got.Attachments[0].Size)
			status, _, body = httpDo(t, http.MethodGet, got.Attachments[0].URL, nil, nil)
			require.Equal(t, http.StatusOK, status, string(body))
			assert.Equal(t, payload, body)
		})
	}

	t.Run("never uploaded", func(t *testing.T) {
		spanID, _ := api.postSpan(t, api.a, map[string]any{}, nil)
		res := api.do(t, http.MethodPost, "/spans/"+spanID+"/attachments", api.a.key,
			map[string]any{"content_type": "image/png", "size": declared})
		require.Equal(t, http.StatusOK, res.status, string(res.raw))
		got := api.listAttachments(t, api.a, spanID)
		assert.Zero(t, got.Count)
		assert.Empty(t, got.Attachments)
	})

	t.Run("the listing reports the stored size, not the recorded one", func(t *testing.T) {
		spanID, _ := api.postSpan(t, api.a, map[string]any{}, nil)
		res := api.do(t, http.MethodPost, "/spans/"+spanID+"/attachments", api.a.key,
			map[string]any{"content_type": "image/png", "size": declared})
		require.Equal(t, http.StatusOK, res.status, string(res.raw))
		var up uploaded
		res.decode(t, &up)
		// An object of another size under the recorded key, as a URL signed before the fix
		// could leave.
		require.NoError(t, api.blobs.Put(t.Context(), up.Key, []byte("seven b"), "image/png"))
		got := api.listAttachments(t, api.a, spanID)
		require.Equal(t, 1, got.Count)
		assert.EqualValues(t, 7, got.Attachments[0].Size)
	})

	t.Run("a span without attachments sends no S3 listing", func(t *testing.T) {
		spanID, _ := api.postSpan(t, api.a, map[string]any{}, nil)
		api.s3.Reset()
		assert.Zero(t, api.listAttachments(t, api.a, spanID).Count)
		assert.Zero(t, api.s3.Count("ListObjectsV2"))
	})
}

func TestAttachmentsBadInput(t *testing.T) {
	api := newTestAPI(t)
	spanA, _ := api.postSpan(t, api.a, map[string]any{}, nil)
	spanB, _ := api.postSpan(t, api.b, map[string]any{"attachments": []any{map[string]any{"base64": base64.StdEncoding.EncodeToString(testPNG)}}}, nil)
	valid := map[string]any{"type": "file", "content_type": "text/plain", "size": 1}
	tests := []struct {
		name         string
		method, path string
		key          string
		body         any
		status       int
		code         string
	}{
		{"list: unknown span", "GET", "/spans/" + uuid.NewString() + "/attachments", api.a.key, nil, 404, "not_found"},
		{"list: another project's span", "GET", "/spans/" + spanB + "/attachments", api.a.key, nil, 404, "not_found"},
		{"list: invalid span id", "GET", "/spans/not-a-uuid/attachments", api.a.key, nil, 400, "invalid_request"},
		{"list: no key", "GET", "/spans/" + spanA + "/attachments", "", nil, 401, "unauthenticated"},
		{"upload: unknown span", "POST", "/spans/" + uuid.NewString() + "/attachments", api.a.key, valid, 404, "not_found"},
		{"upload: another project's span", "POST", "/spans/" + spanB + "/attachments", api.a.key, valid, 404, "not_found"},
		{"upload: invalid span id", "POST", "/spans/x%20y/attachments", api.a.key, valid, 400, "invalid_request"},
		{"upload: missing content_type", "POST", "/spans/" + spanA + "/attachments", api.a.key, map[string]any{"type": "file", "size": 1}, 400, "invalid_request"},
		{"upload: bad content_type", "POST", "/spans/" + spanA + "/attachments", api.a.key, map[string]any{"content_type": "png"}, 400, "invalid_request"},
		{"upload: not JSON", "POST", "/spans/" + spanA + "/attachments", api.a.key, "{", 400, "invalid_request"},
		{"upload: no key", "POST", "/spans/" + spanA + "/attachments", "", valid, 401, "unauthenticated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := api.do(t, tt.method, tt.path, tt.key, tt.body)
			assert.Equal(t, tt.status, res.status, string(res.raw))
			var body wire.ErrorBody
			res.decode(t, &body)
			assert.Equal(t, tt.code, string(body.Error.Code))
			assert.NotEmpty(t, body.Error.Message)
			assert.NotEmpty(t, body.Error.RequestID)
		})
	}

	// Nothing was recorded on B's span by A's attempts.
	assert.Equal(t, 1, api.listAttachments(t, api.b, spanB).Count)
}

// TestAttachmentUploadSize: an upload must declare its size, from 1 to the limit, since the
// size is what its URL is signed for; anything else is a 400 in the shared error shape, and
// nothing is recorded on the span.
func TestAttachmentUploadSize(t *testing.T) {
	api := newTestAPI(t)
	spanID, _ := api.postSpan(t, api.a, map[string]any{}, nil)
	limit := fmt.Sprintf("from 1 to %d", testAttachmentMaxBytes)
	tests := []struct {
		name    string
		body    map[string]any
		status  int
		message string // substring of the error message
	}{
		{name: "missing", body: map[string]any{"content_type": "image/png"}, status: 400, message: "size is required"},
		{name: "null", body: map[string]any{"content_type": "image/png", "size": nil}, status: 400, message: "size is required"},
		{name: "zero", body: map[string]any{"content_type": "image/png", "size": 0}, status: 400, message: "size must be " + limit + " bytes, not 0"},
		{name: "negative", body: map[string]any{"content_type": "image/png", "size": -1}, status: 400, message: "size must be " + limit + " bytes, not -1"},
		{name: "one over the limit", body: map[string]any{"content_type": "image/png", "size": testAttachmentMaxBytes + 1}, status: 400,
			message: fmt.Sprintf("size must be %s bytes, not %d", limit, testAttachmentMaxBytes+1)},
		{name: "far over the limit", body: map[string]any{"content_type": "image/png", "size": int64(1) << 40}, status: 400, message: limit},
		{name: "fractional", body: map[string]any{"content_type": "image/png", "size": 1.5}, status: 400, message: "size"},
		{name: "a string", body: map[string]any{"content_type": "image/png", "size": "100"}, status: 400, message: "size"},
		{name: "one byte", body: map[string]any{"content_type": "image/png", "size": 1}, status: 200},
		{name: "the limit", body: map[string]any{"content_type": "image/png", "size": testAttachmentMaxBytes}, status: 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := api.do(t, http.MethodPost, "/spans/"+spanID+"/attachments", api.a.key, tt.body)
			require.Equal(t, tt.status, res.status, string(res.raw))
			if tt.status == http.StatusOK {
				var up uploaded
				res.decode(t, &up)
				assert.Equal(t, fmt.Sprint(tt.body["size"]), up.Headers["Content-Length"])
				return
			}
			var body wire.ErrorBody
			res.decode(t, &body)
			assert.Equal(t, "invalid_request", string(body.Error.Code))
			assert.Contains(t, body.Error.Message, tt.message)
			assert.NotEmpty(t, body.Error.RequestID)
		})
	}

	// Only the accepted requests were recorded on the span.
	res := api.do(t, http.MethodGet, "/spans?id="+spanID, api.a.key, nil)
	require.Equal(t, http.StatusOK, res.status, string(res.raw))
	var spans []wire.Span
	res.decode(t, &spans)
	require.Len(t, spans, 1)
	var sizes []int64
	for _, a := range spans[0].Attachments {
		sizes = append(sizes, a.Size)
	}
	assert.Equal(t, []int64{1, testAttachmentMaxBytes}, sizes)
}

// TestAttachmentsServedSafely is issue 25: any key, an ingest key included, could store HTML
// that the bucket then served as text/html. A type a browser would run is stored as
// application/octet-stream, at upload and at extraction, and every URL makes S3 answer with a
// signed Content-Type and Content-Disposition: a download, but for images, audio, video and
// PDF, which are shown in place. The embedded S3 adds nosniff, which S3 cannot.
func TestAttachmentsServedSafely(t *testing.T) {
	api := newTestAPI(t)
	html := []byte("<!DOCTYPE html><html><body><script>alert(document.domain)</script></body></html>")
	svg := []byte(`<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`)
	b64 := base64.StdEncoding.EncodeToString

	type served struct {
		contentType, disposition string // the answer's headers
		body                     []byte
	}
	// check lists the span's attachments and fetches each, as a browser opening it would.
	check := func(t *testing.T, spanID string, want []served) listed {
		t.Helper()
		got := api.listAttachments(t, api.a, spanID)
		require.Len(t, got.Attachments, len(want))
		for i, w := range want {
			a := got.Attachments[i]
			assert.Equal(t, w.contentType, a.ContentType, "the listing says what is served")
			status, header, body := httpDo(t, http.MethodGet, a.URL, nil, nil)
			require.Equal(t, http.StatusOK, status, string(body))
			assert.Equal(t, w.body, body)
			assert.Equal(t, w.contentType, header.Get("Content-Type"))
			assert.Equal(t, w.disposition, header.Get("Content-Disposition"))
			assert.Equal(t, "nosniff", header.Get("X-Content-Type-Options"))
		}
		return got
	}

	uploads := []struct {
		name, contentType, label string
		body                     []byte
		stored                   string // the type the upload must send and is stored with
		// disposition is the answer's; "id" stands for "attachment; filename=<the id>", and ""
		// for "inline; filename=<the id>".
		disposition string
	}{
		{"HTML", "text/html; charset=utf-8", "page", html, "application/octet-stream", "attachment; filename=page.bin"},
		{"SVG", "image/svg+xml", "", svg, "application/octet-stream", "id"},
		{"XHTML", "application/xhtml+xml", "doc.xhtml", html, "application/octet-stream", "attachment; filename=doc.xhtml"},
		{"JavaScript", "text/javascript", "app.js", []byte("alert(1)"), "application/octet-stream", "attachment; filename=app.js"},
		{"plain text", "text/plain", "notes", []byte("some notes"), "text/plain", "attachment; filename=notes.txt"},
		{"a PNG", "image/png", "chart", testPNG, "image/png", "inline; filename=chart.png"},
		{"a PDF", "application/pdf", "report.pdf", []byte("%PDF-1.7"), "application/pdf", "inline; filename=report.pdf"},
		{"audio", "audio/mpeg", "", []byte("ID3"), "audio/mpeg", ""},
		{"a name no header can hold", "text/plain", "résumé \"final\"\r\nX: 1", []byte("cv"), "text/plain",
			`attachment; filename*=utf-8''r%C3%A9sum%C3%A9%20%22final%22%0D%0AX%3A%201.txt`},
	}
	for _, tt := range uploads {
		t.Run("upload of "+tt.name, func(t *testing.T) {
			spanID, _ := api.postSpan(t, api.a, map[string]any{}, nil)
			res := api.do(t, http.MethodPost, "/spans/"+spanID+"/attachments", api.a.key,
				map[string]any{"content_type": tt.contentType, "label": tt.label, "size": len(tt.body)})
			require.Equal(t, http.StatusOK, res.status, string(res.raw))
			var up uploaded
			res.decode(t, &up)
			require.Equal(t, tt.stored, up.Headers["Content-Type"])
			// The type the upload declared is refused by the signature when it is not the stored one.
			if tt.stored != tt.contentType {
				status, _, _ := httpDo(t, http.MethodPut, up.UploadURL, tt.body, http.Header{"Content-Type": {tt.contentType}})
				require.Equal(t, http.StatusForbidden, status)
			}
			status, _, body := httpDo(t, http.MethodPut, up.UploadURL, tt.body, uploadHeader(up))
			require.Equal(t, http.StatusOK, status, string(body))
			disposition := tt.disposition
			if disposition == "id" {
				disposition = "attachment; filename=" + up.ID
			}
			if disposition == "" {
				disposition = "inline; filename=" + up.ID
			}
			check(t, spanID, []served{{tt.stored, disposition, tt.body}})
		})
	}

	t.Run("extracted at ingestion", func(t *testing.T) {
		spanID, _ := api.postSpan(t, api.a, map[string]any{"attachments": []any{
			map[string]any{"type": "file", "label": "declared.html", "base64": "data:text/html;base64," + b64(html)},
			map[string]any{"type": "file", "label": "sniffed", "base64": b64(html)},
			map[string]any{"type": "image", "label": "drawn", "base64": b64(svg), "content_type": "image/svg+xml"},
			map[string]any{"type": "image", "label": "photo", "base64": b64(testPNG)},
		}}, nil)
		got := check(t, spanID, []served{
			{"application/octet-stream", "attachment; filename=declared.html", html},
			{"application/octet-stream", "attachment; filename=sniffed.bin", html},
			{"application/octet-stream", "attachment; filename=drawn.bin", svg},
			{"image/png", "inline; filename=photo.png", testPNG},
		})
		for _, a := range got.Attachments[:3] {
			assert.True(t, strings.HasSuffix(a.ID, ".bin"), "stored as bytes: %s", a.ID)
		}
	})

	t.Run("stored before the fix", func(t *testing.T) {
		// An attachment recorded and stored as text/html, as the routes let in before: its URL
		// serves it as a download of bytes all the same.
		spanID, _ := api.postSpan(t, api.a, map[string]any{}, nil)
		key := trace.AttachmentPrefix(api.a.projectID, spanID) + "old.html"
		require.NoError(t, api.blobs.Put(t.Context(), key, html, "text/html"))
		require.NoError(t, api.svc.Attach(t.Context(), api.a.projectID, spanID,
			trace.Attachment{Type: "file", Key: key, ContentType: "text/html", Size: int64(len(html))}))
		check(t, spanID, []served{{"application/octet-stream", "attachment; filename=old.html", html}})
	})

	t.Run("the headers are signed", func(t *testing.T) {
		spanID, _ := api.postSpan(t, api.a, map[string]any{"attachments": []any{
			map[string]any{"base64": "data:text/html;base64," + b64(html)},
		}}, nil)
		signed := api.listAttachments(t, api.a, spanID).Attachments[0].URL
		for name, edit := range map[string]func(q url.Values){
			"disposition dropped":  func(q url.Values) { q.Del("response-content-disposition") },
			"shown inline":         func(q url.Values) { q.Set("response-content-disposition", "inline") },
			"content type dropped": func(q url.Values) { q.Del("response-content-type") },
			"served as HTML":       func(q url.Values) { q.Set("response-content-type", "text/html") },
		} {
			u, err := url.Parse(signed)
			require.NoError(t, err)
			q := u.Query()
			require.NotEmpty(t, q.Get("response-content-disposition"))
			edit(q)
			u.RawQuery = q.Encode()
			status, _, body := httpDo(t, http.MethodGet, u.String(), nil, nil)
			assert.Equal(t, http.StatusForbidden, status, "%s: %s", name, body)
		}
	})
}
