// Package gateway is Plume's model gateway: POST /v1/chat/completions, OpenAI Chat Completions
// compatible, authenticated with a Plume key, served by whatever provider the model id routes
// to (llm.Route: "provider/model" wins; the "zeroeval/" and "plume/" prefixes are looked
// through), with the deployment's provider keys. It is how a model bound to a prompt version
// is served whatever provider the application was written for (COMPAT.md "Model binding": the
// zeroeval SDKs send a call whose bound model is zeroeval/<model> here).
//
// OpenAI-compatible providers (OpenAI, Azure, OpenRouter, Groq, Together, Fireworks, Gemini's
// OpenAI endpoint, vLLM, Ollama) are relayed as they are, the model renamed to the provider's
// and the key replaced: a streamed answer is passed on chunk by chunk as it arrives, never
// buffered. Providers with another API are translated both ways (relays).
package gateway
