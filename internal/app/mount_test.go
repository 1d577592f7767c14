package app_test

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/app"
)

// TestMountBuildsOnFirstUse: Mount builds no function until a request is routed to it, and
// each once; a function whose Build fails answers 500 with the error shape, and the others
// are served.
func TestMountBuildsOnFirstUse(t *testing.T) {
	var okBuilds, badBuilds atomic.Int32
	ok := app.Function{Name: "OKFunction", Routes: []string{"GET /ok"}, Build: func(*app.Env) (http.Handler, error) {
		okBuilds.Add(1)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }), nil
	}}
	bad := app.Function{Name: "BadFunction", Routes: []string{"GET /bad"}, Build: func(*app.Env) (http.Handler, error) {
		badBuilds.Add(1)
		return nil, errors.New("BUCKET_NAME is not set")
	}}
	h, err := app.Mount(&app.Env{}, []app.Function{ok, bad})
	require.NoError(t, err)
	assert.Zero(t, okBuilds.Load()+badBuilds.Load(), "nothing built at mount")

	tests := []struct {
		path   string
		status int
	}{
		{"/ok", http.StatusNoContent},
		{"/ok", http.StatusNoContent},
		{"/bad", http.StatusInternalServerError},
		{"/bad", http.StatusInternalServerError},
		{"/other", http.StatusNotFound},
	}
	for _, tt := range tests {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, tt.path, nil))
		assert.Equal(t, tt.status, w.Code, tt.path)
		if tt.status == http.StatusInternalServerError {
			assert.Contains(t, w.Body.String(), `"code":"internal"`)
			assert.NotContains(t, w.Body.String(), "BUCKET_NAME", "the cause is logged, not sent")
		}
	}
	assert.EqualValues(t, 1, okBuilds.Load(), "built once")
	assert.EqualValues(t, 1, badBuilds.Load(), "a failed build is not tried again")
}

// TestMountRoutesOnFirstUse: Mount registers no route key until a request comes (its
// allocations do not grow with the routes), and then routes every one.
func TestMountRoutesOnFirstUse(t *testing.T) {
	fns := func(n int) []app.Function {
		routes := make([]string, n)
		for i := range routes {
			routes[i] = fmt.Sprintf("GET /v1/things%d/{id}", i)
		}
		return []app.Function{{Name: "ThingsFunction", Routes: routes, Build: func(*app.Env) (http.Handler, error) {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(r.PathValue("id"))) }), nil
		}}}
	}
	one, many := fns(1), fns(200)
	mount := func(fns []app.Function) func() {
		return func() {
			_, err := app.Mount(&app.Env{}, fns)
			require.NoError(t, err)
		}
	}
	assert.Equal(t, testing.AllocsPerRun(20, mount(one)), testing.AllocsPerRun(20, mount(many)), "nothing registered at mount")

	h, err := app.Mount(&app.Env{}, many)
	require.NoError(t, err)
	for _, path := range []string{"/v1/things0/a", "/v1/things199/b"} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		assert.Equal(t, http.StatusOK, w.Code, path)
		assert.Equal(t, path[len(path)-1:], w.Body.String(), path)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/v1/things200/c", nil))
	assert.Equal(t, http.StatusNotFound, w.Code)
}
