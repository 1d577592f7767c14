package dataset

import (
	"cmp"
	"encoding/json"
	"slices"

	"github.com/plumehq/plume/api"
)

// MergeRows lines up pages of results of several experiments by row id: each page holds an
// experiment's first results after the same cursor, by row id. It returns the first limit row
// ids of their union with each experiment's result of that row (nil when none), and whether a
// row may follow. Every page holds the rows it has among those limit: a row of the union's
// first limit has fewer than limit rows before it in any one page.
func MergeRows(pages [][]Result, more []bool, limit int) (rows []string, results [][]*Result, hasMore bool) {
	byRow := map[string][]*Result{}
	for i, page := range pages {
		for j := range page {
			r := &page[j]
			if byRow[r.RowID] == nil {
				byRow[r.RowID] = make([]*Result, len(pages))
				rows = append(rows, r.RowID)
			}
			byRow[r.RowID][i] = r
		}
	}
	slices.Sort(rows)
	hasMore = len(rows) > limit || slices.Contains(more, true)
	rows = rows[:min(limit, len(rows))]
	for _, id := range rows {
		results = append(results, byRow[id])
	}
	return rows, results, hasMore
}

// MetricValue is the number a metric's results hold: the results when they are a number, or
// the value under the metric's own name when they are an object ({"accuracy": 0.9}).
func MetricValue(name string, results json.RawMessage) *float64 {
	var n float64
	if json.Unmarshal(results, &n) == nil {
		return &n
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(results, &obj) == nil {
		if v, ok := obj[name]; ok && json.Unmarshal(v, &n) == nil {
			return &n
		}
	}
	return nil
}

// Tally is what evaluations add to their evaluator's aggregate in one run: a boolean value
// counts toward the pass rate (Booleans, Passed), a number toward the mean (Numbers, Sum),
// any other value toward neither. The store keeps one per (experiment, run, evaluator),
// updated with each evaluation (PutEvaluation), so an aggregate is read, never recounted.
type Tally struct {
	Booleans, Passed, Numbers int
	Sum                       float64
}

// TallyOf is one evaluation's tally.
func TallyOf(value json.RawMessage) Tally {
	var v any // not a bool or a float64 directly: null decodes into either as nothing
	if json.Unmarshal(value, &v) != nil {
		return Tally{}
	}
	switch v := v.(type) {
	case bool:
		if v {
			return Tally{Booleans: 1, Passed: 1}
		}
		return Tally{Booleans: 1}
	case float64:
		return Tally{Numbers: 1, Sum: v}
	}
	return Tally{}
}

// Add is t and o together.
func (t Tally) Add(o Tally) Tally {
	return Tally{Booleans: t.Booleans + o.Booleans, Passed: t.Passed + o.Passed, Numbers: t.Numbers + o.Numbers, Sum: t.Sum + o.Sum}
}

// Minus is t without o: what replacing an evaluation of tally o by one of tally t changes.
func (t Tally) Minus(o Tally) Tally {
	return Tally{Booleans: t.Booleans - o.Booleans, Passed: t.Passed - o.Passed, Numbers: t.Numbers - o.Numbers, Sum: t.Sum - o.Sum}
}

// IsZero reports whether t changes nothing.
func (t Tally) IsZero() bool { return t == Tally{} }

// Aggregate is an evaluator's tally in one run of an experiment.
type Aggregate struct {
	EvaluatorID, EvaluatorName string
	Run                        int
	Tally
}

// CompareAggregates lines up the aggregates of several experiments' run by evaluator name
// (an evaluator's id is its experiment's; a judge's evaluator is named as the judge):
// aggs[i] are experiment i's. Each evaluator's value is its pass rate when any experiment's
// evaluations of it are booleans, else their mean; Difference is the last experiment's
// value minus the first one's, when both have one. Evaluators come by name.
func CompareAggregates(aggs [][]Aggregate, run int) []api.ComparedEvaluator {
	byName := map[string]*api.ComparedEvaluator{}
	var names []string
	for i, list := range aggs {
		for _, a := range list {
			if a.Run != run || (a.Booleans == 0 && a.Numbers == 0) {
				continue
			}
			c := byName[a.EvaluatorName]
			if c == nil {
				c = &api.ComparedEvaluator{Name: a.EvaluatorName, Values: make([]*api.EvaluatorAggregate, len(aggs))}
				byName[a.EvaluatorName] = c
				names = append(names, a.EvaluatorName)
			}
			c.Values[i] = toAggregate(a.Tally)
		}
	}
	slices.Sort(names)
	out := make([]api.ComparedEvaluator, 0, len(names))
	for _, name := range names {
		c := byName[name]
		c.Measure = api.MeasureMean
		for _, v := range c.Values {
			if v != nil && v.BooleanCount > 0 {
				c.Measure = api.MeasurePassRate
			}
		}
		first, last := c.Values[0].Of(c.Measure), c.Values[len(c.Values)-1].Of(c.Measure)
		if first != nil && last != nil {
			d := *last - *first
			c.Difference = &d
		}
		out = append(out, *c)
	}
	return out
}

// RunAggregates are aggs as GET /v1/experiments/{id} answers them: by run, then evaluator
// name, those with no boolean or numeric evaluation left out.
func RunAggregates(aggs []Aggregate) []api.RunAggregate {
	out := []api.RunAggregate{}
	for _, a := range aggs {
		if a.Booleans == 0 && a.Numbers == 0 {
			continue
		}
		out = append(out, api.RunAggregate{RunNumber: a.Run, EvaluatorID: a.EvaluatorID, EvaluatorName: a.EvaluatorName, EvaluatorAggregate: *toAggregate(a.Tally)})
	}
	slices.SortStableFunc(out, func(x, y api.RunAggregate) int {
		return cmp.Or(cmp.Compare(x.RunNumber, y.RunNumber), cmp.Compare(x.EvaluatorName, y.EvaluatorName), cmp.Compare(x.EvaluatorID, y.EvaluatorID))
	})
	return out
}

func toAggregate(t Tally) *api.EvaluatorAggregate {
	a := &api.EvaluatorAggregate{BooleanCount: t.Booleans, Passed: t.Passed, NumericCount: t.Numbers, Sum: t.Sum}
	if t.Booleans > 0 {
		r := float64(t.Passed) / float64(t.Booleans)
		a.PassRate = &r
	}
	if t.Numbers > 0 {
		m := t.Sum / float64(t.Numbers)
		a.Mean = &m
	}
	return a
}
