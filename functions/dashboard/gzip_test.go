package dashboard_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chromiumAcceptEncoding is what Chromium sends.
const chromiumAcceptEncoding = "gzip, deflate, br, zstd"

// rawAnswer is an answer as it came over the wire: body not decoded.
type rawAnswer struct {
	Status int
	Header http.Header
	Body   []byte
}

// getRaw GETs path with b's cookies and the Accept-Encoding acceptEncoding (none when ""),
// with a transport that neither adds an Accept-Encoding nor decodes the body, as a browser
// that does not accept gzip would.
func (b *browser) getRaw(t *testing.T, path, acceptEncoding string) rawAnswer {
	t.Helper()
	c := &http.Client{Jar: b.jar, Transport: &http.Transport{DisableCompression: true},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	t.Cleanup(c.CloseIdleConnections)
	req, err := http.NewRequest("GET", b.f.srv.URL+path, nil)
	require.NoError(t, err)
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	res, err := c.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	if cl := res.Header.Get("Content-Length"); cl != "" {
		assert.Equal(t, strconv.Itoa(len(body)), cl, "Content-Length of %s", path)
	}
	return rawAnswer{Status: res.StatusCode, Header: res.Header, Body: body}
}

// decoded is a's body as the client reads it: gunzipped when its Content-Encoding is gzip.
func (a rawAnswer) decoded(t *testing.T) []byte {
	t.Helper()
	switch a.Header.Get("Content-Encoding") {
	case "":
		return a.Body
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(a.Body))
		require.NoError(t, err)
		out, err := io.ReadAll(zr)
		require.NoError(t, err, "the body is a whole gzip stream")
		return out
	default:
		t.Fatalf("Content-Encoding %q", a.Header.Get("Content-Encoding"))
		return nil
	}
}

func varies(h http.Header) bool {
	for _, v := range h.Values("Vary") {
		for f := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(f), "Accept-Encoding") {
				return true
			}
		}
	}
	return false
}

// TestPagesGzipped: a page, an error page and a fragment above web.GzipMinBytes are gzipped for a
// browser that accepts gzip, and sent as they are to one that does not or that refuses it;
// both say they vary with Accept-Encoding and decode to the same page.
func TestPagesGzipped(t *testing.T) {
	f := newFixture(t)
	traceID, _ := f.seedTrace(t, f.api.A.Key, "gzip", 30, nil)
	b := f.browser(t)
	b.signIn(t, f.api.A.Key)

	pages := []struct {
		name, path string
		status     int
		shows      string
	}{
		{"trace", "/ui/traces/" + traceID, http.StatusOK, `data-testid="span-tree"`},
		{"home", "/ui/", http.StatusOK, "<h1"},
		{"error page", "/ui/no-such-page", http.StatusNotFound, "There is no such page."},
	}
	tests := []struct {
		acceptEncoding string
		gzipped        bool
	}{
		{chromiumAcceptEncoding, true},
		{"gzip", true},
		{"GZIP;q=0.5", true},
		{"x-gzip", true},
		{"br, *;q=0.1", true},
		{"", false},
		{"identity", false},
		{"br, deflate", false},
		{"gzip;q=0", false},
		{"gzip; q=0.000, br", false},
		{"*;q=0", false},
		{"gzip;q=0, *", false}, // gzip named decides over *
		{"gzip;q=oops", false}, // not a weight: refused
		{"*, gzip;q=0", false},
	}
	for _, pg := range pages {
		identity := b.getRaw(t, pg.path, "identity")
		require.Equal(t, pg.status, identity.Status, "%s", identity.Body)
		require.Contains(t, string(identity.Body), pg.shows)
		require.Empty(t, identity.Header.Get("Content-Encoding"))
		require.Greater(t, len(identity.Body), 1<<10, "%s is above the threshold", pg.name)
		for _, tt := range tests {
			t.Run(pg.name+"/"+tt.acceptEncoding, func(t *testing.T) {
				a := b.getRaw(t, pg.path, tt.acceptEncoding)
				assert.Equal(t, pg.status, a.Status)
				assert.True(t, varies(a.Header), "Vary: %q", a.Header.Values("Vary"))
				assert.Equal(t, "text/html; charset=utf-8", a.Header.Get("Content-Type"))
				assert.Equal(t, identity.Header.Get("Content-Security-Policy"), a.Header.Get("Content-Security-Policy"))
				assert.Equal(t, "no-store", a.Header.Get("Cache-Control"))
				if tt.gzipped {
					assert.Equal(t, "gzip", a.Header.Get("Content-Encoding"))
					assert.Less(t, len(a.Body), len(identity.Body), "compressed")
				} else {
					assert.Empty(t, a.Header.Get("Content-Encoding"))
				}
				body := string(a.decoded(t))
				if pg.name == "error page" { // its request id differs
					body = requestID.ReplaceAllString(body, "")
					assert.Equal(t, requestID.ReplaceAllString(string(identity.Body), ""), body)
				} else {
					assert.Equal(t, string(identity.Body), body)
				}
			})
		}
	}

	gz, plain := b.getRaw(t, "/ui/traces/"+traceID, chromiumAcceptEncoding), b.getRaw(t, "/ui/traces/"+traceID, "")
	t.Logf("trace page of 31 spans: %d bytes, %d gzipped", len(plain.Body), len(gz.Body))
}

