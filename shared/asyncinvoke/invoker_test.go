package asyncinvoke_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/asyncinvoke"
	"github.com/plumehq/plume/shared/deadletter"
)

// The tests run in synctest bubbles: time is fake (Lambda's minutes of delay pass at once, and
// nothing depends on the machine's speed), and a test fails if any goroutine an Invoker
// started is still blocked when the test ends.

const arn = "arn:aws:lambda:local:000000000000:function:EvaluatorFunction"

// logs collects an Invoker's JSON log lines.
type logs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logs) logger() *slog.Logger { return slog.New(slog.NewJSONHandler(l, nil)) }

// lines returns the lines logged at level.
func (l *logs) lines(t *testing.T, level string) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	dec := json.NewDecoder(bytes.NewReader(l.buf.Bytes()))
	for dec.More() {
		var line map[string]any
		require.NoError(t, dec.Decode(&line))
		if line["level"] == level {
			out = append(out, line)
		}
	}
	return out
}

// destination is an OnFailure that keeps the records it is given, or fails with err.
type destination struct {
	mu      sync.Mutex
	records []deadletter.Record
	err     error
}

func (d *destination) send(_ context.Context, r deadletter.Record) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.records = append(d.records, r)
	return d.err
}

// attempts is a handler that fails each event's first fail attempts and records the request
// ids it sees.
type attempts struct {
	mu         sync.Mutex
	fail       int
	requestIDs map[string][]string // by payload
}

func (a *attempts) handle(ctx context.Context, payload []byte) error {
	lc, ok := lambdacontext.FromContext(ctx)
	if !ok || lc.InvokedFunctionArn != arn {
		return errors.New("no lambda context")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.requestIDs == nil {
		a.requestIDs = map[string][]string{}
	}
	a.requestIDs[string(payload)] = append(a.requestIDs[string(payload)], lc.AwsRequestID)
	if len(a.requestIDs[string(payload)]) <= a.fail {
		return errors.New("model unavailable")
	}
	return nil
}

func TestRetriesThenSuccess(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &attempts{fail: 2}
		dest := &destination{}
		var delays []int
		var mu sync.Mutex
		inv := asyncinvoke.New(h.handle, asyncinvoke.Config{
			FunctionArn: arn,
			Delay: func(attempt int) time.Duration {
				mu.Lock()
				defer mu.Unlock()
				delays = append(delays, attempt)
				return time.Second
			},
			OnFailure: dest.send,
			Logger:    (&logs{}).logger(),
		})
		inv.Invoke([]byte(`{"n":1}`))
		require.NoError(t, inv.Close(t.Context()))

		assert.Equal(t, asyncinvoke.Stats{Invocations: 1, Retries: 2, Successes: 1}, inv.Stats())
		assert.Equal(t, []int{1, 2}, delays, "a delay before each retry")
		ids := h.requestIDs[`{"n":1}`]
		require.Len(t, ids, 3)
		assert.NotEmpty(t, ids[0])
		assert.Equal(t, []string{ids[0], ids[0], ids[0]}, ids, "one request id for every attempt, as Lambda")
		assert.Empty(t, dest.records)
	})
}

