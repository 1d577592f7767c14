package app_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/app"
)

// TestOnlyServesItsMethods: an area mounted with Only keeps its routes of those methods and
// its ANY routes, and a request of another method answers 404 as an unmounted route does.
func TestOnlyServesItsMethods(t *testing.T) {
	area := app.Function{
		Name:   "AreaFunction",
		Routes: []string{"GET /things", "POST /things", "DELETE /things/{id}", "ANY /projects/{project_id}/things"},
		Build: func(*app.Env) (http.Handler, error) {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }), nil
		},
	}
	reads := app.Only(area, http.MethodGet)
	assert.Equal(t, []string{"GET /things", "ANY /projects/{project_id}/things"}, reads.Routes)
	h, err := app.Mount(&app.Env{}, []app.Function{reads})
	require.NoError(t, err)
	for _, tt := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/things", http.StatusNoContent},
		{"POST", "/things", http.StatusNotFound},
		{"DELETE", "/things/1", http.StatusNotFound},
		{"GET", "/projects/p/things", http.StatusNoContent},
		{"PATCH", "/projects/p/things", http.StatusNotFound},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(tt.method, tt.path, nil))
		assert.Equal(t, tt.status, w.Code, "%s %s", tt.method, tt.path)
	}
}
