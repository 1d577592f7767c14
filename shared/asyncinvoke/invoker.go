package asyncinvoke

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/google/uuid"

	"github.com/plumehq/plume/shared/deadletter"
	"github.com/plumehq/plume/shared/lambdaemu"
	"github.com/plumehq/plume/shared/textcut"
)

// DefaultRetries is Lambda's default MaximumRetryAttempts.
const DefaultRetries = 2

// destinationTimeout bounds one call of Config.OnFailure.
const destinationTimeout = 30 * time.Second

// maxLoggedEvent is the most bytes of an event a log line holds.
const maxLoggedEvent = 8 << 10

// Handler runs one attempt of an event, as a function's handler runs one invocation; an error
// fails the attempt.
type Handler func(ctx context.Context, payload []byte) error

// Config is how an Invoker retries and where events it gives up on go. The zero Config is
// Lambda's defaults, with give-ups logged only.
type Config struct {
	// Retries is the number of retries after a failed first attempt, Lambda's
	// MaximumRetryAttempts: 0 means DefaultRetries (2), a negative value means none. Lambda
	// accepts 0 to 2; more are honoured here.
	Retries int
	// Delay is how long an event waits before retry number attempt (1 for the first retry);
	// nil: Lambda's one minute, then two minutes. Tests pass tiny delays.
	Delay func(attempt int) time.Duration
	// Concurrency is the most attempts run at once (0: 1).
	Concurrency int
	// FunctionArn is the ARN the handler's lambdacontext and the invocation records carry.
	FunctionArn string
	// OnFailure receives the invocation record of each event given up, as an on-failure
	// destination does (deadletter.Queue.Send); nil: give-ups are only logged. Its context is
	// not cancelled by Close, and ends after 30 seconds.
	OnFailure func(ctx context.Context, r deadletter.Record) error
	// Logger receives the log lines (nil: slog.Default(), read at each line).
	Logger *slog.Logger
}

// Stats counts what an Invoker did.
type Stats struct {
	// Invocations is the number of events Invoke accepted.
	Invocations int
	// Retries is the number of attempts that were not an event's first, counted as each starts.
	Retries int
	// Successes is the number of events an attempt handled.
	Successes int
	// Failures is the number of events given up: logged, and sent to OnFailure when set.
	Failures int
	// DestinationErrors is the number of given-up events OnFailure returned an error for.
	DestinationErrors int
	// Rejected is the number of events Invoke refused: not JSON, or after Close.
	Rejected int
}

// Invoker runs one function's events asynchronously. Its methods may be called from any
// goroutine.
type Invoker struct {
	handle      Handler
	cfg         Config
	retries     int
	slots       chan struct{} // one per attempt running
	ctx         context.Context
	abort       context.CancelFunc // ends ctx when Close stops waiting
	closing     chan struct{}      // closed by Close: retries stop waiting for their delay
	closingOnce sync.Once
	events      sync.WaitGroup

	mu     sync.Mutex
	closed bool
	stats  Stats
}

// New returns an Invoker that runs h with cfg.
func New(h Handler, cfg Config) *Invoker {
	ctx, abort := context.WithCancel(context.Background())
	retries := cfg.Retries
	switch {
	case retries == 0:
		retries = DefaultRetries
	case retries < 0:
		retries = 0
	}
	if cfg.Delay == nil {
		cfg.Delay = lambdaDelay
	}
	return &Invoker{
		handle:  h,
		cfg:     cfg,
		retries: retries,
		slots:   make(chan struct{}, max(cfg.Concurrency, 1)),
		ctx:     ctx,
		abort:   abort,
		closing: make(chan struct{}),
	}
}

// lambdaDelay is Lambda's wait before each retry: one minute, then two.
func lambdaDelay(attempt int) time.Duration {
	if attempt <= 1 {
		return time.Minute
	}
	return 2 * time.Minute
}