func TestRetriesExhausted(t *testing.T) {
	tests := []struct {
		name     string
		retries  int
		attempts int
	}{
		{"Lambda's default", 0, 3},
		{"one retry", 1, 2},
		{"no retries", -1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				h := &attempts{fail: 100}
				dest := &destination{}
				log := &logs{}
				inv := asyncinvoke.New(h.handle, asyncinvoke.Config{Retries: tt.retries, FunctionArn: arn, OnFailure: dest.send, Logger: log.logger()})
				before := time.Now()
				inv.Invoke([]byte(`{"detail":{"object":{"key":"spans/a"}}}`))
				require.NoError(t, inv.Close(t.Context()))

				assert.Equal(t, asyncinvoke.Stats{Invocations: 1, Retries: tt.attempts - 1, Failures: 1}, inv.Stats())
				require.Len(t, dest.records, 1)
				r := dest.records[0]
				requestID := h.requestIDs[`{"detail":{"object":{"key":"spans/a"}}}`][0]
				assert.Equal(t, deadletter.Version, r.Version)
				assert.False(t, r.Timestamp.Before(before.Truncate(time.Millisecond)))
				assert.Equal(t, deadletter.RequestContext{
					RequestID: requestID, FunctionARN: arn, Condition: deadletter.ConditionRetriesExhausted, ApproximateInvokeCount: tt.attempts,
				}, r.RequestContext)
				assert.JSONEq(t, `{"detail":{"object":{"key":"spans/a"}}}`, string(r.RequestPayload))
				assert.Equal(t, deadletter.ResponseContext{StatusCode: 200, ExecutedVersion: "$LATEST", FunctionError: "Unhandled"}, r.ResponseContext)
				assert.JSONEq(t, `{"errorMessage":"model unavailable","errorType":"errorString"}`, string(r.ResponsePayload))

				errs := log.lines(t, "ERROR")
				require.Len(t, errs, 1, "one line per give-up")
				assert.Equal(t, arn, errs[0]["function"])
				assert.Equal(t, requestID, errs[0]["request_id"])
				assert.EqualValues(t, tt.attempts, errs[0]["attempts"])
				assert.Equal(t, "model unavailable", errs[0]["error"])
				assert.NotContains(t, errs[0], "event", "the record holds the event")
				assert.Len(t, log.lines(t, "WARN"), tt.attempts-1, "one line per failed attempt that is retried")
			})
		})
	}
}

// TestGiveUpWithoutDestination: an event given up with nowhere to go is kept in the log, as is
// one whose destination refuses it.
func TestGiveUpWithoutDestination(t *testing.T) {
	tests := []struct {
		name       string
		dest       *destination
		destErrors int
	}{
		{"no destination", nil, 0},
		{"destination fails", &destination{err: errors.New("queue gone")}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				log := &logs{}
				cfg := asyncinvoke.Config{Retries: -1, FunctionArn: arn, Logger: log.logger()}
				if tt.dest != nil {
					cfg.OnFailure = tt.dest.send
				}
				inv := asyncinvoke.New(func(context.Context, []byte) error { return errors.New("boom") }, cfg)
				inv.Invoke([]byte(`{"key":"spans/b"}`))
				require.NoError(t, inv.Close(t.Context()))

				assert.Equal(t, asyncinvoke.Stats{Invocations: 1, Failures: 1, DestinationErrors: tt.destErrors}, inv.Stats())
				errs := log.lines(t, "ERROR")
				require.Len(t, errs, 1+tt.destErrors)
				assert.Equal(t, `{"key":"spans/b"}`, errs[len(errs)-1]["event"])
				if tt.destErrors > 0 {
					assert.Equal(t, "queue gone", errs[1]["error"])
				}
			})
		})
	}
}

func TestConcurrency(t *testing.T) {
	for _, limit := range []int{0, 1, 3} {
		t.Run(strconv.Itoa(limit), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				running, most := 0, 0
				inv := asyncinvoke.New(func(context.Context, []byte) error {
					mu.Lock()
					running++
					most = max(most, running)
					mu.Unlock()
					time.Sleep(time.Second)
					mu.Lock()
					running--
					mu.Unlock()
					return nil
				}, asyncinvoke.Config{Concurrency: limit})
				for range 10 {
					inv.Invoke([]byte(`{}`))
				}
				require.NoError(t, inv.Close(t.Context()))
				assert.Equal(t, max(limit, 1), most)
				assert.Equal(t, 10, inv.Stats().Successes)
			})
		})
	}
}

// TestCloseDrains: Close returns once every queued and running event is done, and retries
// waiting for their delay run at once instead of after it.
func TestCloseDrains(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		seen := map[string]int{}
		inv := asyncinvoke.New(func(_ context.Context, payload []byte) error {
			time.Sleep(time.Second)
			mu.Lock()
			defer mu.Unlock()
			seen[string(payload)]++
			if seen[string(payload)] == 1 && string(payload) == `"retried"` {
				return errors.New("first attempt fails")
			}
			return nil
		}, asyncinvoke.Config{Concurrency: 2, Delay: func(int) time.Duration { return time.Hour }, Logger: (&logs{}).logger()})
		inv.Invoke([]byte(`"retried"`))
		for range 5 {
			inv.Invoke([]byte(`"queued"`))
		}

		// Close must not wait out the hour: on fake time, a one-minute deadline tells.
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		require.NoError(t, inv.Close(ctx))
		assert.Equal(t, asyncinvoke.Stats{Invocations: 6, Retries: 1, Successes: 6}, inv.Stats())
		assert.Equal(t, map[string]int{`"retried"`: 2, `"queued"`: 5}, seen)
	})
}

