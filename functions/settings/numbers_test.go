package settings

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPriceNumbersOutOfRange: a price of 1e-200 passed validation and failed at the database
// with a 500; it is a 400 naming the field (shared/bound). A price of 0 is fine.
func TestPriceNumbersOutOfRange(t *testing.T) {
	f := newFixture(t)
	base := "/projects/" + f.a.pid + "/model-prices/m"
	for _, field := range []string{"input", "output", "cached_input", "cache_write"} {
		t.Run(field, func(t *testing.T) {
			body := map[string]any{"input": 1.0, "output": 1.0}
			body[field] = 1e-200
			status, out := f.do(t, "PUT", base, f.a.key, body)
			require.Equal(t, http.StatusBadRequest, status, "%v", out)
			assert.Contains(t, out["error"].(map[string]any)["message"], field)
		})
	}
	status, out := f.do(t, "PUT", base, f.a.key, map[string]any{"input": 0, "output": 1e-12})
	assert.Equal(t, http.StatusOK, status, "%v", out)
}
