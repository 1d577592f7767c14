package signal

import (
	"context"
	"encoding/json"
	"math"
	"slices"
	"strings"

	"github.com/plumehq/plume/api"
)

// Derived signals are the ones Plume records itself on the spans that are in an A/B test (a
// choice recorded on the span's entity): each judge's verdict on the span and the span's
// feedback. They are signals like the others, so the entity record keeps them exact whichever
// of the choice, the evaluation and the feedback comes first, and the report gives each
// variant's judge pass rates and feedback, with intervals and comparisons, in O(variants x
// signals).
const (
	// DerivedPrefix starts the name of every derived signal; clients may not send one.
	DerivedPrefix = "plume."
	judgePrefix   = DerivedPrefix + "judge."
	// FeedbackUp and FeedbackDown count the thumbs up and down of people's feedback on a span.
	FeedbackUp   = DerivedPrefix + "feedback.up"
	FeedbackDown = DerivedPrefix + "feedback.down"
)

// JudgeSignal is the name of judge judgeID's verdict: true when the span passed.
func JudgeSignal(judgeID string) string { return judgePrefix + judgeID }

// JudgeOf returns the judge id of a verdict's signal name.
func JudgeOf(name string) (string, bool) { return strings.CutPrefix(name, judgePrefix) }

// Derived is one derived signal of a span.
type Derived struct {
	SpanID string
	Name   string
	// Value is a boolean (a verdict) or a count (feedback).
	Value any
}

// SetDerived records derived signals on the spans that are in a test; the others are left
// alone (their records are read, one BatchGetItem per 100 spans, and nothing is written). A
// value already stored writes nothing, so a change delivered again counts once.
func (s *Service) SetDerived(ctx context.Context, projectID string, ds []Derived) error {
	if len(ds) == 0 {
		return nil
	}
	var refs []EntityRef
	for _, d := range ds {
		if ref := (EntityRef{Type: "span", ID: d.SpanID}); !slices.Contains(refs, ref) {
			refs = append(refs, ref)
		}
	}
	records, err := s.store.Entities(ctx, projectID, refs)
	if err != nil {
		return err
	}
	var inputs []Input
	for _, d := range ds {
		if len(records[EntityRef{Type: "span", ID: d.SpanID}].Choices) == 0 {
			continue
		}
		raw, err := json.Marshal(d.Value)
		if err != nil {
			return err
		}
		typ := api.SignalNumerical
		if _, ok := d.Value.(bool); ok {
			typ = api.SignalBoolean
		}
		inputs = append(inputs, Input{Ref: EntityRef{Type: "span", ID: d.SpanID}, Name: d.Name, Value: raw, Type: typ, derived: true})
	}
	if len(inputs) == 0 {
		return nil
	}
	_, err = s.Set(ctx, projectID, inputs)
	return err
}

// addDerived adds a derived aggregate a of a variant to its result.
func addDerived(res *api.ABVariantResult, a Aggregate, mean float64) {
	total := int64(math.Round(ratFloat(a.Sum)))
	if id, ok := JudgeOf(a.Signal); ok {
		res.Judges = append(res.Judges, api.ABJudgeStats{JudgeID: id, Evaluations: a.N, Passed: total, PassRate: mean})
		return
	}
	switch a.Signal {
	case FeedbackUp:
		res.Feedback.Up = total
		res.Feedback.Spans = max(res.Feedback.Spans, a.N)
	case FeedbackDown:
		res.Feedback.Down = total
		res.Feedback.Spans = max(res.Feedback.Spans, a.N)
	}
}

// ratFloat is the decimal text v as a float.
func ratFloat(v string) float64 {
	f, _ := rat(v).Float64()
	return f
}

// SpansInTests returns which of the spans are in an A/B test (a choice on their record): one
// BatchGetItem per 100 spans.
func (s *Service) SpansInTests(ctx context.Context, projectID string, spanIDs []string) (map[string]bool, error) {
	refs := make([]EntityRef, len(spanIDs))
	for i, id := range spanIDs {
		refs[i] = EntityRef{Type: "span", ID: id}
	}
	records, err := s.store.Entities(ctx, projectID, refs)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for ref, e := range records {
		if len(e.Choices) > 0 {
			out[ref.ID] = true
		}
	}
	return out, nil
}
