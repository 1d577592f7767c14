// Package sdkcompat proves the model gateway (functions/gateway) with the official OpenAI Go
// SDK, as an application calls it: its tests build the real plume-local, start it against
// DynamoDB Local (PLUME_TEST_DYNAMODB_URL) with its providers pointed at a fake model server
// the tests control, and send chat completions through openai-go to
// POST /v1/chat/completions with a Plume key.
//
// For each provider family the gateway serves (OpenAI-compatible, relayed as it is; Anthropic
// Messages and Amazon Bedrock Converse, translated both ways) they show that:
//
//   - a completion comes back in OpenAI's shape, with its content, finish_reason and usage;
//   - tool calls come back as tool_calls, streamed or not, and a tool result reaches the
//     provider on the next turn; parallel_tool_calls false and a function without parameters
//     reach it in its own terms (Converse has no setting for one call at a time: for Bedrock
//     the option is left out, the provider's request the same as without it);
//   - response_format json_schema answers follow the schema, json_object answers are JSON;
//   - an image sent as a data: URL reaches the provider in the provider's own format;
//   - a stream carries the same content as the answer, its usage chunk when the client asks
//     for it and none when it does not, and is passed on event by event (Server-Sent Events,
//     or Bedrock's AWS event stream) while the provider is still sending, not buffered;
//   - the provider receives the deployment's provider key (for Bedrock, a SigV4 signature by
//     the access key of plume-local's AWS credentials) and its own model name, never the
//     caller's Plume key, whatever spelling of the model the caller used (bare, prefixed,
//     zeroeval/, plume/); an unknown model is 404 and a missing Plume key 401, both errors
//     openai-go reads;
//   - the zeroeval SDKs' model binding works (COMPAT.md "Model binding"): a prompt version
//     bound to zeroeval/<model> through the REST API, its model read back as the SDK reads it,
//     the prefix stripped and the call sent to the gateway, answered by the bound model's
//     provider.
//
// The families are rows of one table (families in main_test.go): each says which model a
// client sends, what its provider must receive and how to read the provider's request.
//
// It is a module of its own so that the SDK stays out of Plume's go.mod; run its tests from
// this directory (go test ./...), with PLUME_TEST_DYNAMODB_URL set as make test sets it.
package sdkcompat
