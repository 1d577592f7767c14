// Package prompt is the prompt registry: versions of prompt text per project and slug,
// numbered 1, 2, 3 ... without gaps, identified also by the SHA-256 of their normalised
// content, tags that point at versions (pinning a tag is deploying), and the model bound to a
// version. The reserved tag "latest" always follows the newest version and cannot be pinned.
//
// The HTTP shapes are in functions/prompts; storage is behind the Store interface, implemented
// by shared/ddb.
package prompt
