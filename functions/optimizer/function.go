package optimizer

import (
	"context"
	"net/http"

	"github.com/plumehq/plume/internal/app"
	"github.com/plumehq/plume/shared/dataset"
	"github.com/plumehq/plume/shared/ddb"
)

// Function is OptimizerFunction of template.yaml: the runs API, and the proposals (issues and
// previews) that say which run to start.
var Function = app.Function{
	Name:   "OptimizerFunction",
	Routes: Routes,
	Build: func(e *app.Env) (http.Handler, error) {
		queue, err := e.OptimizationQueue()
		if err != nil {
			return nil, err
		}
		examples, err := e.OptimizationExamples()
		if err != nil {
			return nil, err
		}
		datasets, err := datasetsOf(e)
		if err != nil {
			return nil, err
		}
		return NewHandler(NewService(e.Optimizations(), e.Prompts(), e.JudgeStore(), e.Judges(), queue, e.Now).ReadDatasets(datasets),
			NewProposals(e.Prompts(), e.JudgeStore(), e.JudgeStore(), e.FeedbackStore(), examples, e.Now), e.Authn()), nil
	},
}

// WorkerFunction is OptimizerWorkerFunction of template.yaml: it executes the runs of the
// optimization queue (SQS events; plume-local and the tests send it the messages themselves).
var WorkerFunction = app.Worker{
	Name: "OptimizerWorkerFunction",
	Build: func(e *app.Env) (app.Job, error) {
		w, err := WorkerFromEnv(context.Background(), e)
		if err != nil {
			return nil, err
		}
		return w.Handle, nil
	},
}

// WorkerFromEnv builds the Worker of an Env.
func WorkerFromEnv(ctx context.Context, e *app.Env) (*Worker, error) {
	models, err := e.Models(ctx)
	if err != nil {
		return nil, err
	}
	examples, err := e.OptimizationExamples()
	if err != nil {
		return nil, err
	}
	blobs, err := e.Blobs()
	if err != nil {
		return nil, err
	}
	queue, err := e.OptimizationQueue()
	if err != nil {
		return nil, err
	}
	datasets, err := datasetsOf(e)
	if err != nil {
		return nil, err
	}
	w := NewWorker(e.Optimizations(), blobs, queue, examples, e.JudgeStore(), e.FeedbackStore(), e.Optimizations(), models, models.JudgeModel(), e.Now)
	return w.SimulateWith(e.Config.SimulationModels...).ReadDatasets(datasets), nil
}

// datasetsOf reads the datasets of an Env: their versions in the table, their rows in the
// bucket.
func datasetsOf(e *app.Env) (*dataset.Service, error) {
	blobs, err := e.Blobs()
	if err != nil {
		return nil, err
	}
	return dataset.NewService(ddb.NewDatasetStore(e.Table()), blobs, e.Now), nil
}
