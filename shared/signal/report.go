package signal

import (
	"context"
	"math"
	"math/big"
	"slices"
	"strings"
	"time"

	"github.com/plumehq/plume/api"
)

// Aggregate is one aggregate of a test: the variant's count of choices when Signal is empty,
// else the count, sum and sum of squares of the signal's values in the variant.
type Aggregate struct {
	Variant    string
	Signal     string
	SignalType string
	N          int64
	Sum, SumSq string
}

// FamilyAlpha is the report's family-wise significance level, split over its comparisons.
const FamilyAlpha = 0.05

// Report reads a test's aggregates and computes its report (api.ABReport says what it holds).
func (s *Service) Report(ctx context.Context, projectID, name string) (api.ABReport, error) {
	t, aggs, err := s.store.Aggregates(ctx, projectID, name)
	if err != nil {
		return api.ABReport{}, err
	}
	return buildReport(t, aggs, s.now()), nil
}

// buildReport is the report of t from its aggregates at now.
func buildReport(t Test, aggs []Aggregate, now time.Time) api.ABReport {
	r := api.ABReport{ABTest: t.Wire(now), Test: "welch_t", DecisionAt: t.EndsAt, Decided: !now.Before(t.EndsAt),
		Results: []api.ABVariantResult{}, Comparisons: []api.ABComparison{}}
	samples := map[[2]string]sample{}
	var signals []string
	types := map[string]string{}
	for _, v := range t.Variants {
		res := api.ABVariantResult{Key: v.Key, Signals: []api.ABSignalStats{}, Judges: []api.ABJudgeStats{}}
		for _, a := range aggs {
			if a.Variant != v.Key {
				continue
			}
			if a.Signal == "" {
				res.Choices = a.N
				continue
			}
			if a.N <= 0 {
				continue
			}
			sm, st := summarize(a)
			addDerived(&res, a, st.Mean)
			samples[[2]string{v.Key, a.Signal}] = sm
			res.Signals = append(res.Signals, st)
			if !slices.Contains(signals, a.Signal) {
				signals = append(signals, a.Signal)
			}
			types[a.Signal] = a.SignalType
		}
		slices.SortFunc(res.Signals, func(a, b api.ABSignalStats) int { return strings.Compare(a.Name, b.Name) })
		slices.SortFunc(res.Judges, func(a, b api.ABJudgeStats) int { return strings.Compare(a.JudgeID, b.JudgeID) })
		r.Results = append(r.Results, res)
	}
	slices.Sort(signals)
	if len(t.Variants) < 2 {
		return r
	}
	control := t.Variants[0].Key
	comparisons := len(signals) * (len(t.Variants) - 1)
	if comparisons > 0 {
		r.Alpha = FamilyAlpha / float64(comparisons)
	}
	for _, sig := range signals {
		for _, v := range t.Variants[1:] {
			a, okA := samples[[2]string{v.Key, sig}]
			b, okB := samples[[2]string{control, sig}]
			c := api.ABComparison{Signal: sig, Variant: v.Key, Control: control}
			if okA && okB {
				c.Difference = a.mean - b.mean
				if tv, df, p, ok := welch(a, b); ok {
					c.T, c.DF, c.PValue = &tv, &df, &p
				}
			}
			if r.Decided {
				sig := c.PValue != nil && *c.PValue < r.Alpha
				c.Significant = &sig
			}
			r.Comparisons = append(r.Comparisons, c)
		}
	}
	return r
}

// summarize is one aggregate's sample and its statistics: mean, unbiased standard deviation
// and the 95% Student t interval of the mean, computed from the exact sums.
func summarize(a Aggregate) (sample, api.ABSignalStats) {
	n := new(big.Rat).SetInt64(a.N)
	sum, sumSq := rat(a.Sum), rat(a.SumSq)
	mean, _ := new(big.Rat).Quo(sum, n).Float64()
	sm := sample{n: a.N, mean: mean}
	st := api.ABSignalStats{Name: a.Signal, SignalType: a.SignalType, N: a.N, Mean: mean}
	if a.N < 2 {
		return sm, st
	}
	// (Σx² - (Σx)²/n) / (n-1), exactly.
	ss := new(big.Rat).Sub(sumSq, new(big.Rat).Quo(new(big.Rat).Mul(sum, sum), n))
	variance, _ := ss.Quo(ss, new(big.Rat).SetInt64(a.N-1)).Float64()
	sm.variance = math.Max(variance, 0)
	sd := math.Sqrt(sm.variance)
	half := tQuantile(0.975, float64(a.N-1)) * sd / math.Sqrt(float64(a.N))
	lo, hi := mean-half, mean+half
	st.StdDev, st.CILow, st.CIHigh = &sd, &lo, &hi
	return sm, st
}
