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
	// BuildAnswering, when set instead of Build, makes a job whose answer depends on the
	// event, such as a tumbling window's state.
	BuildAnswering func(*Env) (AnsweringJob, error)
}

// Job is one invocation of a Worker with its event, the JSON the event source sent. The error
// it returns goes to the Lambda runtime, which counts the invocation in the function's Errors
// metric and, for an asynchronous invocation, retries the event and then sends it to the
// function's failure destination: a job returns one when its run failed and should be tried
// again, and logs what it did either way.
type Job func(ctx context.Context, event []byte) error

// AnsweringJob is a Job that answers the event source: the answer of a successful invocation.
type AnsweringJob func(ctx context.Context, event []byte) ([]byte, error)

// MainWorker is Main for a Worker: it builds w's job once, at init (a worker that cannot be
// built logs why and exits 1), and runs it once per event, whatever the event holds (a
// scheduled event, an S3 notification, or {} from `aws lambda invoke`).
func MainWorker(w Worker) {
	job, err := buildWorker(context.Background(), w, os.Getenv)
	if err != nil {
		slog.Error("cannot start", "function", w.Name, "error", err)
		os.Exit(1)
	}
	lambda.Start(jobHandler{job: job})
}

// buildWorker is MainWorker up to the job, which answers w.Answer unless it answers itself.
func buildWorker(ctx context.Context, w Worker, getenv func(string) string) (AnsweringJob, error) {
	env, err := envFrom(ctx, getenv)
	if err != nil {
		return nil, err
	}
	if w.BuildAnswering != nil {
		return w.BuildAnswering(env)
	}
	job, err := w.Build(env)
	if err != nil {
		return nil, err
	}
	return answering(w.Answer, job), nil
}

// answering is job answering answer (null when nil) when it succeeds.
func answering(answer []byte, job Job) AnsweringJob {
	if answer == nil {
		answer = []byte("null")
	}
	return func(ctx context.Context, event []byte) ([]byte, error) {
		if err := job(ctx, event); err != nil {
			return nil, err
		}
		return answer, nil
	}
}

// jobHandler runs a job as a Lambda handler. The job's logs carry the invocation's request
// id, as the HTTP functions' logs carry theirs.
type jobHandler struct {
	job AnsweringJob
}

var _ lambda.Handler = jobHandler{}

// Invoke runs the job on the event and answers what it answers.
func (h jobHandler) Invoke(ctx context.Context, event []byte) ([]byte, error) {
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		ctx = web.WithRequestID(ctx, lc.AwsRequestID)
	}
	return h.job(ctx, event)
}
