package ddb

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/feedback"
	"github.com/plumehq/plume/shared/judge"
	"github.com/plumehq/plume/shared/optimize"
	"github.com/plumehq/plume/shared/trace"
)

// ExampleStore reads what an optimization run's examples are made of (optimize.ExampleSource),
// from items other stores write: a prompt's completions partition (P#<project>#PC#<slug>, one
// item per ingested batch), the feedback given through the prompt (its feedback index, GSI1
// P#<project>#PF#<slug>), the judges' evaluations in the spans' partitions (EVAL#<judge>), and
// the span records in the bucket's batch objects, read with ranged GETs. It writes nothing.
//
// Every key it reads starts with the project it is given, so one project's examples never
// include another's completions, feedback or evaluations.
type ExampleStore struct {
	t      *Table
	traces *TraceStore
	blobs  trace.RangeReader
}

var _ optimize.ExampleSource = (*ExampleStore)(nil)

// NewExampleStore returns the example reader of t, reading span records from blobs.
func NewExampleStore(t *Table, blobs trace.RangeReader) *ExampleStore {
	return &ExampleStore{t: t, traces: NewTraceStore(t), blobs: blobs}
}

// CompletionIDs implements optimize.ExampleSource with one Query of the prompt's completions
// partition, newest batch first, asking for limit batches (a batch lists at least one
// completion, so this is one page unless batches repeat spans); it reads no span summary.
// Completions are ordered by the time their batch was written, and by id within a batch.
func (s *ExampleStore) CompletionIDs(ctx context.Context, projectID, slug string, limit int) ([]string, error) {
	if limit <= 0 {
		return nil, nil
	}
	ids, err := newestCompletions(ctx, s.t, projectID, slug, limit)
	if err != nil {
		return nil, err
	}
	return ids[:min(len(ids), limit)], nil
}

// CompletionFeedback implements optimize.ExampleSource with one Query of the prompt's feedback
// index (GSI1, newest submission first) per 1 MB page, up to the page on which the feedback
// read covers limit completions. Calibrations of judges (feedback with a judge id), which the
// index also holds, are left out. Index reads are eventually consistent: feedback submitted
// a moment ago may be missing, which a run started minutes later does not notice.
func (s *ExampleStore) CompletionFeedback(ctx context.Context, projectID, slug string, limit int) ([]feedback.Feedback, error) {
	if limit <= 0 {
		return nil, nil
	}
	cond := expression.Key(infra.AttrGSI1PK).Equal(expression.Value(promptFeedbackGSI1PK(projectID, slug)))
	in, err := s.t.queryInput(cond, queryOpts{index: infra.IndexGSI1, reverse: true})
	if err != nil {
		return nil, err
	}
	var out []feedback.Feedback
	spans := map[string]bool{}
	p := dynamodb.NewQueryPaginator(s.t.api, in)
	for p.HasMorePages() && len(spans) < limit {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, storageErr("query prompt feedback", err)
		}
		for _, raw := range page.Items {
			var it feedbackItem
			if err := attributevalue.UnmarshalMap(raw, &it); err != nil {
				return nil, fmt.Errorf("decode feedback: %w", err)
			}
			if it.Judge != "" {
				continue
			}
			spans[it.Span] = true
			out = append(out, it.toFeedback(projectID))
		}
	}
	return out, nil
}

// Evaluations implements optimize.ExampleSource with one BatchGetItem per 100 (span, judge)
// pairs, of the EVAL#<judge> items in the spans' partitions (strongly consistent, one read
// unit per evaluation found). The flag a calibration leaves before its evaluation exists is no
// evaluation and is left out.
func (s *ExampleStore) Evaluations(ctx context.Context, projectID string, spanIDs, judgeIDs []string) ([]judge.Evaluation, error) {
	keys := make([]map[string]types.AttributeValue, 0, len(spanIDs)*len(judgeIDs))
	for _, span := range spanIDs {
		for _, j := range judgeIDs {
			keys = append(keys, key(spanPK(projectID, span), evaluationSK(j)))
		}
	}
	if len(keys) == 0 {
		return nil, nil
	}
	found, err := s.t.batchGet(ctx, keys)
	if err != nil {
		return nil, err
	}
	out := make([]judge.Evaluation, 0, len(found))
	for _, raw := range found {
		var it evalItem
		if err := attributevalue.UnmarshalMap(raw, &it); err != nil {
			return nil, fmt.Errorf("decode evaluation: %w", err)
		}
		if !it.stub() {
			out = append(out, it.toEvaluation())
		}
	}
	return out, nil
}

// Spans implements optimize.ExampleSource with one BatchGetItem per 100 span summaries (where
// each record is), then the records themselves: one ranged GET of the bucket per run of nearby
// records in one batch object (trace.LoadRecords), so completions ingested together cost one
// GET.
func (s *ExampleStore) Spans(ctx context.Context, projectID string, spanIDs []string) (map[string]trace.Span, error) {
	if len(spanIDs) == 0 {
		return map[string]trace.Span{}, nil
	}
	sums, err := s.traces.Summaries(ctx, projectID, spanIDs)
	if err != nil {
		return nil, err
	}
	locs := make(map[string]trace.Location, len(sums))
	for id, sum := range sums {
		if sum.Location.Key != "" {
			locs[id] = sum.Location
		}
	}
	if len(locs) == 0 {
		return map[string]trace.Span{}, nil
	}
	return trace.LoadRecords(ctx, s.blobs, locs)
}
