package app

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/plumehq/plume/shared/web"
)

// Worker is a Lambda function of template.yaml that serves no HTTP routes: an event source
// invokes it, such as an EventBridge schedule (the monitors' evaluator, which ignores its event)
// or S3 notifications (the evaluator, which reads the objects the event names).
type Worker struct {
	// Name is the function's logical id in template.yaml ("MonitorFunction"), and its Makefile
	// target is build-<Name>.
	Name string
	// Build makes the function's job from the Env, failing for configuration it cannot run
	// with, as Function.Build does.
	Build func(*Env) (Job, error)
	// Answer is what a successful invocation answers the event source: null when nil. A
	// stream consumer with a tumbling window must answer a state.
	Answer []byte
}

// Job is one invocation of a Worker with its event, the JSON the event source sent. The error
// it returns goes to the Lambda runtime, which counts the invocation in the function's Errors
// metric and, for an asynchronous invocation, retries the event and then sends it to the
// function's failure destination: a job returns one when its run failed and should be tried
// again, and logs what it did either way.
type Job func(ctx context.Context, event []byte) error

// MainWorker is Main for a Worker: it builds w's job once, at init (a worker that cannot be
// built logs why and exits 1), and runs it once per event, whatever the event holds (a
// scheduled event, an S3 notification, or {} from `aws lambda invoke`).
func MainWorker(w Worker) {
	job, err := buildWorker(context.Background(), w, os.Getenv)
	if err != nil {
		slog.Error("cannot start", "function", w.Name, "error", err)
		os.Exit(1)
	}
	lambda.Start(handlerOf(w, job))
}

// buildWorker is MainWorker up to the job.
func buildWorker(ctx context.Context, w Worker, getenv func(string) string) (Job, error) {
	env, err := envFrom(ctx, getenv)
	if err != nil {
		return nil, err
	}
	return w.Build(env)
}

// jobHandler runs a Job as a Lambda handler. The job's logs carry the invocation's request
// id, as the HTTP functions' logs carry theirs.
type jobHandler struct {
	job    Job
	answer []byte
}

var _ lambda.Handler = jobHandler{}

// handlerOf is the handler of w's job.
func handlerOf(w Worker, job Job) jobHandler {
	if w.Answer == nil {
		return jobHandler{job: job, answer: []byte("null")}
	}
	return jobHandler{job: job, answer: w.Answer}
}

// Invoke runs the job on the event and answers h.answer.
func (h jobHandler) Invoke(ctx context.Context, event []byte) ([]byte, error) {
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		ctx = web.WithRequestID(ctx, lc.AwsRequestID)
	}
	if err := h.job(ctx, event); err != nil {
		return nil, err
	}
	return h.answer, nil
}
