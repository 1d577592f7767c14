package trace

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/testlog"
	"github.com/plumehq/plume/shared/blob/blobtest"
	"github.com/plumehq/plume/shared/safefetch"
)

// pngBytes is a real PNG signature followed by a few bytes: enough for content sniffing.
var pngBytes = append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{7}, 40)...)

var pngB64 = base64.StdEncoding.EncodeToString(pngBytes)

// fileServer serves /image.png (pngBytes), /big (limit+1 bytes, no Content-Length),
// /missing (404), /slow (never answers) and /redirect?to=<url>.
func fileServer(t *testing.T, limit int) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /image.png", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(pngBytes)
	})
	mux.HandleFunc("GET /big", func(w http.ResponseWriter, _ *http.Request) {
		w.(http.Flusher).Flush() // chunked: the size is only known while reading
		_, _ = w.Write(bytes.Repeat([]byte("x"), limit+1))
	})
	mux.HandleFunc("GET /big-declared", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(limit+1))
		_, _ = w.Write(bytes.Repeat([]byte("x"), limit+1))
	})
	mux.HandleFunc("GET /slow", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // never answers: the client gives up
	})
	mux.HandleFunc("GET /redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// newExtractor returns an extractor whose warnings (a URL not fetched) go to t's output.
func newExtractor(t *testing.T, blobs Blobs, cfg ExtractorConfig) *Extractor {
	t.Helper()
	testlog.Capture(t)
	e, err := NewExtractor(blobs, cfg)
	require.NoError(t, err)
	return e
}

func TestExtract(t *testing.T) {
	store, counter, _ := blobtest.New(t)
	const limit = 1024
	srv := fileServer(t, limit)
	local := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) // same server, not allow-listed
	e := newExtractor(t, store, ExtractorConfig{
		// Long enough for every fetch that should succeed however busy the machine: only /slow
		// meets it.
		Hosts: []string{"127.0.0.1"}, MaxBytes: limit, MaxPerSpan: 3, FetchTimeout: 2 * time.Second,
	})
	big := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("y"), limit+1))

	type want struct {
		typ, label, contentType string
		body                    []byte
	}
	tests := []struct {
		name       string
		attributes string
		output     string
		want       []want
		// wantAttrs and wantOutput are the rewritten JSON, with NAME<i> for the object name of
		// the i-th stored attachment; "" means unchanged.
		wantAttrs, wantOutput string
	}{
		{
			name:       "base64 in attributes",
			attributes: `{"model":"gpt-4o","attachments":[{"type":"image","label":"chart","base64":"` + pngB64 + `"}],"z":1}`,
			want:       []want{{"image", "chart", "image/png", pngBytes}},
			wantAttrs:  `{"model":"gpt-4o","attachments":[{"attachment":"NAME0","label":"chart","type":"image"}],"z":1}`,
		},
		{
			name:       "data URL in attributes, media type from the URL",
			attributes: `{"attachments":[{"type":"file","label":"notes","base64":"data:text/plain;base64,` + base64.StdEncoding.EncodeToString([]byte("hello notes")) + `"}]}`,
			want:       []want{{"file", "notes", "text/plain", []byte("hello notes")}},
			wantAttrs:  `{"attachments":[{"attachment":"NAME0","label":"notes","type":"file"}]}`,
		},
		{
			name:       "unpadded URL-safe base64 with a declared media type",
			attributes: `{"attachments":[{"base64":"` + base64.RawURLEncoding.EncodeToString([]byte("a,b\n1,2\n")) + `","mime_type":"text/csv"}]}`,
			want:       []want{{"file", "", "text/csv", []byte("a,b\n1,2\n")}},
			wantAttrs:  `{"attachments":[{"attachment":"NAME0","mime_type":"text/csv"}]}`,
		},
		{
			name:       "allow-listed URL is fetched and kept as reference",
			attributes: `{"attachments":[{"type":"image","label":"remote","url":"` + srv.URL + `/image.png"}]}`,
			want:       []want{{"image", "remote", "image/png", pngBytes}},
			wantAttrs:  `{"attachments":[{"attachment":"NAME0","label":"remote","type":"image","url":"` + srv.URL + `/image.png"}]}`,
		},
		{
			name:       "URL of a host not allow-listed is not fetched",
			attributes: `{"attachments":[{"type":"image","url":"` + local + `/image.png"}]}`,
		},
		{
			name:       "redirect to a host not allow-listed",
			attributes: `{"attachments":[{"url":"` + srv.URL + `/redirect?to=` + url.QueryEscape(local+"/image.png") + `"}]}`,
			wantAttrs:  `{"attachments":[{"error":"not fetched: redirect to a host that is not allowed","url":"` + srv.URL + `/redirect?to=` + url.QueryEscape(local+"/image.png") + `"}]}`,
		},
		{
			name:       "redirect to an allowed host",
			attributes: `{"attachments":[{"url":"` + srv.URL + `/redirect?to=` + url.QueryEscape(srv.URL+"/image.png") + `"}]}`,
			want:       []want{{"image", "", "image/png", pngBytes}},
			wantAttrs:  `{"attachments":[{"attachment":"NAME0","url":"` + srv.URL + `/redirect?to=` + url.QueryEscape(srv.URL+"/image.png") + `"}]}`,
		},
		{
			name:       "fetch failures keep the URL with a note",
			attributes: `{"attachments":[{"url":"` + srv.URL + `/missing"},{"url":"` + srv.URL + `/big"},{"url":"` + srv.URL + `/slow"}]}`,
			wantAttrs: `{"attachments":[{"error":"not fetched: status 404","url":"` + srv.URL + `/missing"},` +
				`{"error":"not fetched: larger than 1024 bytes","url":"` + srv.URL + `/big"},` +
				`{"error":"not fetched: no answer within 2s","url":"` + srv.URL + `/slow"}]}`,
		},
		{
			name:       "declared oversize fetch",
			attributes: `{"attachments":[{"url":"` + srv.URL + `/big-declared"}]}`,
			wantAttrs:  `{"attachments":[{"error":"not fetched: larger than 1024 bytes","url":"` + srv.URL + `/big-declared"}]}`,
		},
		{
			name:       "oversize, invalid and surplus inline payloads are dropped with a note",
			attributes: `{"attachments":[{"base64":"` + big + `"},{"base64":"!!!"},{"base64":"` + pngB64 + `"},{"base64":"` + pngB64 + `","label":"fourth"}]}`,
			want:       []want{{"image", "", "image/png", pngBytes}},
			wantAttrs: `{"attachments":[{"error":"not stored: larger than 1024 bytes"},{"error":"not stored: invalid base64"},` +
				`{"attachment":"NAME0"},{"error":"not stored: more than 3 attachments in one span","label":"fourth"}]}`,
		},
		{
			name:       "elements that are not attachments stay as sent",
			attributes: `{"attachments":[1,"x",{"type":"image","label":"no payload"},null]}`,
		},
		{
			name:       "one attachment, not in an array",
			attributes: `{"attachments":{"base64":"` + pngB64 + `"}}`,
			want:       []want{{"image", "", "image/png", pngBytes}},
			wantAttrs:  `{"attachments":{"attachment":"NAME0"}}`,
		},
		{
			name:       "attachments that is neither an array nor an object",
			attributes: `{"attachments":"` + pngB64 + `"}`,
		},
		{
			name:       "output_data: OpenAI image part with a data URL",
			output:     `[{"type":"image_url","image_url":{"url":"data:image/png;base64,` + pngB64 + `","detail":"low"}}]`,
			want:       []want{{"image", "", "image/png", pngBytes}},
			wantOutput: `[{"attachment":"NAME0","image_url":{"detail":"low"},"type":"image_url"}]`,
		},
		{
			name:       "output_data: base64 object, Anthropic source and chat message parts",
			output:     `[{"type":"image","base64":"` + pngB64 + `"}, {"role":"assistant","content":[{"type":"text","text":"see"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"` + pngB64 + `"}}]}]`,
			want:       []want{{"image", "", "image/png", pngBytes}, {"image", "", "image/png", pngBytes}},
			wantOutput: `[{"attachment":"NAME0","type":"image"},{"content":[{"type":"text","text":"see"},{"attachment":"NAME1","source":{"media_type":"image/png","type":"base64"},"type":"image"}],"role":"assistant"}]`,
		},
		{
			name:   "output_data: URL objects that are not files stay as sent",
			output: `[{"title":"docs","url":"` + srv.URL + `/image.png"}]`,
		},
		{
			name:       "output_data: image URL of an allowed host is fetched",
			output:     `[{"type":"image_url","image_url":"` + srv.URL + `/image.png"}]`,
			want:       []want{{"image", "", "image/png", pngBytes}},
			wantOutput: `[{"attachment":"NAME0","image_url":"` + srv.URL + `/image.png","type":"image_url"}]`,
		},
		{
			name:   "output_data that is not an array",
			output: `{"type":"image","base64":"` + pngB64 + `"}`,
		},
		{
			name:       "attributes and output_data numbered in order",
			attributes: `{"attachments":[{"base64":"` + base64.StdEncoding.EncodeToString([]byte("first")) + `","content_type":"text/plain"}]}`,
			output:     `[{"type":"file","base64":"` + base64.StdEncoding.EncodeToString([]byte("second")) + `","content_type":"text/plain"}]`,
			want:       []want{{"file", "", "text/plain", []byte("first")}, {"file", "", "text/plain", []byte("second")}},
			wantAttrs:  `{"attachments":[{"attachment":"NAME0","content_type":"text/plain"}]}`,
			wantOutput: `[{"attachment":"NAME1","content_type":"text/plain","type":"file"}]`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			sp := Span{ID: "7d7a3b7e-53cf-4fd8-9f5e-3f3f0a0b0c0d", Attributes: json.RawMessage(`{}`)}
			if tt.attributes != "" {
				sp.Attributes = json.RawMessage(tt.attributes)
			}
			if tt.output != "" {
				sp.OutputData = new(tt.output)
			}
			orig := sp
			spans := []Span{sp}
			require.NoError(t, e.Extract(ctx, "p1", spans))
			got := spans[0]

			require.Len(t, got.Attachments, len(tt.want))
			names := make([]string, len(tt.want))
			for i, w := range tt.want {
				a := got.Attachments[i]
				assert.Equal(t, w.typ, a.Type)
				assert.Equal(t, w.label, a.Label)
				assert.Equal(t, w.contentType, strings.Split(a.ContentType, ";")[0])
				assert.Equal(t, int64(len(w.body)), a.Size)
				assert.Regexp(t, `^attachments/project=p1/span=`+sp.ID+`/\d+-[0-9a-f]{16}\.(png|txt|csv)$`, a.Key)
				body, err := store.Get(ctx, a.Key)
				require.NoError(t, err)
				assert.Equal(t, w.body, body)
				names[i] = a.Key[strings.LastIndex(a.Key, "/")+1:]
			}
			expand := func(s string) string {
				for i, n := range names {
					s = strings.ReplaceAll(s, fmt.Sprintf("NAME%d", i), n)
				}
				return s
			}
			wantAttrs := orig.Attributes
			if tt.wantAttrs != "" {
				wantAttrs = json.RawMessage(expand(tt.wantAttrs))
			}
			assert.Equal(t, string(wantAttrs), string(got.Attributes), "attributes")
			assert.True(t, json.Valid(got.Attributes))
			if tt.output != "" {
				want := tt.output
				if tt.wantOutput != "" {
					want = expand(tt.wantOutput)
				}
				assert.Equal(t, want, *got.OutputData, "output_data")
			}
			if !strings.Contains(tt.name, "neither") {
				assert.NotContains(t, string(got.Attributes), pngB64[:20], "no bytes left in attributes")
			}

			// Idempotent: extracting the original span again writes the same keys.
			again := []Span{orig}
			require.NoError(t, e.Extract(ctx, "p1", again))
			assert.Equal(t, got.Attachments, again[0].Attachments)
			assert.Equal(t, string(got.Attributes), string(again[0].Attributes))
		})
	}
	assert.Positive(t, counter.Count("PutObject"))
}

