// Package sdkcompat proves the client's Transport with the official OpenAI Go SDK: its tests
// send chat completions through openai-go with the transport against the whole API and the
// fake model server. It is a module of its own so that the SDK stays out of Plume's go.mod;
// run its tests from this directory (go test ./...).
package sdkcompat
