// Package rollups is RollupFunction: the consumer of the table's change stream that keeps the
// trace and session aggregates (ddb.AggregateStore), the metrics' rollups (package rollup; the
// store is ddb.RollupStore) and the list index of spans, traces and sessions (package
// listindex; the store is ddb.ListIndexStore), as app.Env.StreamConsumer applies them.
package rollups

import (
	"context"
	"encoding/json"

	"github.com/plumehq/plume/internal/app"
	"github.com/plumehq/plume/shared/ddb"
)

// Function is RollupFunction of template.yaml, invoked by its DynamoDB stream event source
// mapping with a batch of one shard's records and the state of the shard's tumbling window,
// which it answers. A failed batch is returned as an error: Lambda retries it (in order, with
// the same state, holding the shard back) until it succeeds, and the stores add each record
// once whatever is retried.
var Function = app.Worker{
	Name: "RollupFunction",
	BuildAnswering: func(e *app.Env) (app.AnsweringJob, error) {
		apply, err := e.StreamConsumer()
		if err != nil {
			return nil, err
		}
		return func(ctx context.Context, event []byte) ([]byte, error) {
			shard, records, window, err := ddb.DecodeStreamWindow(event)
			if err != nil {
				return nil, err
			}
			state, err := apply(ctx, shard, records, window)
			if err != nil {
				return nil, err
			}
			return answer(state)
		}, nil
	},
}

// answer is the invocation's answer to Lambda: the window's state, {} when it holds nothing
// (without a state Lambda takes the invocation for a failure).
func answer(state map[string]string) ([]byte, error) {
	if state == nil {
		state = map[string]string{}
	}
	return json.Marshal(struct {
		State map[string]string `json:"state"`
	}{state})
}
