// Package textcut shortens text to a byte limit without splitting a UTF-8 sequence: stored
// fields cut to Plume's limits (Prefix, Cut) and client text quoted in messages (Quote).
package textcut
