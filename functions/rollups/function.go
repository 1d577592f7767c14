// Package rollups is RollupFunction: the consumer of the table's change stream that keeps the
// trace and session aggregates (ddb.AggregateStore), the metrics' rollups (package rollup; the
// store is ddb.RollupStore) and the list index of spans, traces and sessions (package
// listindex; the store is ddb.ListIndexStore), as app.Env.StreamConsumer applies them.
package rollups

import (
	"context"

	"github.com/plumehq/plume/internal/app"
	"github.com/plumehq/plume/shared/ddb"
)

// Function is RollupFunction of template.yaml, invoked by its DynamoDB stream event source
// mapping with a batch of one shard's records. A failed batch is returned as an error: Lambda
// retries it (in order, holding the shard back) until it succeeds, and the stores add each
// record once whatever is retried.
var Function = app.Worker{
	Name: "RollupFunction",
	Build: func(e *app.Env) (app.Job, error) {
		apply, err := e.StreamConsumer()
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, event []byte) error {
			shard, records, err := ddb.DecodeStreamEvent(event)
			if err != nil {
				return err
			}
			return apply(ctx, shard, records)
		}, nil
	},
	// With a tumbling window, Lambda takes an answer without a state for a failure.
	Answer: []byte(`{"state":{}}`),
}
