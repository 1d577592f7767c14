// Package wire is the JSON of the model providers' APIs that Plume speaks, declared once:
// OpenAI's Chat Completions (Chat*), Anthropic's Messages (Messages*) and Amazon Bedrock's
// Converse (Converse*), requests, answers, streamed events and error bodies. The model client
// (package llm, and through it the judges and the optimizer) and the gateway's relays read and
// write these types; neither declares a provider's JSON of its own.
//
// A type holds the union of the fields its users read or write, each tagged as the provider
// documents it; omitempty is set where a field must be left out rather than sent empty. Fields
// whose JSON has several shapes stay json.RawMessage, for the reader to decide. The fake model
// server (llm/fakemodel) keeps its own types on purpose: it is the other side of the wire, and
// sharing these would make it agree with the client by construction.
//
// The package uses only the standard library.
package wire
