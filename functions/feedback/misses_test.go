package feedback_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/feedback"
)

// TestUnknownTokensAreLimited: each unknown link token costs a read, so a client trying more
// than feedback.MaxUnknownTokens of them in a minute is answered 429 without a read (issue 11);
// another client, and the valid link, are not affected.
func TestUnknownTokensAreLimited(t *testing.T) {
	f := newPageFixture(t, apitest.Options{LinkRate: 1 << 30, Clock: apitest.MinuteStart()}, "Fine.")
	open := func(token, addr string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", "/f/"+token, nil)
		req.RemoteAddr = addr
		rec := httptest.NewRecorder()
		f.api.Handler.ServeHTTP(rec, req)
		return rec
	}
	unknown := "plf_" + strings.Repeat("u", 43)
	for i := range feedback.MaxUnknownTokens {
		require.Equal(t, http.StatusNotFound, open(unknown, "198.51.100.7:4000").Code, "try %d", i)
	}
	f.api.DDB.Reset()
	rec := open(unknown, "198.51.100.7:4001")
	assert.Equal(t, http.StatusTooManyRequests, rec.Code)
	assert.Equal(t, "60", rec.Header().Get("Retry-After"))
	assert.Contains(t, rec.Body.String(), "Too many requests")
	assert.Zero(t, f.api.DDB.Total(), "refused without a read: %s", f.api.DDB)

	assert.Equal(t, http.StatusNotFound, open(unknown, "203.0.113.9:4000").Code, "another client")
	assert.Equal(t, http.StatusOK, open(f.link.Token, "203.0.113.9:4000").Code, "the link itself")
}
