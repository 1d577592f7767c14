package lambdaemu

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/plumehq/plume/shared/lambdahttp"
)

// Lambda's limits for a synchronous invocation (lambdahttp documents how they were measured):
// maxRequest for the event, maxPayload for the response.
const (
	maxRequest = lambdahttp.MaxRequestPayload
	maxPayload = lambdahttp.MaxResponsePayload
)

// ErrRequestTooLarge is wrapped by the error Invoke returns for an event over Lambda's limit
// (6,291,456 bytes), with Lambda's message; the function does not run. Lambda answers such an
// Invoke RequestEntityTooLargeException (HTTP 413), and API Gateway the client 413.
var ErrRequestTooLarge = errors.New("lambdaemu: RequestEntityTooLargeException")

// FunctionError is a failure the function reported through the Runtime API: an invocation
// error (Invoke returns it as is) or an init error (wrapped in the ErrExited error).
type FunctionError struct {
	// Type is the errorType, for example the Go type name of the error a handler returned.
	Type string
	// Message is the errorMessage.
	Message string
	// StackTrace holds one line per frame, when the runtime sent a stack trace.
	StackTrace []string
}

// Error returns "Type: Message".
func (e *FunctionError) Error() string {
	if e.Type == "" {
		return e.Message
	}
	return e.Type + ": " + e.Message
}

// invocation is one event on its way through the runtime.
type invocation struct {
	id       string
	traceID  string
	payload  []byte
	deadline time.Time
	result   chan result // buffered, so a runtime answering an abandoned invocation never blocks

	// stream is set for an invocation made with InvokeStream: the response handler hands the
	// response over on it as soon as the runtime begins to post it.
	stream    streamHandoff
	streaming bool // the runtime has begun to post the streamed response (guarded by mu)
}

// result is what the runtime answered: a body, or an error (usually a *FunctionError).
type result struct {
	body []byte
	err  error
}

// Invoke sends payload to the function as one invocation event and returns the response body
// the function posted. It returns a *FunctionError if the function posted an error, an error
// wrapping ErrExited if the process has exited or exits before answering, ErrClosed after
// Close, and an error wrapping context.DeadlineExceeded if the invocation outlives
// Config.Timeout. Concurrent calls queue and are served one at a time; the deadline starts when
// a call leaves the queue. An invocation abandoned because ctx ended or the deadline passed is
// not cancelled in the function: its eventual answer is discarded, and the next invocation
// is handed out once the runtime asks for it.
//
// A response the runtime streams (as for a Function URL in RESPONSE_STREAM mode) is read whole,
// as Lambda buffers the response of a synchronous invocation: InvokeStream reads it as it comes.
func (e *Emulator) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	if err := e.acquire(ctx, payload); err != nil {
		return nil, err
	}
	defer e.release()

	inv := e.newInvocation(payload)
	ctx, cancel := context.WithDeadline(ctx, inv.deadline)
	defer cancel()
	if err := e.handOver(ctx, inv); err != nil {
		return nil, err
	}
	select {
	case r := <-inv.result:
		return r.body, r.err
	case <-e.exited:
		select { // the runtime may have answered just before exiting
		case r := <-inv.result:
			return r.body, r.err
		default:
			return nil, e.exitErr
		}
	case <-ctx.Done():
		return nil, e.abandoned(ctx, inv, "waiting for the function")
	}
}

// acquire checks payload and waits for the execution environment to be free: the caller then
// owns it until it calls release.
func (e *Emulator) acquire(ctx context.Context, payload []byte) error {
	if len(payload) > maxRequest {
		return fmt.Errorf("%w: Request must be smaller than %d bytes for the InvokeFunction operation (the event has %d)", ErrRequestTooLarge, maxRequest, len(payload))
	}
	select {
	case e.turn <- struct{}{}:
		return nil
	case <-e.exited:
		return e.exitErr
	case <-ctx.Done():
		return fmt.Errorf("lambdaemu: waiting for earlier invocations: %w", ctx.Err())
	}
}

// release frees the execution environment for the next invocation.
func (e *Emulator) release() { <-e.turn }

// newInvocation is the invocation of payload, its deadline Config.Timeout from now.
func (e *Emulator) newInvocation(payload []byte) *invocation {
	return &invocation{
		id:       newRequestID(),
		traceID:  newTraceID(),
		payload:  payload,
		deadline: time.Now().Add(e.timeout),
		result:   make(chan result, 1),
	}
}

// handOver gives inv to the runtime's next GET /next.
func (e *Emulator) handOver(ctx context.Context, inv *invocation) error {
	select {
	case e.invokes <- inv:
		return nil
	case <-e.exited:
		return e.exitErr
	case <-ctx.Done():
		return e.abandoned(ctx, inv, "waiting for the runtime to ask for it")
	}
}

// abandoned describes an invocation given up because ctx ended while waiting.
func (e *Emulator) abandoned(ctx context.Context, inv *invocation, waiting string) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && !time.Now().Before(inv.deadline) {
		return fmt.Errorf("lambdaemu: invocation %s timed out after %s %s: %w", inv.id, e.timeout, waiting, ctx.Err())
	}
	return fmt.Errorf("lambdaemu: invocation %s abandoned %s: %w", inv.id, waiting, ctx.Err())
}

// newRequestID returns a random (version 4) UUID, the form of Lambda request ids.
func newRequestID() string {
	b := randomBytes(16)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b)
	return strings.Join([]string{h[:8], h[8:12], h[12:16], h[16:20], h[20:]}, "-")
}

// newTraceID returns an X-Ray trace header for an unsampled trace.
func newTraceID() string {
	return fmt.Sprintf("Root=1-%08x-%s;Parent=%s;Sampled=0",
		time.Now().Unix(), hex.EncodeToString(randomBytes(12)), hex.EncodeToString(randomBytes(8)))
}

// randomBytes returns n bytes from crypto/rand, whose Read never fails.
func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}