// Invoke queues an event and returns at once, as an asynchronous invocation returns 202; the
// payload is copied. An event that is not JSON, or that comes after Close, is refused as
// Lambda's Invoke API would refuse it; since Invoke reports nothing, a refusal is logged with
// the event and counted in Stats.Rejected.
func (inv *Invoker) Invoke(payload []byte) {
	if !json.Valid(payload) {
		inv.reject("the event is not JSON", payload)
		return
	}
	inv.mu.Lock()
	if inv.closed {
		inv.mu.Unlock()
		inv.reject("the invoker is closed", payload)
		return
	}
	inv.stats.Invocations++
	// Added under mu, before Close can set closed and wait: Add never races with Wait.
	inv.events.Add(1)
	inv.mu.Unlock()
	go inv.run(bytes.Clone(payload), uuid.NewString())
}

// reject logs and counts an event Invoke refused.
func (inv *Invoker) reject(why string, payload []byte) {
	inv.count(func(s *Stats) { s.Rejected++ })
	inv.logger().Error("asyncinvoke: event refused, "+why, "function", inv.cfg.FunctionArn, "event", textcut.Quote(string(payload), maxLoggedEvent))
}

// Close stops accepting events and waits until every accepted event has succeeded or been
// given up. Events waiting for a retry are retried at once rather than after their delay, so
// that a process can stop without waiting minutes, and still with every attempt an event is
// owed. If ctx ends first, Close cancels the context of the attempts running, gives up every
// event without further attempts (logged and sent to OnFailure with the condition
// EventAgeExceeded, as Lambda treats an event it ran out of time for) and returns ctx's error
// without waiting for that to finish.
func (inv *Invoker) Close(ctx context.Context) error {
	inv.mu.Lock()
	inv.closed = true
	inv.mu.Unlock()
	inv.closingOnce.Do(func() { close(inv.closing) })

	done := make(chan struct{})
	go func() {
		inv.events.Wait()
		close(done)
	}()
	select {
	case <-done:
		inv.abort()
		return nil
	case <-ctx.Done():
		select {
		case <-done: // both were ready
			inv.abort()
			return nil
		default:
		}
		inv.abort()
		return fmt.Errorf("asyncinvoke: events still running at close: %w", ctx.Err())
	}
}

// Stats returns the counts so far.
func (inv *Invoker) Stats() Stats {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	return inv.stats
}

// run takes one event through its attempts.
func (inv *Invoker) run(payload []byte, requestID string) {
	defer inv.events.Done()
	attempts := 0
	var err error
	// One pass per attempt: at most retries+1 passes.
	for attempts <= inv.retries {
		if attempts > 0 {
			inv.wait(inv.cfg.Delay(attempts))
		}
		if inv.ctx.Err() != nil {
			break
		}
		ran, attemptErr := inv.attempt(payload, requestID, attempts > 0)
		if !ran {
			break
		}
		attempts, err = attempts+1, attemptErr
		if err == nil {
			inv.count(func(s *Stats) { s.Successes++ })
			return
		}
		if attempts <= inv.retries {
			inv.logger().Warn("asyncinvoke: attempt failed, will retry", "function", inv.cfg.FunctionArn, "request_id", requestID, "attempt", attempts, "error", err)
		}
	}
	condition := deadletter.ConditionRetriesExhausted
	if attempts <= inv.retries {
		// Stopped by Close before its attempts were done.
		condition = deadletter.ConditionEventAgeExceeded
		err = errors.Join(err, fmt.Errorf("given up at close after %d of %d attempts", attempts, inv.retries+1))
	}
	inv.giveUp(payload, requestID, attempts, condition, err)
}

