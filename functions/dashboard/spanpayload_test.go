package dashboard

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/blob"
	"github.com/plumehq/plume/shared/trace"
)

func TestReadPayload(t *testing.T) {
	p := func(s string) *string { return &s }
	tests := []struct {
		name string
		in   *string
		want payload
	}{
		{"absent", nil, payload{}},
		{"text", p("hello"), payload{Present: true, Text: shown{Text: "hello", Present: true}}},
		{"not JSON after all", p("[1, 2"), payload{Present: true, Text: shown{Text: "[1, 2", Present: true}}},
		{"other JSON", p(`{"a":1}`), payload{Present: true, JSON: shown{Text: "{\n  \"a\": 1\n}", Present: true}}},
		{"an array without roles", p(`[{"content":"x"}]`), payload{Present: true, JSON: shown{Text: "[\n  {\n    \"content\": \"x\"\n  }\n]", Present: true}}},
		{"chat", p(`[{"role":"system","content":"be brief"},{"role":"user","content":[{"type":"text","text":"hi"},` +
			`{"type":"image_url","image_url":{"url":"data:image/png;base64,AAAA"}},{"type":"image_url","image_url":{"url":"https://img.example.com/a.png"}},` +
			`{"type":"image","source":{"type":"base64","data":"QUJD"}},{"type":"audio","x":1}]},{"role":"assistant","content":null,"tool_calls":[{"id":"c1"}]}]`),
			payload{Present: true, Messages: []message{
				{Role: "system", Parts: []part{{Text: "be brief"}}},
				{Role: "user", Parts: []part{{Text: "hi"}, {ImageNote: "Image (data URL, 26 bytes) not shown."}, {ImageURL: "https://img.example.com/a.png"},
					{ImageNote: "Image (base64, 4 bytes) not shown."}, {JSON: `{"type":"audio","x":1}`}}},
				{Role: "assistant", Parts: []part{{JSON: `{"tool_calls":[{"id":"c1"}]}`}}},
			}}},
		{"messages of a request", p(`{"model":"m","messages":[{"role":"user","content":"q"}]}`),
			payload{Present: true, Messages: []message{{Role: "user", Parts: []part{{Text: "q"}}}}}},
		{"javascript: image", p(`[{"role":"user","content":[{"type":"image_url","image_url":"javascript:alert(1)"}]}]`),
			payload{Present: true, Messages: []message{{Role: "user", Parts: []part{{ImageNote: "Image (19 bytes of reference) not shown."}}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := readPayload(tt.in, "x")
			tt.want.TestID = "x"
			assert.Equal(t, tt.want, got)
		})
	}

	t.Run("cut at the bound", func(t *testing.T) {
		long := strings.Repeat("a", maxShownBytes)
		got := readPayload(p(`[{"role":"user","content":"`+long+`"},{"role":"assistant","content":"more"}]`), "x")
		require.Len(t, got.Messages, 2)
		assert.Equal(t, long, got.Messages[0].Parts[0].Text)
		assert.Empty(t, got.Messages[1].Parts[0].Text)
		assert.Equal(t, 4, got.Omitted)
	})
}

func TestImageOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"https://bucket.s3.eu-west-1.amazonaws.com/k?X-Amz-Signature=1": "https://bucket.s3.eu-west-1.amazonaws.com",
		"http://127.0.0.1:9000/b/k":                                     "http://127.0.0.1:9000",
		"javascript:alert(1)":                                           "",
		"https://a;b.example.com/":                                      "",
		"https://user@example.com/":                                     "",
		"data:image/png;base64,AAAA":                                    "",
	} {
		assert.Equal(t, want, imageOrigin(in), in)
	}
}

// presignerFunc is a Presigner of a function.
type presignerFunc func(key string) (string, error)

func (f presignerFunc) PresignGet(_ context.Context, key string, _ time.Duration) (string, error) {
	return f(key)
}

// TestAttachmentOrigin: the origin is the one of the URLs the bucket's store presigns, by
// host (AWS's virtual-hosted addressing) or by path (an endpoint of its own); a presigner that
// fails or answers no http(s) URL fails the dashboard's build.
func TestAttachmentOrigin(t *testing.T) {
	store := func(endpoint string) *blob.Store {
		cfg := aws.Config{Region: "eu-west-1", Credentials: credentials.NewStaticCredentialsProvider("AKID", "secret", "")}
		if endpoint != "" {
			cfg.BaseEndpoint = aws.String(endpoint)
		}
		return blob.New(blob.NewClient(cfg, false), "my-bucket")
	}
	for endpoint, want := range map[string]string{
		"":                       "https://my-bucket.s3.eu-west-1.amazonaws.com",
		"http://127.0.0.1:4566":  "http://127.0.0.1:4566",
		"https://s3.example.com": "https://s3.example.com",
	} {
		got, err := AttachmentOrigin(t.Context(), store(endpoint))
		require.NoError(t, err, endpoint)
		assert.Equal(t, want, got, endpoint)
		// An attachment's URL, as GET /spans/{span_id}/attachments presigns it, has that origin.
		u, err := store(endpoint).PresignGet(t.Context(), trace.AttachmentPrefix("p1", "s1")+"a.png", time.Hour)
		require.NoError(t, err)
		assert.Equal(t, got, imageOrigin(u), endpoint)
	}

	_, err := AttachmentOrigin(t.Context(), presignerFunc(func(string) (string, error) { return "", errors.New("no credentials") }))
	assert.ErrorContains(t, err, "no credentials")
	_, err = AttachmentOrigin(t.Context(), presignerFunc(func(string) (string, error) { return "data:,x", nil }))
	assert.Error(t, err)
}

