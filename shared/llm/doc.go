// Package llm calls language models: one Client for every provider Plume talks to, used by
// the judge runner now and by optimization and the gateway next (DESIGN.md §6). It also knows
// which provider a model id belongs to (ProviderOf), which pricing uses.
//
// Client.Complete sends a Request to the provider that Route picks from the model id:
//
//   - OpenAI-compatible Chat Completions (OpenAI, Azure OpenAI, OpenRouter, Groq, Together,
//     Fireworks, vLLM, Ollama and Gemini's OpenAI endpoint), each with its own base URL and key;
//   - Anthropic Messages;
//   - Amazon Bedrock Converse, signed with the caller's AWS credentials (IAM, no third-party key).
//
// A call whose answer a program reads sets Request.Schema: the provider's structured output is
// used (a JSON-schema response_format for Chat Completions, a forced tool call for Anthropic and
// Bedrock), the answer is validated against the schema, and an answer that does not validate
// gets one repair retry. Requests that fail with 408, 429, 5xx or a network error are retried
// with exponential backoff and full jitter, honouring Retry-After. Every Response carries its
// token usage and, through a Pricer (see package pricetable), its cost.
//
// # Official SDKs or thin clients
//
// The transports are thin clients that send the providers' documented wire shapes with
// net/http; Bedrock requests are signed with the AWS SDK's own SigV4 signer
// (aws-sdk-go-v2/aws/signer/v4, already a dependency). The official SDKs were measured on
// 2026-11 with a minimal main, CGO_ENABLED=0 GOOS=linux GOARCH=arm64 -trimpath -ldflags='-s -w':
//
//	main with net/http + encoding/json (what the thin clients need)   5.6 MB
//	+ github.com/openai/openai-go/v3 v3.98.0                           +17.3 MB (22.9 MB)
//	+ github.com/anthropics/anthropic-sdk-go v1.84.0                   +5.4 MB (11.0 MB)
//	+ both                                                             +24.4 MB (30.0 MB)
//	aws config + dynamodb main                                         7.7 MB
//	+ github.com/aws/aws-sdk-go-v2/service/bedrockruntime v1.63.13     +2.4 MB (10.0 MB)
//
// Package init time (GODEBUG=inittrace=1, amd64) grew by 0.9 ms (OpenAI), 0.4 ms (Anthropic)
// and 0.75 ms (Bedrock): small, but a Lambda's cold start also pays for loading the larger
// binary. Four times the size of every function that calls a model is not worth the SDKs'
// conveniences for the two endpoints used here, so OpenAI and Anthropic are thin clients. The
// Bedrock SDK would cost 2.4 MB; the Converse call is a thin client too, which keeps one retry,
// error and usage path for all three transports and adds no module.
package llm
