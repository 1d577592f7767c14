package evaluator

import (
	"context"

	"github.com/plumehq/plume/internal/app"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/trace"
)

// Function is EvaluatorFunction of template.yaml, invoked by the bucket's Object Created
// events (through EventBridge) for span batches and backfill requests.
var Function = app.Worker{
	Name: "EvaluatorFunction",
	Build: func(e *app.Env) (app.Job, error) {
		r, err := FromEnv(context.Background(), e)
		if err != nil {
			return nil, err
		}
		return r.Handle, nil
	},
}

// FromEnv builds the Runner of an Env: its stores, its bucket, its model client and the
// configured concurrency. plume-local and `plume admin replay-evaluations` build theirs here too.
func FromEnv(ctx context.Context, e *app.Env) (*Runner, error) {
	blobs, err := e.Blobs()
	if err != nil {
		return nil, err
	}
	models, err := e.Models(ctx)
	if err != nil {
		return nil, err
	}
	cfg := Config{
		DefaultModel:        models.JudgeModel(),
		Concurrency:         e.Config.JudgeConcurrency,
		ProviderConcurrency: e.Config.JudgeProviderConcurrency,
		Now:                 e.Now,
	}
	queries, err := e.TraceQueries()
	if err != nil {
		return nil, err
	}
	r := New(e.JudgeStore(), e.Claims(), e.FeedbackStore(), spanIndex{e.Traces(), queries}, blobs, models, cfg)
	return r.WithExperiments(ddb.NewDatasetStore(e.Table()), blobs), nil
}

// spanIndex is the Runner's Index: summaries by id from the store, lists from the list index.
type spanIndex struct {
	*ddb.TraceStore
	queries *trace.Queries
}

func (s spanIndex) SpanSummaries(ctx context.Context, projectID string, q trace.SpanQuery) ([]trace.Summary, trace.QueryInfo, error) {
	return s.queries.SpanSummaries(ctx, projectID, q)
}
