package ddb

import (
	"context"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/signal"
)

// SignalJoin keeps the derived signals of the spans in A/B tests (signal.Derived) from the
// table's change stream. A span summary (SPAN) whose A/B choices (its ab_choices, attribute
// "ab") gained a test records them on the span's signal record (signal.Service.Carry), and so
// does a new span made in a session with the version of a prompt split that the session was
// served (signal.Service.CarrySplits): the span is then in the test, and that record's own
// stream record joins its verdicts and feedback so far (below). A judge's evaluation (EVAL#<judge> in the span's partition) sets the
// span's verdict signal, people's feedback (FB#<user>) its thumbs counts, read back from the
// span's feedback items. Values are set, not added, so a batch delivered again changes
// nothing; the records of a span's partition come in order, so the last value stays. Spans
// that are in no test cost one BatchGetItem per 100 spans of a batch and no write.
type SignalJoin struct {
	t   *Table
	svc *signal.Service
}

// NewSignalJoin returns the join over t and the signal service of the same table.
func NewSignalJoin(t *Table, svc *signal.Service) *SignalJoin { return &SignalJoin{t: t, svc: svc} }

// Apply implements the stream consumer's contract (one shard's records, in order).
func (j *SignalJoin) Apply(ctx context.Context, _ string, records []StreamRecord) error {
	type spanKey struct{ project, span string }
	verdicts := map[spanKey]map[string]bool{}
	feedback := map[spanKey]bool{}
	backfill := map[spanKey]bool{}
	byProject := map[string][]string{}
	carried := map[string][]signal.Carried{}
	prompted := map[string][]signal.PromptSpan{}
	for _, r := range records {
		if r.New == nil {
			continue
		}
		pk, sk := strAttr(r.New, infra.AttrPK), strAttr(r.New, infra.AttrSK)
		projectID, rest, ok := strings.Cut(strings.TrimPrefix(pk, "P#"), "#")
		if !ok || !strings.HasPrefix(pk, "P#") {
			continue
		}
		if span, isEntity := strings.CutPrefix(rest, "EN#span#"); isEntity && sk == skEntity {
			// A span's first choice: its verdicts and feedback so far join the variant.
			if len(mapAttr(r.Old, "ab")) == 0 && len(mapAttr(r.New, "ab")) > 0 {
				backfill[spanKey{projectID, span}] = true
				if !slices.Contains(byProject[projectID], span) {
					byProject[projectID] = append(byProject[projectID], span)
				}
			}
			continue
		}
		span, isSpan := strings.CutPrefix(rest, "S#")
		if !isSpan {
			continue
		}
		k := spanKey{projectID, span}
		switch {
		case sk == skSpan:
			carried[projectID] = append(carried[projectID], newChoices(span, r.Old, r.New)...)
			if ps, ok := promptSpan(span, r.Old, r.New); ok {
				prompted[projectID] = append(prompted[projectID], ps)
			}
			continue
		case strings.HasPrefix(sk, prefixEvaluation):
			if verdicts[k] == nil {
				verdicts[k] = map[string]bool{}
			}
			passed, _ := r.New["r"].(*types.AttributeValueMemberBOOL)
			verdicts[k][strings.TrimPrefix(sk, prefixEvaluation)] = passed != nil && passed.Value
		case strings.HasPrefix(sk, prefixFeedback) && !strings.Contains(sk, "#J#"):
			feedback[k] = true
		default:
			continue
		}
		if !slices.Contains(byProject[projectID], span) {
			byProject[projectID] = append(byProject[projectID], span)
		}
	}
	for projectID, cs := range carried {
		if err := j.svc.Carry(ctx, projectID, cs); err != nil {
			return err
		}
	}
	for projectID, ps := range prompted {
		if err := j.svc.CarrySplits(ctx, projectID, ps); err != nil {
			return err
		}
	}
	for projectID, spans := range byProject {
		in, err := j.svc.SpansInTests(ctx, projectID, spans)
		if err != nil {
			return err
		}
		var ds []signal.Derived
		for _, span := range spans {
			if !in[span] {
				continue
			}
			k := spanKey{projectID, span}
			if backfill[k] {
				vs, fb, err := j.spanOutcomes(ctx, projectID, span)
				if err != nil {
					return err
				}
				if verdicts[k] == nil {
					verdicts[k] = map[string]bool{}
				}
				for judgeID, passed := range vs {
					if _, later := verdicts[k][judgeID]; !later {
						verdicts[k][judgeID] = passed
					}
				}
				feedback[k] = feedback[k] || fb
			}
			for judgeID, passed := range verdicts[k] {
				ds = append(ds, signal.Derived{SpanID: span, Name: signal.JudgeSignal(judgeID), Value: passed})
			}
			if feedback[k] {
				up, down, err := j.thumbs(ctx, projectID, span)
				if err != nil {
					return err
				}
				ds = append(ds, signal.Derived{SpanID: span, Name: signal.FeedbackUp, Value: up},
					signal.Derived{SpanID: span, Name: signal.FeedbackDown, Value: down})
			}
		}
		if err := j.svc.SetDerived(ctx, projectID, ds); err != nil {
			return err
		}
	}
	return nil
}

