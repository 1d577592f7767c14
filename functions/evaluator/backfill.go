package evaluator

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/judge"
	"github.com/plumehq/plume/shared/judge/run"
	"github.com/plumehq/plume/shared/trace"
)

// BackfillWindow is how far back a backfill looks for spans.
const BackfillWindow = 30 * 24 * time.Hour

// maxBackfillScan bounds the span summaries one backfill reads, whatever its count: a judge
// that takes almost no span (a rare tag, a low sample rate) must not read a month of spans.
const maxBackfillScan = 100_000

// backfillObject runs the backfill request stored at key. The project and judge are the key's,
// whatever the body says, so a request can only be about the project it is filed under.
func (r *Runner) backfillObject(ctx context.Context, key string) (Report, error) {
	projectID, judgeID, ok := judge.ParseBackfillKey(key)
	if !ok {
		slog.WarnContext(ctx, "evaluator: not a backfill request, skipped", "key", key)
		return Report{}, nil
	}
	body, err := r.objects.Get(ctx, key)
	if errs.CodeOf(err) == errs.CodeNotFound {
		slog.WarnContext(ctx, "evaluator: backfill request is gone, skipped", "key", key)
		return Report{}, nil
	}
	if err != nil {
		return Report{}, fmt.Errorf("read backfill request %s: %w", key, err)
	}
	var b judge.BackfillRequest
	if err := json.Unmarshal(body, &b); err != nil {
		slog.ErrorContext(ctx, "evaluator: undecodable backfill request, skipped", "key", key, "error", err)
		return Report{}, nil
	}
	b.ProjectID, b.JudgeID = projectID, judgeID
	return r.Backfill(ctx, b)
}

// Backfill runs a backfill request (judge.BackfillRequest): it evaluates, with judge b.JudgeID, the b.Count most recent spans of the last
// BackfillWindow that it takes (run.Matches: kind, target prompt, tags, sample), as a batch
// event does: claimed, so a span already evaluated for the same content is not called again.
// A paused or unknown judge evaluates nothing.
//
// Cost: the judge's GetItem; the spans of the window listed newest first from the list index,
// pages of backfillPage summaries (what a GET /spans/summaries page of that size costs), until
// Count spans are found or maxBackfillScan summaries were read; ranged GETs of the found spans'
// batches; then, per span, what a batch event costs.
func (r *Runner) Backfill(ctx context.Context, b judge.BackfillRequest) (Report, error) {
	if b.Count <= 0 {
		return Report{}, nil
	}
	b.Count = min(b.Count, judge.MaxBackfill)
	j, err := r.judges.Judge(ctx, b.ProjectID, b.JudgeID)
	if errs.CodeOf(err) == errs.CodeNotFound {
		slog.WarnContext(ctx, "evaluator: backfill of an unknown judge, skipped", "project_id", b.ProjectID, "judge_id", b.JudgeID)
		return Report{}, nil
	}
	if err != nil {
		return Report{}, fmt.Errorf("read judge %s: %w", b.JudgeID, err)
	}
	if j.Paused {
		return Report{Judges: 0}, nil
	}
	locs, err := r.recentMatches(ctx, j, b.Count)
	if err != nil {
		return Report{Judges: 1}, err
	}
	spans, err := trace.LoadRecords(ctx, r.objects, locs)
	if err != nil {
		return Report{Judges: 1}, fmt.Errorf("read spans: %w", err)
	}
	var pairs []pair
	for _, sp := range spans {
		if run.Matches(j, sp) { // the summary's tags may have been cut; the span's are whole
			pairs = append(pairs, pair{j, sp})
		}
	}
	rep := Report{Spans: len(spans), Judges: 1, Matched: len(pairs)}
	res, err := r.evaluate(ctx, b.ProjectID, pairs)
	rep.add(res)
	return rep, r.outcome(rep, err)
}

// backfillPage is how many span summaries recentMatches lists at a time.
const backfillPage = 1_000

// recentMatches finds the locations of the count most recent spans judge j seems to take by
// their summaries (kind, linked prompt, tags, sample). It lists the spans of the window newest
// first (by creation, the list index's default order), a page at a time, until it has count
// candidates, and takes the count that started last.
func (r *Runner) recentMatches(ctx context.Context, j judge.Judge, count int) (map[string]trace.Location, error) {
	var found []trace.Summary
	seen := map[string]bool{}
	now := r.cfg.Now()
	from := now.Add(-BackfillWindow)
	q := trace.SpanQuery{Common: trace.Common{CreatedAfter: &from, CreatedBefore: &now, Limit: backfillPage}}
	for scanned := 0; len(found) < count && scanned < maxBackfillScan; {
		sums, info, err := r.index.SpanSummaries(ctx, j.ProjectID, q)
		if err != nil {
			return nil, fmt.Errorf("list the spans of the last %s: %w", BackfillWindow, err)
		}
		for _, s := range sums {
			if !seen[s.SpanID] && summaryMatches(j, s) {
				seen[s.SpanID] = true
				found = append(found, s)
			}
		}
		scanned += len(sums)
		if info.Next == "" {
			break
		}
		q.Cursor = info.Next
	}
	slices.SortFunc(found, func(a, b trace.Summary) int {
		return cmp.Or(b.StartedAt.Compare(a.StartedAt), strings.Compare(a.SpanID, b.SpanID))
	})
	locs := make(map[string]trace.Location, min(count, len(found)))
	for _, s := range found[:min(count, len(found))] {
		locs[s.SpanID] = s.Location
	}
	return locs, nil
}

// summaryMatches is run.Matches on what a summary keeps of a span.
func summaryMatches(j judge.Judge, s trace.Summary) bool {
	sp := trace.Span{ID: s.SpanID, Kind: s.Kind, Tags: trace.TagsOf(s.Tags)}
	if s.PromptSlug != "" {
		sp.Link = &trace.PromptLink{PromptSlug: s.PromptSlug}
	}
	if s.TagsCut {
		// The summary lost tags; let the span's own decide (Backfill checks again).
		sp.Tags = nil
		return run.Matches(withoutTags(j), sp)
	}
	return run.Matches(j, sp)
}

// withoutTags is j with no tag filter.
func withoutTags(j judge.Judge) judge.Judge {
	j.TagFilter = nil
	return j
}