func TestExtractNoAllowList(t *testing.T) {
	store, counter, _ := blobtest.New(t)
	srv := fileServer(t, 10)
	e := newExtractor(t, store, ExtractorConfig{})
	attrs := `{"attachments":[{"type":"image","url":"` + srv.URL + `/image.png"}]}`
	spans := []Span{{ID: "s", Attributes: json.RawMessage(attrs)}}
	require.NoError(t, e.Extract(context.Background(), "p", spans))
	assert.Equal(t, attrs, string(spans[0].Attributes), "kept as sent: a URL is a reference already")
	assert.Empty(t, spans[0].Attachments)
	assert.Zero(t, counter.Count("PutObject"))
}

// TestExtractRefusesNonPublicAddresses: a host allowed by a wildcard that resolves to a
// loopback or private address is refused (127.0.0.1 itself is allowed in TestExtract, where it
// is listed exactly).
func TestExtractRefusesNonPublicAddresses(t *testing.T) {
	store, counter, _ := blobtest.New(t)
	srv := fileServer(t, 10)
	_, port, _ := strings.Cut(strings.TrimPrefix(srv.URL, "http://"), ":")
	e := newExtractor(t, store, ExtractorConfig{Hosts: []string{"*.example.com"}})
	tests := []struct{ host, ip string }{
		{"cdn.example.com", "127.0.0.1"},
		{"meta.example.com", "169.254.169.254"},
		{"intra.example.com", "10.0.0.7"},
		{"mapped.example.com", "::ffff:127.0.0.1"},
	}
	for _, tt := range tests {
		f, err := safefetch.New(safefetch.Config{Hosts: []string{"*.example.com"}, Resolver: resolverFunc(
			func(context.Context, string, string) ([]netip.Addr, error) {
				return []netip.Addr{netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr(tt.ip)}, nil
			})})
		require.NoError(t, err)
		e.fetcher = f
		attrs := `{"attachments":[{"url":"http://` + tt.host + `:` + port + `/image.png"}]}`
		spans := []Span{{ID: "s", Attributes: json.RawMessage(attrs)}}
		require.NoError(t, e.Extract(context.Background(), "p", spans))
		assert.Equal(t, `{"attachments":[{"error":"not fetched: the host resolves to a non-public address","url":"http://`+tt.host+`:`+port+`/image.png"}]}`,
			string(spans[0].Attributes), tt.host)
		assert.Empty(t, spans[0].Attachments)
	}
	assert.Zero(t, counter.Count("PutObject"))
}