// spanOutcomes reads a span's verdicts, by judge, and whether it has people's feedback: one
// Query of its partition from EVAL# to FB#.
func (j *SignalJoin) spanOutcomes(ctx context.Context, projectID, spanID string) (map[string]bool, bool, error) {
	cond := partition(spanPK(projectID, spanID)).And(expression.Key(infra.AttrSK).Between(expression.Value(prefixEvaluation), expression.Value("FB$")))
	verdicts, feedback := map[string]bool{}, false
	err := j.t.query(ctx, cond, queryOpts{}, func(it map[string]types.AttributeValue) error {
		sk := strAttr(it, infra.AttrSK)
		switch {
		case strings.HasPrefix(sk, prefixEvaluation):
			passed, _ := it["r"].(*types.AttributeValueMemberBOOL)
			verdicts[strings.TrimPrefix(sk, prefixEvaluation)] = passed != nil && passed.Value
		case strings.HasPrefix(sk, prefixFeedback) && !strings.Contains(sk, "#J#"):
			feedback = true
		}
		return nil
	})
	return verdicts, feedback, err
}

// newChoices are the A/B choices of a span summary's new image that its old image lacks: a
// summary written again with the same choices (a re-send, a later write of other fields)
// costs nothing here.
func newChoices(spanID string, was, is map[string]types.AttributeValue) []signal.Carried {
	var before, after []spanChoiceAttr
	if av, ok := is["ab"]; !ok || attributevalue.Unmarshal(av, &after) != nil {
		return nil
	}
	if av, ok := was["ab"]; ok {
		_ = attributevalue.Unmarshal(av, &before)
	}
	var out []signal.Carried
	for _, c := range after {
		if !slices.Contains(before, c) {
			out = append(out, signal.Carried{SpanID: spanID, Test: c.Test, Variant: c.Variant})
		}
	}
	return out
}

// promptSpan is the span of a summary's new image made with a prompt version in a session,
// when the old image did not name that session and version already (a span written again
// costs nothing here): it may be in a prompt split its session was served from
// (signal.Service.CarrySplits).
func promptSpan(spanID string, was, is map[string]types.AttributeValue) (signal.PromptSpan, bool) {
	ps := signal.PromptSpan{SpanID: spanID, SessionID: strAttr(is, "ss"), Slug: strAttr(is, "ps"), VersionID: strAttr(is, "pv")}
	if ps.SessionID == "" || ps.Slug == "" || ps.VersionID == "" {
		return ps, false
	}
	return ps, was == nil || strAttr(was, "ss") != ps.SessionID || strAttr(was, "pv") != ps.VersionID
}

// mapAttr is the map attribute name of item (nil when absent).
func mapAttr(item map[string]types.AttributeValue, name string) map[string]types.AttributeValue {
	if m, ok := item[name].(*types.AttributeValueMemberM); ok {
		return m.Value
	}
	return nil
}

// thumbs counts people's feedback on a span (calibration feedback, about a judge, excluded):
// one Query of the span's FB# items.
func (j *SignalJoin) thumbs(ctx context.Context, projectID, spanID string) (up, down int64, err error) {
	cond := partition(spanPK(projectID, spanID)).And(expression.Key(infra.AttrSK).BeginsWith(prefixFeedback))
	err = j.t.query(ctx, cond, queryOpts{}, func(it map[string]types.AttributeValue) error {
		if strings.Contains(strAttr(it, infra.AttrSK), "#J#") {
			return nil
		}
		if v, _ := it["up"].(*types.AttributeValueMemberBOOL); v != nil && v.Value {
			up++
		} else {
			down++
		}
		return nil
	})
	return up, down, err
}
