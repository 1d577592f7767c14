// Package fakemodel is a deterministic language-model server for tests and local development:
// it speaks the wire protocols of OpenAI Chat Completions, Anthropic Messages and Amazon
// Bedrock Converse, so the code under test calls it exactly as it calls a real provider, with
// only the base URL changed. Model calls in Plume's tests go to this server, never to the
// network.
//
// In a test, serve it with net/http/httptest (or use package fakemodeltest):
//
//	srv := fakemodel.New(fakemodel.WithRules(
//		fakemodel.Rule{Match: fakemodel.Contains("refund"), Reply: fakemodel.Reply{Text: "No."}},
//		fakemodel.Rule{Reply: fakemodel.Reply{Status: 429, RetryAfter: time.Second}, Times: 2},
//	))
//	ts := httptest.NewServer(srv)
//	defer ts.Close()
//	// OpenAI clients: base URL ts.URL+"/v1"; Anthropic clients: base URL ts.URL;
//	// Bedrock clients: endpoint ts.URL (AWS_ENDPOINT_URL_BEDROCK_RUNTIME).
//
// Endpoints:
//
//   - POST /v1/chat/completions (and /chat/completions): OpenAI Chat Completions, including
//     response_format json_schema and json_object, forced function tools, and SSE streaming
//     (stream, stream_options.include_usage).
//   - POST /v1/messages: Anthropic Messages, including forced tools (tool_choice "tool" or
//     "any") and output_config.format / output_format json_schema.
//   - POST /model/{modelId}/converse and /model/{modelId}/converse-stream: Amazon Bedrock
//     Converse and ConverseStream (the model id escaped as one path segment), SigV4-signed
//     requests only; forced tools (toolChoice tool or any), and streams in the AWS event stream
//     encoding (application/vnd.amazon.eventstream). A refusal stops with content_filtered.
//   - GET /v1/models: the models list, in Anthropic's shape when the request carries an
//     anthropic-version header and in OpenAI's otherwise.
//   - GET /fakemodel/calls: the call log as JSON ({"count": n, "calls": [...]}, without
//     bodies or headers); DELETE /fakemodel/calls empties it. For tests that run the server
//     as a program; they need no key.
//
// Each model call is answered by the first Rule whose Match accepts it (a rule with Times
// stops matching after that many calls, so "429 twice, then succeed" is two rules). With no
// rule, or when the matching rule's Reply names no content, the answer is the default one:
// for a structured-output request (a JSON schema, or a forced tool) a JSON instance of the
// schema built by Instance; for a json_object request a small JSON object; otherwise a fixed
// sentence carrying a short hash of the request. The same request always gets the same
// content. Token usage is counted deterministically (see Tokens), so cost can be asserted.
//
// Requests are checked as the providers check them where a client bug would hide: the API key
// header (401), anthropic-version (400), required fields such as Anthropic's max_tokens (400),
// temperature ranges, base64 images, and the word "json" that OpenAI's json_object mode needs;
// for Bedrock, a SigV4 Authorization header scoped to "bedrock" (403; the signature itself is
// not verified), turns that alternate from user, blank text, and tool blocks without a
// toolConfig or answering calls not made (400). Errors are written in each provider's own
// shape (Bedrock's {"message"} with x-amzn-ErrorType), with Retry-After on 429 and 503.
//
// Every model call received, valid or not, is kept in the call log (Calls, Count, Reset),
// which is safe for concurrent use. Command plume-fakemodel serves the same handler on a port
// with rules read from a JSON file (ParseRules).
package fakemodel