// resolverFunc is a safefetch.Resolver.
type resolverFunc func(ctx context.Context, network, host string) ([]netip.Addr, error)

func (f resolverFunc) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	return f(ctx, network, host)
}

func TestNewExtractorHosts(t *testing.T) {
	tests := []struct {
		hosts   []string
		ok      bool
		allowed map[string]bool // host -> allowed
	}{
		{hosts: []string{"cdn.example.com", " *.Images.Example.org ", "127.0.0.1", "[::1]", ""}, ok: true, allowed: map[string]bool{
			"cdn.example.com": true, "CDN.example.com.": true, "example.com": false, "a.images.example.org": true,
			"images.example.org": false, "127.0.0.1": true, "::1": true, "127.0.0.2": false, "evil.com": false,
		}},
		{hosts: []string{"https://cdn.example.com"}},
		{hosts: []string{"cdn.example.com:443"}},
		{hosts: []string{"cdn.example.com/x"}},
		{hosts: []string{"*"}},
		{hosts: []string{"*.10.0.0.1"}},
		{hosts: []string{"a..b"}},
	}
	for _, tt := range tests {
		e, err := NewExtractor(nil, ExtractorConfig{Hosts: tt.hosts})
		if !tt.ok {
			assert.Error(t, err, "%q", tt.hosts)
			continue
		}
		require.NoError(t, err)
		for host, want := range tt.allowed {
			got := e.fetcher.AllowsHost(host)
			assert.Equal(t, want, got, host)
		}
	}
}