var requestID = regexp.MustCompile(`Request id: <code>[^<]*</code>`)

// TestSmallPageNotGzipped: an answer under the threshold (the criteria preview of an empty
// template, a fragment) is sent as it is even to a browser that accepts gzip.
func TestSmallPageNotGzipped(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	b.signIn(t, f.api.A.Key)
	a := b.getRaw(t, "/ui/judges/criteria-preview?template=", chromiumAcceptEncoding)
	require.Equal(t, http.StatusOK, a.Status, "%s", a.Body)
	assert.Less(t, len(a.Body), 1<<10)
	assert.Empty(t, a.Header.Get("Content-Encoding"))
	assert.Equal(t, strconv.Itoa(len(a.Body)), a.Header.Get("Content-Length"))
}

var assetLink = regexp.MustCompile(`(?:href|src)="(/ui/assets/app\.[0-9a-f]+\.(?:css|js|svg))"`)

// TestAssetsGzipped: the bundles are served gzipped to a browser that accepts gzip and as they
// are to one that does not, under the same hashed name, with the same long cache and no ETag;
// the icon, under the threshold, is never gzipped. Every answer varies with Accept-Encoding (the
// shared middleware says so of all of them).
func TestAssetsGzipped(t *testing.T) {
	f := newFixture(t)
	b := f.browser(t)
	login := b.getRaw(t, "/ui/login", "")
	links := assetLink.FindAllStringSubmatch(string(login.Body), -1)
	paths := map[string]string{}
	for _, m := range links {
		paths[m[1][strings.LastIndex(m[1], ".")+1:]] = m[1]
	}
	require.Contains(t, paths, "css", "%s", login.Body)
	require.Contains(t, paths, "js")
	require.Contains(t, paths, "svg")

	for ext, path := range paths {
		t.Run(ext, func(t *testing.T) {
			plain := b.getRaw(t, path, "")
			require.Equal(t, http.StatusOK, plain.Status)
			gz := b.getRaw(t, path, chromiumAcceptEncoding)
			require.Equal(t, http.StatusOK, gz.Status)
			refused := b.getRaw(t, path, "gzip;q=0")
			for _, a := range []rawAnswer{plain, gz, refused} {
				assert.Equal(t, "public, max-age=31536000, immutable", a.Header.Get("Cache-Control"))
				assert.Empty(t, a.Header.Get("ETag"))
				assert.Equal(t, plain.Header.Get("Content-Type"), a.Header.Get("Content-Type"))
				assert.Equal(t, "nosniff", a.Header.Get("X-Content-Type-Options"))
				assert.Equal(t, string(plain.Body), string(a.decoded(t)))
				assert.True(t, varies(a.Header))
			}
			assert.Empty(t, plain.Header.Get("Content-Encoding"))
			assert.Empty(t, refused.Header.Get("Content-Encoding"))
			if ext == "svg" {
				assert.Less(t, len(plain.Body), 1<<10)
				assert.Empty(t, gz.Header.Get("Content-Encoding"), "under the threshold")
				return
			}
			assert.Equal(t, "gzip", gz.Header.Get("Content-Encoding"))
			assert.Less(t, len(gz.Body), len(plain.Body)/2)
			t.Logf("%s: %d bytes, %d gzipped", path, len(plain.Body), len(gz.Body))
		})
	}
}
