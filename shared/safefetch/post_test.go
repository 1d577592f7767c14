package safefetch

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPostAnyPublicHost: with AnyPublicHost, a URL of any host may be posted to when it is
// public, and a loopback, private or metadata address only when listed; redirects are answers,
// not followed.
func TestPostAnyPublicHost(t *testing.T) {
	var got []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			http.Redirect(w, r, "/", http.StatusFound)
			return
		}
		got, _ = io.ReadAll(r.Body)
		assert.Equal(t, "v1,x", r.Header.Get("webhook-signature"))
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	h := http.Header{"Webhook-Signature": {"v1,x"}}

	open, err := New(Config{AnyPublicHost: true})
	require.NoError(t, err)
	for _, target := range []string{srv.URL, "http://169.254.169.254/latest/meta-data", "http://10.0.0.1/", "http://localhost:" + u.Port()} {
		_, err := open.Post(context.Background(), target, h, []byte("{}"))
		assert.Error(t, err, target)
	}
	_, err = open.Post(context.Background(), "file:///etc/passwd", h, nil)
	assert.ErrorIs(t, err, ErrNotAllowed)

	listed, err := New(Config{AnyPublicHost: true, Hosts: []string{u.Hostname()}})
	require.NoError(t, err)
	status, err := listed.Post(context.Background(), srv.URL+"/hook", h, []byte(`{"a":1}`))
	require.NoError(t, err)
	assert.Equal(t, http.StatusNoContent, status)
	assert.JSONEq(t, `{"a":1}`, string(got))
	status, err = listed.Post(context.Background(), srv.URL+"/moved", h, nil)
	require.NoError(t, err)
	assert.Equal(t, http.StatusFound, status, "not followed")
}
