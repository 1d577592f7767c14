package prompt

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestSplitSharesWithinBinomialBound serves 10,000 fixed session keys from splits of
// several shapes and checks that each version's share of them is within 4 standard
// deviations of its weight (a binomial count: n p (1 - p) variance). The keys are fixed, so
// the test is deterministic; a Pick or StickyPoint that skews a share fails it.
func TestSplitSharesWithinBinomialBound(t *testing.T) {
	const n = 10000
	tests := []struct {
		name    string
		weights []float64
	}{
		{"even", []float64{0.5, 0.5}},
		{"ninety ten", []float64{0.9, 0.1}},
		{"three unnormalised", []float64{2, 1, 1}},
		{"a zero weight", []float64{0.7, 0, 0.3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp := Split{Test: "support-bot.production." + tt.name}
			total := 0.0
			for i, w := range tt.weights {
				sp.Variants = append(sp.Variants, SplitVariant{Version: i + 1, Weight: w})
				total += w
			}
			got := map[int]int{}
			for i := range n {
				key := Sticky{SessionID: fmt.Sprintf("session-%05d", i)}.key()
				got[sp.Pick(StickyPoint(sp.Test, key)).Version]++
			}
			for i, w := range tt.weights {
				p := w / total
				sigma := math.Sqrt(n * p * (1 - p))
				assert.InDelta(t, n*p, float64(got[i+1]), 4*sigma, "version %d: %d of %d for weight %.2f", i+1, got[i+1], n, p)
				if w == 0 {
					assert.Zero(t, got[i+1], "a version of weight 0 is never served")
				}
			}
		})
	}
}

// TestPickEdges: the shares are taken in order, and a point at the top of [0, 1) still lands
// on a version of weight above 0.
func TestPickEdges(t *testing.T) {
	sp := Split{Variants: []SplitVariant{{Version: 1, Weight: 1}, {Version: 2, Weight: 3}, {Version: 3, Weight: 0}}}
	assert.Equal(t, 1, sp.Pick(0).Version)
	assert.Equal(t, 1, sp.Pick(0.2499).Version)
	assert.Equal(t, 2, sp.Pick(0.25).Version)
	assert.Equal(t, 2, sp.Pick(math.Nextafter(1, 0)).Version)
	assert.Equal(t, StickyPoint("t", "k"), StickyPoint("t", "k"), "the same key, the same point")
	assert.NotEqual(t, StickyPoint("t", "k"), StickyPoint("u", "k"), "another test, another point")
}
