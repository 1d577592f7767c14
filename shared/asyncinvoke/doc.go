// Package asyncinvoke runs a function's handler in-process the way Lambda runs an
// asynchronously invoked function (InvocationType Event, S3 and EventBridge notifications),
// for plume-local and for tests that have no Lambda service: Invoke queues the event and
// returns at once; the event is attempted, retried after a delay when the attempt fails, and
// given up after the last retry, when an invocation record goes to the on-failure destination
// (a shared/deadletter queue) exactly as Lambda would write it.
//
// What it keeps of Lambda (https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html):
//
//   - two retries by default (MaximumRetryAttempts), one minute after the first attempt and
//     two minutes after the second;
//   - one request id per event, the same for every attempt, in the handler's context as a
//     lambdacontext.LambdaContext (with the function's ARN), so that handler code that reads
//     it runs unchanged;
//   - at most Config.Concurrency attempts at once (reserved concurrency); an event waiting for
//     its retry does not hold a slot;
//   - no order between events, and no guarantee that an event is not run twice by its
//     callers: handlers must be idempotent, as on Lambda;
//   - payloads must be JSON, as Lambda's Invoke API requires.
//
// What it leaves out: the maximum event age, throttling retries, function timeouts (the
// handler's context has no deadline) and on-success destinations. A handler that panics is
// not recovered: a bug crashes the process loudly instead of becoming one more retried error.
//
// Nothing is lost silently: every event given up is logged (function, request id, attempts,
// error) and counted in Stats, and is logged in full when it has no destination to go to or
// the destination refuses it.
//
// A test that drives a real bootstrap under shared/lambdaemu hands the emulator to New through
// a Handler:
//
//	inv := asyncinvoke.New(func(ctx context.Context, payload []byte) error {
//		_, err := emu.Invoke(ctx, payload) // a *lambdaemu.FunctionError when the function fails
//		return err
//	}, asyncinvoke.Config{Delay: func(int) time.Duration { return time.Millisecond }})
package asyncinvoke
