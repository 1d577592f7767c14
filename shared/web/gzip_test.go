package web

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAcceptsGzip(t *testing.T) {
	tests := []struct {
		acceptEncoding string
		want           bool
	}{
		{"gzip, deflate, br, zstd", true}, // Chromium
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
	for _, tt := range tests {
		t.Run(tt.acceptEncoding, func(t *testing.T) {
			h := http.Header{}
			if tt.acceptEncoding != "" {
				h.Set("Accept-Encoding", tt.acceptEncoding)
			}
			assert.Equal(t, tt.want, AcceptsGzip(h))
		})
	}
}

// gunzip is body decoded, failing the test unless it is one whole gzip stream.
func gunzip(t *testing.T, body []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(body))
	require.NoError(t, err)
	out, err := io.ReadAll(zr)
	require.NoError(t, err, "a whole gzip stream")
	return out
}

// TestCompress: through Chain, an answer of at least GzipMinBytes is gzipped for a client that
// accepts gzip, whatever the sizes of its writes, and decodes to the answer sent as written to
// one that does not; smaller answers, answers already encoded, event streams and answers
// flushed before the threshold are sent as written. Every answer varies with Accept-Encoding.
func TestCompress(t *testing.T) {
	big := strings.Repeat(`{"id":"0f6c2d4e","name":"step"},`, 200) // 6.4 KB
	tests := []struct {
		name    string
		handler http.HandlerFunc
		gzipped bool
		status  int
	}{
		{"one write", func(w http.ResponseWriter, r *http.Request) { OK(w, big) }, true, 200},
		{"small writes", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			for i := 0; i < len(big); i += 100 {
				_, _ = io.WriteString(w, big[i:min(i+100, len(big))])
			}
		}, true, 200},
		{"an error answer", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, big)
		}, true, 404},
		{"a Content-Length is dropped", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", strconv.Itoa(len(big)))
			_, _ = io.WriteString(w, big)
		}, true, 200},
		{"under the threshold", func(w http.ResponseWriter, r *http.Request) { OK(w, "short") }, false, 200},
		{"no body", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }, false, 204},
		{"already encoded", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Encoding", "br")
			_, _ = io.WriteString(w, big)
		}, false, 200},
		{"an event stream", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, big)
		}, false, 200},
		{"flushed before the threshold", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, big[:10])
			require.NoError(t, http.NewResponseController(w).Flush())
			_, _ = io.WriteString(w, big[10:])
		}, false, 200},
		{"flushed after the threshold", func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.WriteString(w, big[:2000])
			require.NoError(t, http.NewResponseController(w).Flush())
			_, _ = io.WriteString(w, big[2000:])
		}, true, 200},
	}
	srv := func(h http.Handler) *httptest.Server {
		s := httptest.NewServer(Chain(h))
		t.Cleanup(s.Close)
		return s
	}
	// get sends GET with acceptEncoding ("" for none) and returns the answer as it came.
	get := func(t *testing.T, url, acceptEncoding string) (*http.Response, []byte) {
		t.Helper()
		req, err := http.NewRequest("GET", url, nil)
		require.NoError(t, err)
		if acceptEncoding != "" {
			req.Header.Set("Accept-Encoding", acceptEncoding)
		}
		res, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res, body
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := srv(tt.handler)
			plain, plainBody := get(t, s.URL, "")
			assert.Equal(t, tt.status, plain.StatusCode)
			assert.NotEqual(t, "gzip", plain.Header.Get("Content-Encoding"), "identity for a client that does not accept gzip")
			gz, gzBody := get(t, s.URL, "gzip, deflate")
			assert.Equal(t, tt.status, gz.StatusCode)
			assert.Equal(t, []string{"Accept-Encoding"}, gz.Header.Values("Vary"))
			assert.Equal(t, []string{"Accept-Encoding"}, plain.Header.Values("Vary"))
			if !tt.gzipped {
				assert.NotEqual(t, "gzip", gz.Header.Get("Content-Encoding"))
				assert.Equal(t, string(plainBody), string(gzBody))
				return
			}
			assert.Equal(t, "gzip", gz.Header.Get("Content-Encoding"))
			assert.Less(t, len(gzBody), len(plainBody))
			if cl := gz.Header.Get("Content-Length"); cl != "" {
				assert.Equal(t, strconv.Itoa(len(gzBody)), cl)
			}
			assert.Equal(t, string(plainBody), string(gunzip(t, gzBody)))
		})
	}

	t.Run("Go's transport decodes it transparently", func(t *testing.T) {
		s := srv(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { OK(w, big) }))
		res, err := http.Get(s.URL)
		require.NoError(t, err)
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		assert.True(t, res.Uncompressed, "sent gzipped, decoded by the transport")
		var want bytes.Buffer
		rec := httptest.NewRecorder()
		OK(rec, big)
		want.Write(rec.Body.Bytes())
		assert.Equal(t, want.String(), string(body))
	})
}
