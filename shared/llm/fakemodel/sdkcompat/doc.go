// Package sdkcompat proves the fake model server's wire compatibility: its tests call it
// through the official OpenAI and Anthropic Go SDKs. It is a module of its own so that the
// SDKs stay out of Plume's go.mod; run its tests from this directory (go test ./...).
package sdkcompat
