package app

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/web"
)

// TestJobHandler feeds the sample scheduled event (events/monitors) through a worker's Lambda
// handler, as the runtime does: each event runs the job once, with the invocation's request id
// for its logs, and the job's error is the invocation's.
func TestJobHandler(t *testing.T) {
	event, err := os.ReadFile(filepath.Join("..", "..", "events", "monitors", "scheduled.json"))
	require.NoError(t, err)
	failed := errors.New("evaluation failed")
	tests := []struct {
		name    string
		answer  []byte
		event   []byte
		err     error
		want    []byte
		wantErr error
	}{
		{name: "scheduled event", event: event, want: []byte("null")},
		{name: "manual invoke", event: []byte("{}"), want: []byte("null")},
		{name: "failed run", event: event, err: failed, wantErr: failed},
		{name: "stream consumer", answer: []byte(`{"state":{}}`), event: event, want: []byte(`{"state":{}}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs, requestID := 0, ""
			h := jobHandler{job: answering(tt.answer, func(ctx context.Context, _ []byte) error {
				runs++
				requestID = web.RequestID(ctx)
				return tt.err
			})}
			ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "req-1"})

			out, err := h.Invoke(ctx, tt.event)

			assert.Equal(t, 1, runs)
			assert.Equal(t, "req-1", requestID)
			assert.ErrorIs(t, err, tt.wantErr)
			assert.Equal(t, tt.want, out)
		})
	}
}

// TestBuildWorker: a worker is built from the configuration once; one that cannot be
// configured is not built.
func TestBuildWorker(t *testing.T) {
	built := 0
	w := Worker{Name: "TestFunction", Build: func(e *Env) (Job, error) {
		built++
		assert.Equal(t, "plume-test", e.Config.Table)
		return func(context.Context, []byte) error { return nil }, nil
	}}
	prev := slog.Default() // buildWorker sets the JSON logger, as a main does
	t.Cleanup(func() { slog.SetDefault(prev) })
	_, err := buildWorker(context.Background(), w, func(string) string { return "" })
	require.ErrorContains(t, err, "TABLE_NAME is not set")
	assert.Zero(t, built)

	t.Setenv("AWS_REGION", "us-east-1")
	env := map[string]string{"TABLE_NAME": "plume-test"}
	job, err := buildWorker(context.Background(), w, func(k string) string { return env[k] })
	require.NoError(t, err)
	assert.NotNil(t, job)
	assert.Equal(t, 1, built)
}

// TestBuildAnsweringWorker: a worker that answers itself (a stream consumer answering its
// window's state) answers what its job answers, not the static Answer.
func TestBuildAnsweringWorker(t *testing.T) {
	t.Setenv("AWS_REGION", "us-east-1")
	prev := slog.Default()
	t.Cleanup(func() { slog.SetDefault(prev) })
	w := Worker{Name: "TestFunction", Answer: []byte(`{"state":{}}`), BuildAnswering: func(*Env) (AnsweringJob, error) {
		return func(_ context.Context, event []byte) ([]byte, error) {
			return append([]byte("answer to "), event...), nil
		}, nil
	}}
	job, err := buildWorker(context.Background(), w, func(k string) string { return map[string]string{"TABLE_NAME": "plume-test"}[k] })
	require.NoError(t, err)
	out, err := jobHandler{job: job}.Invoke(context.Background(), []byte("{}"))
	require.NoError(t, err)
	assert.Equal(t, "answer to {}", string(out))
}
