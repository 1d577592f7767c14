package mcpserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
)

// The reads and the grouping the proposal tools share: each read is one REST call, or a
// bounded number of them made a few at once (readConcurrency).

// judgeCounts counts a judge's evaluations since (zero: all) and returns its newest limit
// failing ones (none for 0).
func judgeCounts(ctx context.Context, c *client.Client, j api.Judge, since time.Time, limit int) (JudgeCounts, []api.Evaluation, error) {
	all, err := c.Evaluations(ctx, j.ID, client.EvaluationQuery{Limit: 1, Start: since})
	if err != nil {
		return JudgeCounts{}, nil, err
	}
	failing, err := c.Evaluations(ctx, j.ID, client.EvaluationQuery{Limit: max(limit, 1), Start: since, Result: new(false)})
	if err != nil {
		return JudgeCounts{}, nil, err
	}
	evs := failing.Evaluations
	if limit == 0 {
		evs = nil
	}
	return JudgeCounts{JudgeID: j.ID, Name: j.Name, Evaluations: all.Total, Failing: failing.Total}, evs, nil
}

// completionsOf finds the completions of prompt slug among the newest scan llm spans of the
// project that match q, newest first (by start); scanned tells whether the scan was cut at
// its bound.
func completionsOf(ctx context.Context, c *client.Client, slug string, q api.SpanQuery, scan int) ([]api.Span, bool, error) {
	q.SpanKind, q.Limit = api.SpanKindLLM, scan
	spans, err := c.Spans(ctx, q)
	if err != nil {
		return nil, false, err
	}
	var out []api.Span
	for _, sp := range spans {
		if sp.PromptLink != nil && cmp.Or(sp.PromptLink.PromptSlug, sp.PromptLink.Task) == slug {
			out = append(out, sp)
		}
	}
	// Newest first by when they ran: spans ingested together are listed in another order.
	slices.SortStableFunc(out, func(a, b api.Span) int { return b.StartedAt.Compare(a.StartedAt) })
	return out, len(spans) == scan, nil
}

// peopleFeedback reads the human feedback (plain and calibration) on each span, a few spans
// at once.
func peopleFeedback(ctx context.Context, c *client.Client, ids []string) (map[string][]api.HumanFeedbackItem, error) {
	out := make(map[string][]api.HumanFeedbackItem, len(ids))
	var mu sync.Mutex
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(readConcurrency)
	for _, id := range ids {
		g.Go(func() error {
			u, err := c.UnifiedFeedback(ctx, api.EntitySpan, id)
			if errors.Is(err, client.ErrNotFound) {
				return nil // nothing on it
			}
			if err != nil {
				return err
			}
			var items []api.HumanFeedbackItem
			for _, it := range u.Items {
				if it.Human != nil {
					items = append(items, *it.Human)
				}
			}
			mu.Lock()
			out[id] = items
			mu.Unlock()
			return nil
		})
	}
	return out, g.Wait()
}

// calibration is a person's calibration feedback on a judge's evaluation.
type calibration struct {
	eval   api.Evaluation
	agree  bool
	reason string
}

// calibrationsOf reads the newest calibrationReads calibrated evaluations of judge judgeID
// and the calibration feedback on each (one per person), and the number of calibrated
// evaluations.
func calibrationsOf(ctx context.Context, c *client.Client, judgeID string) ([]calibration, int, error) {
	page, err := c.Evaluations(ctx, judgeID, client.EvaluationQuery{Limit: calibrationReads, WithUserFeedback: new(true)})
	if err != nil {
		return nil, 0, err
	}
	ids := make([]string, 0, len(page.Evaluations))
	for _, e := range page.Evaluations {
		ids = append(ids, e.SpanID)
	}
	people, err := peopleFeedback(ctx, c, ids)
	if err != nil {
		return nil, 0, err
	}
	var out []calibration
	for _, e := range page.Evaluations {
		for _, f := range people[e.SpanID] {
			if f.JudgeID != nil && *f.JudgeID == judgeID {
				out = append(out, calibration{eval: e, agree: f.ThumbsUp, reason: deref(f.Reason)})
			}
		}
	}
	return out, page.Total, nil
}