// TestAttachmentsInline: an image attachment at the bucket's origin is an <img> in the span's
// fragment; an image at another origin, and a file that is not an image, are links; without
// a bucket every attachment is a link. Every page's CSP allows images from that origin only.
func TestAttachmentsInline(t *testing.T) {
	const bucket = "http://127.0.0.1:4566"
	list := api.AttachmentList{Attachments: []api.Attachment{
		{ID: "a.png", Label: `shot <img src=x onerror=alert(1)>`, ContentType: "image/png", URL: bucket + "/b/a.png?X-Amz-Signature=1", Size: 3},
		{ID: "b.png", ContentType: "image/png", URL: "https://elsewhere.example.com/b/b.png?X-Amz-Signature=1", Size: 4},
		{ID: "c.png", ContentType: "image/png", URL: bucket + ".evil.example.com/c.png", Size: 4},
		{ID: "d.pdf", ContentType: "application/pdf", URL: bucket + "/b/d.pdf", Size: 5},
	}}
	render := func(s *server) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		s.render(w, httptest.NewRequest(http.MethodGet, "/ui/traces/t/spans/s", nil), http.StatusOK, "span-fragment",
			page{Data: spanData{Attachments: s.attachments(list)}})
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
		return w
	}

	s := newServer(Deps{ImageOrigin: bucket})
	inline := map[string]bool{}
	for _, a := range s.attachments(list) {
		inline[a.URL] = a.Inline
	}
	assert.Equal(t, map[string]bool{
		list.Attachments[0].URL: true, list.Attachments[1].URL: false, list.Attachments[2].URL: false, list.Attachments[3].URL: false,
	}, inline)
	w := render(s)
	body := w.Body.String()
	assert.Contains(t, body, `<img src="`+bucket+`/b/a.png?X-Amz-Signature=1" alt="shot &lt;img src=x onerror=alert(1)&gt;" loading="lazy" data-testid="attachment-image">`)
	assert.Equal(t, 1, strings.Count(body, "<img"), "the image of the bucket only")
	assert.Equal(t, 3, strings.Count(body, `data-testid="attachment-link"`))
	assert.Contains(t, body, `<a href="https://elsewhere.example.com/b/b.png?X-Amz-Signature=1"`)
	assert.Equal(t, strings.Replace(contentSecurityPolicy, "img-src 'self';", "img-src 'self' "+bucket+";", 1), w.Header().Get("Content-Security-Policy"))

	none := render(newServer(Deps{}))
	assert.NotContains(t, none.Body.String(), "<img")
	assert.Equal(t, 4, strings.Count(none.Body.String(), `data-testid="attachment-link"`))
	assert.Equal(t, contentSecurityPolicy, none.Header().Get("Content-Security-Policy"))
	assert.Contains(t, contentSecurityPolicy, " img-src 'self'; ")
}

// TestImageOriginAskedByTheFirstPage: the bucket's origin is not asked for when the dashboard
// starts, but by the first page; a failure leaves that page's images to the dashboard and is
// asked again by the next; an answer is kept.
func TestImageOriginAskedByTheFirstPage(t *testing.T) {
	const bucket = "http://127.0.0.1:9000"
	var asked int
	fail := true
	s := newServer(Deps{ImageOriginOf: func() (string, error) {
		asked++
		if fail {
			return "", errors.New("no credentials")
		}
		return bucket + "/b/plume-dashboard/origin?X-Amz-Signature=1", nil
	}})
	assert.Zero(t, asked, "not at the start")
	csp := func() string {
		h := http.Header{}
		s.securityHeaders(h)
		return h.Get("Content-Security-Policy")
	}
	assert.Equal(t, contentSecurityPolicy, csp(), "images from the dashboard only after a failure")
	assert.Equal(t, 1, asked)
	fail = false
	assert.Equal(t, policyWith(bucket), csp())
	assert.Equal(t, policyWith(bucket), csp())
	assert.Equal(t, bucket, s.pageOrigins().img)
	assert.Equal(t, 2, asked, "asked again after the failure, then kept")
}
