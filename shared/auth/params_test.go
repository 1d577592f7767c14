package auth

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestUnknownWildcardPanics(t *testing.T) {
	r := NewRouter(nil)
	assert.PanicsWithValue(t, `auth: route "GET /things/{thing_id}": wildcard {thing_id} has no rule in auth's params table`, func() {
		r.HandleOpen("GET /things/{thing_id}", http.NotFoundHandler())
	})
	assert.NotPanics(t, func() { r.HandleOpen("GET /f/{token}", http.NotFoundHandler()) })
}

func TestParamRules(t *testing.T) {
	uuid := "0b7c2f0e-3d4a-4c9b-8f1e-2a3b4c5d6e7f"
	tests := []struct {
		name, value string
		valid       bool
	}{
		{"slug", "support-bot", true}, {"slug", "Support", false}, {"slug", strings.Repeat("a", 129), false},
		{"judge_id", uuid, true}, {"judge_id", strings.ToUpper(uuid), true}, {"judge_id", "nope", false},
		{"judge_id", "{" + uuid + "}", false}, {"judge_id", strings.ReplaceAll(uuid, "-", ""), false},
		{"hash", strings.Repeat("aB", 32), true}, {"hash", strings.Repeat("g", 64), false},
		{"version", "1", true}, {"version", "0", false}, {"version", "12345678901", false}, {"version", "-1", false}, {"version", "0000000001", true}, {"version", strings.Repeat("0", 3000) + "1", false},
		{"span_id", "not-a-uuid", true}, {"span_id", strings.Repeat("a", 37), false}, {"span_id", "a b", false},
		{"model", "anthropic/claude 3", true}, {"model", strings.Repeat("m", 257), false}, {"model", "a\x01", false}, {"model", "", false}, {"model", "a\xffb", false}, {"model", "modèle", true},
		{"token", "plf_" + strings.Repeat("A", 43), true}, {"token", "hello", false}, {"token", "plf_" + strings.Repeat("A", 97), false},
		{"entity_type", "session", true}, {"entity_type", "prompt", false},
		{"tag_action", "production:pin", true}, {"tag_action", strings.Repeat("t", 82), false},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.valid, params[tt.name].valid(tt.value), "%s %.40q", tt.name, tt.value)
	}
}

func TestRefusedParamNeverReachesTheHandler(t *testing.T) {
	r := NewRouter(nil)
	reached := false
	r.HandleOpen("GET /f/{token}", http.HandlerFunc(func(http.ResponseWriter, *http.Request) { reached = true }))
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest("GET", "/f/"+strings.Repeat("x", 3000), nil))
	assert.Equal(t, http.StatusNotFound, rec.Code)
	assert.False(t, reached)
	assert.NotContains(t, rec.Body.String(), "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "the value is cut in the message")

	rec = httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest("GET", "/f//x", nil))
	assert.Equal(t, http.StatusNotFound, rec.Code, "an unclean path is a 404, not a redirect")
	assert.Empty(t, rec.Header().Get("Location"))
}
