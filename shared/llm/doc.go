// Package llm knows about language-model providers and models: which provider serves a model
// id. The OpenAI-compatible client used by judges and the optimizer will live here too.
package llm
