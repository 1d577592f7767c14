package rollup

import (
	"math"
	"slices"

	"github.com/plumehq/plume/api"
)

// Latencies are kept as a DDSketch (Masson, Rim, Lee, VLDB 2019): durations are counted in
// logarithmic bins, so that any quantile is answered within RelativeError of the true value
// (of a duration of the set), sketches of buckets merge by adding their counts, and a duration
// is removed by subtracting its count, which keeps a rollup exact when a trace's duration
// changes. Bin i > 0 holds durations in (γ^(i-1), γ^i] milliseconds; durations of 0 or less
// than a microsecond are counted in bin ZeroBin.
const (
	// RelativeError is α: a quantile answered is within α of the true one, relatively.
	RelativeError = api.MetricsRelativeError
	// ZeroBin holds durations under MinDuration.
	ZeroBin = math.MinInt32
	// MinDuration is the smallest duration (ms) given a bin of its own: a microsecond.
	MinDuration = 1e-3
)

var (
	gamma    = (1 + RelativeError) / (1 - RelativeError)
	logGamma = math.Log(gamma)
)

// Bin is the bin of a duration in milliseconds.
func Bin(ms float64) int32 {
	if !(ms >= MinDuration) { // NaN too
		return ZeroBin
	}
	return int32(math.Ceil(math.Log(ms) / logGamma))
}

// binValue is the estimate answered for a duration of bin i: the point of its range whose
// relative distance to either end is α.
func binValue(i int32) float64 {
	if i == ZeroBin {
		return 0
	}
	return 2 * math.Pow(gamma, float64(i)) / (gamma + 1)
}

// Sketch counts durations by bin.
type Sketch map[int32]int64

// Add counts n more durations of bin i (n < 0 removes them); a bin counted down to zero goes.
func (s Sketch) Add(i int32, n int64) {
	if s[i] += n; s[i] == 0 {
		delete(s, i)
	}
}

// Merge adds the counts of o.
func (s Sketch) Merge(o Sketch) {
	for i, n := range o {
		s.Add(i, n)
	}
}

// Count is the number of durations counted.
func (s Sketch) Count() int64 {
	var n int64
	for _, c := range s {
		n += c
	}
	return n
}

// Quantile is the q-quantile (0 <= q <= 1) of the durations counted, within RelativeError;
// false when there are none. It is the estimate of the bin that holds the duration of rank
// ceil(q·n) (at least 1), as the nearest-rank percentile of the durations would be.
func (s Sketch) Quantile(q float64) (float64, bool) {
	n := s.Count()
	if n <= 0 {
		return 0, false
	}
	rank := max(int64(math.Ceil(q*float64(n))), 1)
	bins := slices.Sorted(func(yield func(int32) bool) {
		for i, c := range s {
			if c > 0 && !yield(i) {
				return
			}
		}
	})
	var seen int64
	for _, i := range bins {
		if seen += s[i]; seen >= rank {
			return microseconds(binValue(i)), true
		}
	}
	return microseconds(binValue(bins[len(bins)-1])), true
}

// microseconds rounds ms to the microsecond: the estimate's digits beyond are noise.
func microseconds(ms float64) float64 { return math.Round(ms*1000) / 1000 }
