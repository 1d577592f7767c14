// Package gateway is Plume's model gateway: POST /v1/chat/completions, OpenAI Chat Completions
// compatible, authenticated with a Plume key, served by whatever provider the model id routes
// to (llm.Route: "provider/model" wins; the "zeroeval/" and "plume/" prefixes are looked
// through), with the deployment's provider keys. It is how a model bound to a prompt version
// is served whatever provider the application was written for (COMPAT.md "Model binding": the
// zeroeval SDKs send a call whose bound model is zeroeval/<model> here).
//
// A call goes through chatCompletions (chat.go) in this order: the request read; its prompt
// version, if it names one, checked against the version's binding (binding.go); the model
// routed; the project's limits admitting it (limits.go, shared/ratelimit); the provider's relay
// serving it and returning its outcome (usage.go: the usage, the provider's request id and,
// when traced, what it answered); the call priced once, its tokens and that cost counted for
// the limits; and, when the call is traced, its llm span written with that cost (trace.go,
// answer.go). Nothing travels through the request's context, and a relay's own answer is
// never parsed back: the passthrough relay's answer, the provider's bytes, is read as it
// passes; the translating relays hand over the values they write.
//
// OpenAI-compatible providers (OpenAI, Azure, OpenRouter, Groq, Together, Fireworks, Gemini's
// OpenAI endpoint, vLLM, Ollama) are relayed as they are, the model renamed and the key
// replaced (relay_openai.go): a streamed answer is passed on chunk by chunk as it arrives,
// never buffered. Anthropic's Messages and Bedrock's Converse are translated both ways: the
// OpenAI request is read once into a provider-neutral conversation (request.go,
// conversation.go), which each relay writes in its own wire format (relay_anthropic.go,
// relay_bedrock.go), and each answer, streamed or not, is translated back event by event.
//
// In Lambda the function answers Function URL events with response streaming
// (lambdahttp.StartStreaming) and API Gateway events buffered.
package gateway
