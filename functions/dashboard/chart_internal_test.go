package dashboard

import (
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLineChartBreaksAtGaps(t *testing.T) {
	nan := math.NaN()
	a := axis{labels: []string{"a", "b", "c", "d", "e"}, ticks: []string{"a", "b", "c", "d", "e"}, every: 2}
	c := lineChart("x", "X", "u", a, []string{"p50"}, [][]float64{{1, 2, nan, 4, nan}}, func(v float64) string { return fmt.Sprint(v) })
	require.Len(t, c.Series, 1)
	assert.Len(t, c.Series[0].Dots, 3)
	assert.Len(t, c.Series[0].Segments, 1, "a line over a and b; d alone is a point")
	assert.Len(t, c.XLabels, 3, "every second tick")
	assert.Equal(t, "5", c.YMax)
	assert.Equal(t, "X per bucket, 5 buckets from a to e, 3 with data. Highest: 4.", c.Summary)
	assert.Equal(t, []string{"–"}, c.Rows[2].Values)
}

func TestBarChart(t *testing.T) {
	a := axis{labels: []string{"a", "b"}, ticks: []string{"a", "b"}, every: 1}
	c := barChart("x", "X", "u", a, []float64{0, 3}, func(v float64) string { return fmt.Sprint(v) })
	require.Len(t, c.Bars, 2)
	assert.Zero(t, c.Bars[0].H, "an empty bucket")
	assert.InDelta(t, (c.Bottom-c.Top)*3/5, c.Bars[1].H, 0.1, "3 on an axis to 5")
	assert.Equal(t, "X per bucket, 2 buckets from a to b. Highest: 3 at b.", c.Summary)
}

func TestNiceMax(t *testing.T) {
	for in, want := range map[float64]float64{0: 1, 0.3: 0.5, 1: 1, 7: 10, 120: 200, 0.75: 1} {
		assert.InDelta(t, want, niceMax([]float64{in}), 1e-9, "%g", in)
	}
}

// TestBaseURL: the setup snippets name the deployment's public URL when it has one, else the
// address the browser reached.
func TestBaseURL(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "http://internal-host:8080/ui/", nil)
	assert.Equal(t, "http://internal-host:8080", (&server{}).baseURL(r))
	r.Header.Set("X-Forwarded-Proto", "https")
	assert.Equal(t, "https://internal-host:8080", (&server{}).baseURL(r))
	assert.Equal(t, "https://plume.example.com", (&server{d: Deps{PublicURL: "https://plume.example.com"}}).baseURL(r))
}
