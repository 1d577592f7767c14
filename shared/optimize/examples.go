package optimize

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/plumehq/plume/shared/feedback"
	"github.com/plumehq/plume/shared/judge"
	"github.com/plumehq/plume/shared/judge/run"
	"github.com/plumehq/plume/shared/trace"
)

// ExampleSource reads what a prompt's examples are made of (implemented by ddb.ExampleStore).
// Every method reads one project's data only.
type ExampleSource interface {
	// CompletionIDs returns the ids of the newest completions of prompt slug (the llm spans
	// linked to it), at most limit, newest first.
	CompletionIDs(ctx context.Context, projectID, slug string, limit int) ([]string, error)
	// CompletionFeedback returns people's feedback on completions of prompt slug, newest
	// first, going back until it covers limit completions; a judge's calibrations are not
	// completion feedback and may be left out.
	CompletionFeedback(ctx context.Context, projectID, slug string, limit int) ([]feedback.Feedback, error)
	// Evaluations returns the evaluations of the spans by the judges that exist, in any order.
	Evaluations(ctx context.Context, projectID string, spanIDs, judgeIDs []string) ([]judge.Evaluation, error)
	// Spans returns the full records (input, output, attributes) of the spans, by id; a span
	// that is not stored is left out.
	Spans(ctx context.Context, projectID string, spanIDs []string) (map[string]trace.Span, error)
}

// LoadExamples assembles up to limit examples of prompt slug: its completions (input, output,
// prompt variables), people's feedback on them, and the verdicts of the intents' judges.
//
// A completion nobody judged teaches a strategy little (no reason to reflect on, no output
// anyone wanted), and people give feedback on few completions, often days after: the newest
// completions of a busy prompt may have none. So the candidates are the newest limit
// completions and the completions behind the newest feedback (up to limit more, however old),
// and they are taken in this order until limit: those with people's feedback, then those with a
// verdict of an intent's judge only, then the rest; within each, the newest completions first,
// then older ones with feedback, newest feedback first. The examples are returned in that
// order. A candidate whose span is not stored (feedback on a completion never ingested) or is
// not linked to the prompt (feedback posted under the wrong prompt) is left out, and the next
// candidate taken instead.
//
// When several people gave feedback on a completion, the one submitted last decides ThumbsUp
// and Reason, and ExpectedOutput is the last one anybody wrote. A judge's calibrations (feedback
// with a judge id) are about the judge's verdict, not the completion, and are ignored.
func LoadExamples(ctx context.Context, src ExampleSource, projectID, slug string, intents []Intent, limit int) ([]Example, error) {
	if limit <= 0 {
		return nil, nil
	}
	ids, err := src.CompletionIDs(ctx, projectID, slug, limit)
	if err != nil {
		return nil, fmt.Errorf("read the completions of %q: %w", slug, err)
	}
	fbs, err := src.CompletionFeedback(ctx, projectID, slug, limit)
	if err != nil {
		return nil, fmt.Errorf("read the feedback on %q: %w", slug, err)
	}

	people := map[string]*personVerdict{}
	candidates := slices.Clone(ids)
	known := make(map[string]bool, len(ids))
	for _, id := range ids {
		known[id] = true
	}
	for _, f := range fbs {
		if f.Calibration != nil {
			continue // about a judge's verdict, not the completion
		}
		if !known[f.SpanID] {
			known[f.SpanID] = true
			candidates = append(candidates, f.SpanID)
		}
		pv := people[f.SpanID]
		if pv == nil {
			pv = &personVerdict{}
			people[f.SpanID] = pv
		}
		pv.add(f)
	}

	judged := map[string]map[string]Verdict{}
	if judgeIDs := intentJudges(intents); len(judgeIDs) > 0 && len(candidates) > 0 {
		evs, err := src.Evaluations(ctx, projectID, candidates, judgeIDs)
		if err != nil {
			return nil, fmt.Errorf("read the evaluations of %q's completions: %w", slug, err)
		}
		wanted := make(map[string]bool, len(judgeIDs))
		for _, id := range judgeIDs {
			wanted[id] = true
		}
		for _, e := range evs {
			if !known[e.SpanID] || !wanted[e.JudgeID] {
				continue
			}
			if judged[e.SpanID] == nil {
				judged[e.SpanID] = map[string]Verdict{}
			}
			judged[e.SpanID][e.JudgeID] = VerdictOf(e)
		}
	}

	// Those people judged, then those judges did, then the rest; stable, so newest first.
	tier := func(id string) int {
		switch {
		case people[id] != nil:
			return 0
		case len(judged[id]) > 0:
			return 1
		}
		return 2
	}
	slices.SortStableFunc(candidates, func(a, b string) int { return tier(a) - tier(b) })

	// Usually one read: more only when some candidates are not completions of the prompt.
	var out []Example
	for rest := candidates; len(out) < limit && len(rest) > 0; {
		take := rest[:min(len(rest), limit-len(out))]
		rest = rest[len(take):]
		spans, err := src.Spans(ctx, projectID, take)
		if err != nil {
			return nil, fmt.Errorf("read the completions of %q: %w", slug, err)
		}
		for _, id := range take {
			sp, ok := spans[id]
			if !ok || !linkedTo(sp, slug) {
				continue
			}
			ex := Example{ID: id, Input: deref(sp.InputData), Output: deref(sp.OutputData), Variables: run.Variables(sp), Judged: judged[id]}
			if pv := people[id]; pv != nil {
				pv.apply(&ex)
			}
			out = append(out, ex)
		}
	}
	return out, nil
}