// TestNoAttachmentsCostsNothing: spans without attachments are neither parsed nor copied.
func TestNoAttachmentsCostsNothing(t *testing.T) {
	store, counter, _ := blobtest.New(t)
	e := newExtractor(t, store, ExtractorConfig{Hosts: []string{"127.0.0.1"}})
	out := `[{"role":"assistant","content":"hi"}]`
	spans := []Span{
		{ID: "a", Attributes: json.RawMessage(`{"model":"gpt-4o","inputTokens":10}`), OutputData: &out},
		{ID: "b", Attributes: json.RawMessage(`{}`)},
	}
	ctx := context.Background()
	allocs := testing.AllocsPerRun(100, func() {
		if err := e.Extract(ctx, "p", spans); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs)
	assert.Zero(t, counter.Count("PutObject"))
}

// FuzzExtractRewrite: arbitrary attributes and output_data never panic; valid JSON stays valid
// (compact attributes stay compact); no inline bytes are left; unparseable input is unchanged.
func FuzzExtractRewrite(f *testing.F) {
	f.Add(`{"attachments":[{"type":"image","base64":"`+pngB64+`","label":"x"}]}`, `[{"type":"image_url","image_url":{"url":"data:image/png;base64,`+pngB64+`"}}]`, true)
	f.Add(`{"attachments":[{"url":"http://127.0.0.1/a.png"},{"base64":"!!"}],"attachments":[1]}`, `[{"role":"user","content":[{"type":"image","source":{"type":"base64","data":"AAAA"}}]}]`, false)
	f.Add(`{"a":{"attachments":[]},"attachments":[]}`, `[{"url":"data:,hello%20world"}]`, true)
	f.Add(`{"attachments":[{"base64":"data:text/plain,%zz"}]}`, ` [ {"base64" : "QUJD" } ] `, false)
	f.Add(`{"attachments":"x"}`, `["url","base64"]`, true)
	e, err := NewExtractor(nil, ExtractorConfig{Hosts: []string{"127.0.0.1"}, MaxBytes: 64, MaxPerSpan: 3, FetchTimeout: time.Second})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, attrs, output string, ok bool) {
		sp := Span{ID: "s", Attributes: json.RawMessage(attrs), OutputData: &output}
		cands := e.collect(&sp)
		for i, c := range cands {
			// Simulate the I/O: every other one is stored, the rest fail.
			if c.err == "" && (ok || i%2 == 0) {
				c.att = &Attachment{Type: "image", Key: AttachmentKey("p", "s", c.n, make([]byte, 8), "image/png")}
			} else if c.err == "" {
				c.err = "not fetched"
			}
		}
		e.apply(&sp, cands)
		if json.Valid([]byte(attrs)) {
			require.True(t, json.Valid(sp.Attributes), "attributes %s -> %s", attrs, sp.Attributes)
			var compact bytes.Buffer
			if json.Compact(&compact, []byte(attrs)) == nil && compact.String() == attrs {
				compact.Reset()
				require.NoError(t, json.Compact(&compact, sp.Attributes))
				require.Equal(t, compact.String(), string(sp.Attributes), "attributes stay compact")
			}
			if strings.HasPrefix(attrs, "{") {
				require.True(t, bytes.HasPrefix(sp.Attributes, []byte("{")), "attributes stay an object")
			}
		} else {
			require.Equal(t, attrs, string(sp.Attributes), "invalid attributes are not touched")
		}
		if json.Valid([]byte(output)) {
			require.True(t, json.Valid([]byte(*sp.OutputData)), "output_data %s -> %s", output, *sp.OutputData)
		} else {
			require.Equal(t, output, *sp.OutputData)
		}
		// Nothing inline is left: a second walk finds only remote URLs.
		e.walk(&sp, func(_ map[string]json.RawMessage, p payload) []byte {
			if !p.remote {
				t.Fatalf("inline attachment left after rewrite: attributes %s output_data %s", sp.Attributes, *sp.OutputData)
			}
			return nil
		})
	})
}