// attempt runs one attempt once a slot is free, counted in Stats.Retries as it starts when it
// is a retry (what the attempt does, such as storing a run's outcome, may be seen before it
// returns); ran is false when the invoker was aborted first.
func (inv *Invoker) attempt(payload []byte, requestID string, retry bool) (ran bool, err error) {
	select {
	case inv.slots <- struct{}{}:
	case <-inv.ctx.Done():
		return false, nil
	}
	defer func() { <-inv.slots }()
	if inv.ctx.Err() != nil { // both were ready
		return false, nil
	}
	if retry {
		inv.count(func(s *Stats) { s.Retries++ })
	}
	ctx := lambdacontext.NewContext(inv.ctx, &lambdacontext.LambdaContext{AwsRequestID: requestID, InvokedFunctionArn: inv.cfg.FunctionArn})
	return true, inv.handle(ctx, payload)
}

// wait sleeps for d, or less when Close was called or gave up waiting.
func (inv *Invoker) wait(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-inv.closing:
	case <-inv.ctx.Done():
	}
}

// giveUp logs and counts an event that will not be attempted again, and sends its record to
// OnFailure.
func (inv *Invoker) giveUp(payload []byte, requestID string, attempts int, condition string, cause error) {
	inv.count(func(s *Stats) { s.Failures++ })
	args := []any{"function", inv.cfg.FunctionArn, "request_id", requestID, "attempts", attempts, "condition", condition, "error", cause}
	if inv.cfg.OnFailure == nil {
		// The log is the event's only trace: keep it there.
		args = append(args, "event", textcut.Quote(string(payload), maxLoggedEvent))
	}
	inv.logger().Error("asyncinvoke: event given up", args...)
	if inv.cfg.OnFailure == nil {
		return
	}
	// Not inv.ctx: a record is still delivered when Close stopped waiting.
	ctx, cancel := context.WithTimeout(context.Background(), destinationTimeout)
	defer cancel()
	if err := inv.cfg.OnFailure(ctx, inv.record(payload, requestID, attempts, condition, cause)); err != nil {
		inv.count(func(s *Stats) { s.DestinationErrors++ })
		inv.logger().Error("asyncinvoke: invocation record not sent to the on-failure destination", "function", inv.cfg.FunctionArn, "request_id", requestID,
			"error", err, "event", textcut.Quote(string(payload), maxLoggedEvent))
	}
}

// record is the invocation record Lambda would send for the event.
func (inv *Invoker) record(payload []byte, requestID string, attempts int, condition string, cause error) deadletter.Record {
	r := deadletter.Record{
		Version:   deadletter.Version,
		Timestamp: time.Now().UTC().Truncate(time.Millisecond),
		RequestContext: deadletter.RequestContext{
			RequestID:              requestID,
			FunctionARN:            inv.cfg.FunctionArn,
			Condition:              condition,
			ApproximateInvokeCount: attempts,
		},
		RequestPayload:  payload,
		ResponseContext: deadletter.ResponseContext{StatusCode: 200, ExecutedVersion: deadletter.ExecutedVersionLatest},
		ResponsePayload: errorPayload(cause),
	}
	if attempts > 0 {
		r.ResponseContext.FunctionError = deadletter.FunctionErrorUnhandled
	}
	return r
}

// errorPayload is the error object a Lambda runtime reports for err: a function error's own
// type and message when a real bootstrap failed under lambdaemu, else err's message and its
// type's name (the name aws-lambda-go reports: "errorString" for errors.New).
func errorPayload(err error) json.RawMessage {
	e := struct {
		Message string `json:"errorMessage"`
		Type    string `json:"errorType,omitempty"`
	}{}
	var fe *lambdaemu.FunctionError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &fe):
		e.Message, e.Type = fe.Message, fe.Type
	default:
		e.Message = err.Error()
		t := reflect.TypeOf(err)
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		e.Type = t.Name()
	}
	b, _ := json.Marshal(e) // two strings: cannot fail
	return b
}

// count updates the stats under the lock.
func (inv *Invoker) count(update func(*Stats)) {
	inv.mu.Lock()
	defer inv.mu.Unlock()
	update(&inv.stats)
}

// logger is the configured logger or the default one.
func (inv *Invoker) logger() *slog.Logger {
	if inv.cfg.Logger != nil {
		return inv.cfg.Logger
	}
	return slog.Default()
}