// linkedTo reports whether sp is a completion of prompt slug: linked to it as ingestion links
// spans (trace.Summary's PromptSlug). Feedback given with an API key names any span of the
// project as a completion of the prompt; one of another prompt would teach this prompt
// another's task.
func linkedTo(sp trace.Span, slug string) bool {
	return sp.Link != nil && cmp.Or(sp.Link.PromptSlug, sp.Link.Task) == slug
}

// personVerdict merges people's feedback on one completion: the feedback submitted last
// decides the verdict and its reason, and the last expected output anybody wrote is the
// expected output. Ties in time go to the greater user id, so that the order feedback is read
// in never matters.
type personVerdict struct {
	verdict, expected *feedback.Feedback
}

func (pv *personVerdict) add(f feedback.Feedback) {
	if pv.verdict == nil || later(f, *pv.verdict) {
		pv.verdict = &f
	}
	if deref(f.ExpectedOutput) != "" && (pv.expected == nil || later(f, *pv.expected)) {
		pv.expected = &f
	}
}

func later(a, b feedback.Feedback) bool {
	if !a.UpdatedAt.Equal(b.UpdatedAt) {
		return a.UpdatedAt.After(b.UpdatedAt)
	}
	return a.CreatedBy.ID > b.CreatedBy.ID
}

func (pv *personVerdict) apply(ex *Example) {
	up := pv.verdict.ThumbsUp
	ex.ThumbsUp, ex.Reason = &up, deref(pv.verdict.Reason)
	if pv.expected != nil {
		ex.ExpectedOutput = *pv.expected.ExpectedOutput
	}
}

// intentJudges are the distinct judge ids of intents, in order.
func intentJudges(intents []Intent) []string {
	var out []string
	for _, in := range intents {
		if in.JudgeID != "" && !slices.Contains(out, in.JudgeID) {
			out = append(out, in.JudgeID)
		}
	}
	return out
}

// VerdictOf normalises a judge's evaluation to 0..1: a binary verdict is 1 for pass and 0 for
// fail; a score is placed in the judge's range, (score-min)/(max-min), clamped to 0..1 (a
// score recorded before the range changed may fall outside it). A scored evaluation without a
// score or a usable range counts as its pass or fail.
func VerdictOf(e judge.Evaluation) Verdict {
	v := Verdict{Reason: e.Reason}
	if e.Result {
		v.Score = 1
	}
	if e.EvaluationType == judge.TypeScored && e.Score != nil && e.ScoreMin != nil && e.ScoreMax != nil && *e.ScoreMax > *e.ScoreMin {
		v.Score = min(1, max(0, (*e.Score-*e.ScoreMin)/(*e.ScoreMax-*e.ScoreMin)))
	}
	return v
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
