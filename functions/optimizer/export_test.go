package optimizer

import (
	"context"

	"github.com/plumehq/plume/shared/optimize"
)

// LoadExamples is the worker's loadExamples, for the tests that count what reading a run's
// examples costs.
func (w *Worker) LoadExamples(ctx context.Context, r optimize.Run) ([]optimize.Example, *optimize.ReportDataset, error) {
	return w.loadExamples(ctx, r)
}
