// Package lambdaemu runs a real AWS Lambda bootstrap binary under test and invokes it, standing
// in for aws-lambda-rie. It serves the Lambda Runtime API
// (https://docs.aws.amazon.com/lambda/latest/dg/runtimes-api.html) on 127.0.0.1, starts the
// binary as one execution environment with AWS_LAMBDA_RUNTIME_API pointing at it, and turns each
// Invoke call into one invocation event.
//
// Only the part of the Runtime API (version 2018-06-01) that a runtime such as
// github.com/aws/aws-lambda-go/lambda uses is implemented:
//
//   - GET /2018-06-01/runtime/invocation/next long-polls for the next event and sets the
//     Lambda-Runtime-Aws-Request-Id, Lambda-Runtime-Deadline-Ms,
//     Lambda-Runtime-Invoked-Function-Arn and Lambda-Runtime-Trace-Id headers.
//   - POST /2018-06-01/runtime/invocation/{id}/response completes an invocation with a result.
//     Responses larger than the synchronous payload limit (6,291,556 bytes,
//     lambdahttp.MaxResponsePayload) are refused with 413 and the invocation fails with
//     Function.ResponseSizeTooLarge, as in Lambda.
//   - POST /2018-06-01/runtime/invocation/{id}/error completes an invocation with a function
//     error, which Invoke returns as a *FunctionError.
//   - POST /2018-06-01/runtime/init/error reports a failed initialisation. The process is given a
//     short grace period to exit and is then stopped; every Invoke fails from then on.
//
// Accepted posts get 202 as in Lambda; a post for an unknown or already completed request id
// gets 400 InvalidRequestID, and an init error after initialisation gets 403. The Extensions,
// Telemetry and Logs APIs, client context and Cognito identity are not implemented.
//
// Response streaming (a Function URL in RESPONSE_STREAM mode) is: InvokeStream returns the
// response as the runtime posts it, chunk by chunk, up to Lambda's 20 MiB, and a stream the
// function ends with the Lambda-Runtime-Function-Error-Type and -Body trailers fails with its
// *FunctionError. Invoke reads a streamed post whole, as Lambda answers a synchronous call.
//
// An event larger than Lambda's request limit (6,291,456 bytes, lambdahttp.MaxRequestPayload)
// is refused before it reaches the function, with an error wrapping ErrRequestTooLarge and
// Lambda's message, as Lambda refuses the Invoke (RequestEntityTooLargeException).
//
// Like one Lambda execution environment, an Emulator runs one invocation at a time: concurrent
// Invoke calls queue. Unlike Lambda it never restarts the process. Once the process exits, for
// whatever reason, every pending and later Invoke fails promptly with an error wrapping
// ErrExited that carries the exit status and any init error.
//
// A test builds the function for the host and runs it:
//
//	// CGO_ENABLED=0 go build -tags lambda.norpc -o $DIR/bootstrap ./functions/x
//	emu, err := lambdaemu.Start(t.Context(), lambdaemu.Config{Binary: bin, Stderr: t.Output()})
//	require.NoError(t, err)
//	t.Cleanup(func() { _ = emu.Close() })
//	out, err := emu.Invoke(t.Context(), []byte(`{"name":"plume"}`))
package lambdaemu