// issue is one failure to group: its reason, the judge of a failing evaluation, and the
// example it makes.
type issue struct {
	reason  string
	judge   *api.Judge
	example IssueExample
}

// groupIssues groups issues (newest first) by judge and normalised reason, largest groups
// first, at most maxIssueGroups, each with its first examplesPerGroup examples; the note says
// what was left out ("" when nothing was).
func groupIssues(issues []issue, what string) ([]IssueGroup, string) {
	byKey := map[string]*IssueGroup{}
	var order []string
	for _, is := range issues {
		reason := normReason(is.reason)
		key := reason
		g := IssueGroup{Reason: shorten(reason, reasonChars), Examples: []IssueExample{}}
		if is.judge != nil {
			key = is.judge.ID + "\x00" + reason
			g.JudgeID, g.JudgeName = is.judge.ID, is.judge.Name
		}
		if byKey[key] == nil {
			byKey[key] = &g
			order = append(order, key)
		}
		grp := byKey[key]
		grp.Count++
		if len(grp.Examples) < examplesPerGroup {
			grp.Examples = append(grp.Examples, is.example)
		}
	}
	out := make([]IssueGroup, 0, len(order))
	for _, k := range order {
		out = append(out, *byKey[k])
	}
	slices.SortStableFunc(out, func(a, b IssueGroup) int { return cmp.Compare(b.Count, a.Count) })
	if len(out) <= maxIssueGroups {
		return out, ""
	}
	left := 0
	for _, g := range out[maxIssueGroups:] {
		left += g.Count
	}
	return out[:maxIssueGroups], fmt.Sprintf("%s: the %d largest groups are shown; %d more groups (%d failures) are left out", what, maxIssueGroups, len(out)-maxIssueGroups, left)
}

// normReason is the form of a reason that groups: lowercase, trimmed, spaces collapsed.
func normReason(r string) string {
	r = strings.ToLower(strings.Join(strings.Fields(r), " "))
	if r == "" {
		return "(no reason given)"
	}
	return r
}

// fillExamples sets the input and output of the groups' examples, from known or read.
func fillExamples(ctx context.Context, c *client.Client, known map[string]api.Span, lists ...[]IssueGroup) error {
	var missing []string
	for _, groups := range lists {
		for _, g := range groups {
			for _, ex := range g.Examples {
				if _, ok := known[ex.SpanID]; !ok && !slices.Contains(missing, ex.SpanID) {
					missing = append(missing, ex.SpanID)
				}
			}
		}
	}
	read := make(map[string]api.Span, len(known)+len(missing))
	for id, sp := range known {
		read[id] = sp
	}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(readConcurrency)
	for _, id := range missing {
		g.Go(func() error {
			sp, ok, err := spanByID(gctx, c, id)
			if err != nil || !ok {
				return err
			}
			mu.Lock()
			read[id] = sp
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for _, groups := range lists {
		for _, g := range groups {
			for i := range g.Examples {
				ex := &g.Examples[i]
				if sp, ok := read[ex.SpanID]; ok {
					ex.Input, ex.Output = shorten(deref(sp.InputData), exampleChars), shorten(deref(sp.OutputData), exampleChars)
				}
			}
		}
	}
	return nil
}

// spanByID reads a span; ok is false when the project has none of that id (span ids are
// UUIDs: another id names no span).
func spanByID(ctx context.Context, c *client.Client, id string) (api.Span, bool, error) {
	if _, err := uuid.Parse(id); err != nil {
		return api.Span{}, false, nil
	}
	spans, err := c.Spans(ctx, api.SpanQuery{ID: id, ListQuery: api.ListQuery{Limit: 1}})
	if err != nil || len(spans) == 0 {
		return api.Span{}, false, err
	}
	return spans[0], true, nil
}

func spanIDs(spans []api.Span) []string {
	ids := make([]string, len(spans))
	for i, sp := range spans {
		ids[i] = sp.ID
	}
	return ids
}

// shorten truncates s to n characters, saying how much it left out.
func shorten(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + fmt.Sprintf("… [truncated: %d more characters]", len(r)-n)
}

func appendNote(notes []string, note string) []string {
	if note == "" {
		return notes
	}
	return append(notes, note)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
