package pricing_test

import (
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/bound"
	"github.com/plumehq/plume/shared/bound/boundtest"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/pricing"
)

// TestNumbersProperty feeds edge and random numbers through every price of an override: what
// ValidateOverride accepts is inside bound.Price (so it can be stored), the rest is an
// errs.CodeInvalid error naming the field.
func TestNumbersProperty(t *testing.T) {
	values := []float64{math.Inf(1), math.Inf(-1), math.NaN()}
	for _, text := range boundtest.Numbers(4, 300) {
		if f, err := strconv.ParseFloat(text, 64); err == nil {
			values = append(values, f)
		}
	}
	for _, v := range values {
		for _, f := range []struct {
			name string
			set  func(*pricing.Override)
		}{
			{"input", func(o *pricing.Override) { o.Input = v }},
			{"output", func(o *pricing.Override) { o.Output = v }},
			{"cached_input", func(o *pricing.Override) { o.CachedInput = v }},
			{"cache_write", func(o *pricing.Override) { o.CacheWrite = v }},
		} {
			o := pricing.Override{Model: "m", Price: pricing.Price{Input: 1, Output: 1}}
			f.set(&o)
			if err := pricing.ValidateOverride(o); err != nil {
				require.True(t, errs.Is(err, errs.CodeInvalid), "%s %v: %v", f.name, v, err)
				assert.Contains(t, err.Error(), f.name)
				continue
			}
			for _, x := range []float64{o.Input, o.Output, o.CachedInput, o.CacheWrite} {
				assert.True(t, bound.Price.Contains(math.Abs(x)), "%s %v", f.name, v) // -0 is stored as 0
			}
		}
	}
}