// TestCloseTimeout: when Close's context ends first, running attempts are cancelled and every
// event left is given up, with its record, though Close has returned.
func TestCloseTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dest := &destination{}
		inv := asyncinvoke.New(func(ctx context.Context, _ []byte) error {
			<-ctx.Done()
			return ctx.Err()
		}, asyncinvoke.Config{FunctionArn: arn, OnFailure: dest.send, Logger: (&logs{}).logger()})
		// One runs until cancelled, the other waits for the one slot (events are not ordered).
		inv.Invoke([]byte(`{"n":1}`))
		inv.Invoke([]byte(`{"n":2}`))

		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		require.ErrorIs(t, inv.Close(ctx), context.DeadlineExceeded)
		synctest.Wait() // the give-ups finish after Close returned

		assert.Equal(t, asyncinvoke.Stats{Invocations: 2, Failures: 2}, inv.Stats())
		require.Len(t, dest.records, 2)
		var counts []int
		for _, r := range dest.records {
			assert.Equal(t, deadletter.ConditionEventAgeExceeded, r.RequestContext.Condition)
			counts = append(counts, r.RequestContext.ApproximateInvokeCount)
		}
		assert.ElementsMatch(t, []int{1, 0}, counts, "one attempted and cancelled, one never attempted")
	})
}

func TestInvokeRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log := &logs{}
		inv := asyncinvoke.New(func(context.Context, []byte) error {
			t.Error("refused event handled")
			return nil
		}, asyncinvoke.Config{Logger: log.logger()})
		inv.Invoke([]byte(`spans/not-json`))
		require.NoError(t, inv.Close(t.Context()))
		inv.Invoke([]byte(`{"late":true}`))

		assert.Equal(t, asyncinvoke.Stats{Rejected: 2}, inv.Stats())
		errs := log.lines(t, "ERROR")
		require.Len(t, errs, 2)
		assert.Equal(t, "spans/not-json", errs[0]["event"])
		assert.Equal(t, `{"late":true}`, errs[1]["event"])
	})
}

// TestInvokeCopiesPayload: the caller may reuse its buffer once Invoke returns.
func TestInvokeCopiesPayload(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var got []string
		var mu sync.Mutex
		inv := asyncinvoke.New(func(_ context.Context, payload []byte) error {
			mu.Lock()
			defer mu.Unlock()
			got = append(got, string(payload))
			return nil
		}, asyncinvoke.Config{})
		buf := []byte(`{"n":1}`)
		inv.Invoke(buf)
		copy(buf, `{"n":2}`)
		require.NoError(t, inv.Close(t.Context()))
		assert.Equal(t, []string{`{"n":1}`}, got)
	})
}

// TestRetryCountedAsItStarts: a retry is in Stats while it runs, so that what its handler does
// (a worker that stores a run's outcome, which a caller may read at once) is never seen before
// the retry that did it is counted.
func TestRetryCountedAsItStarts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		running, release := make(chan struct{}), make(chan struct{})
		var calls int
		inv := asyncinvoke.New(func(context.Context, []byte) error {
			if calls++; calls == 1 {
				return errors.New("the worker died")
			}
			close(running)
			<-release
			return nil
		}, asyncinvoke.Config{FunctionArn: arn, Delay: func(int) time.Duration { return time.Second }, Logger: (&logs{}).logger()})
		inv.Invoke([]byte(`{"n":1}`))
		<-running
		assert.Equal(t, 1, inv.Stats().Retries, "the retry, while it runs")
		close(release)
		require.NoError(t, inv.Close(t.Context()))
		assert.Equal(t, asyncinvoke.Stats{Invocations: 1, Retries: 1, Successes: 1}, inv.Stats())
	})
}
