package dashboard

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/web"
)

// TestRecoveredPanicIsAPage: a page that panics answers the HTML error page with 500 and the
// request id, and shows nothing of the panic.
func TestRecoveredPanicIsAPage(t *testing.T) {
	s := newServer(Deps{})
	h := web.Chain(s.recovered(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("secret detail of the failure")
	})))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/ui/traces", nil))
	assert.Equal(t, http.StatusInternalServerError, w.Code)
	assert.Equal(t, "text/html; charset=utf-8", w.Header().Get("Content-Type"))
	assert.Equal(t, contentSecurityPolicy, w.Header().Get("Content-Security-Policy"))
	body := w.Body.String()
	assert.Contains(t, body, "Something went wrong on our side")
	require.NotEmpty(t, w.Header().Get("X-Request-Id"))
	assert.Contains(t, body, w.Header().Get("X-Request-Id"))
	assert.NotContains(t, body, "secret detail")
}
