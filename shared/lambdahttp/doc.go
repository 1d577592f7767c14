// Package lambdahttp runs a Plume http.Handler as a Lambda function behind API Gateway HTTP
// APIs (payload format 2.0) or a Lambda Function URL, which send the same event shape.
//
// Start answers every event buffered: the handler's whole answer is one invocation result, as
// API Gateway and a Function URL in BUFFERED invoke mode expect. StartStreaming answers the
// events of a Function URL in RESPONSE_STREAM invoke mode with Lambda's response streaming, so
// that what the handler flushes reaches the client at once (a model's answer token by token);
// the same function's API Gateway events are still answered buffered, since API Gateway HTTP
// APIs cannot stream.
package lambdahttp
