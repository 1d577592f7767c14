package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
)

// TestPromptSplitCommands: `plume prompts split` starts a split of a tag (json and text), seen
// by `plume ab-tests show` as a test of the prompt's versions; a second split of the tag is a
// conflict, bad flags are usage errors sending nothing; `plume prompts end-split` completes it,
// and ending it again is not found.
func TestPromptSplitCommands(t *testing.T) {
	h := newClientHarness(t, apitest.Options{})
	h.ok("prompts", "ensure", "support-bot", "--content", "You help.")
	h.ok("prompts", "ensure", "support-bot", "--content", "You help, kindly.")
	h.ok("prompts", "pin", "support-bot", "production", "--version", "1")

	var split api.PromptSplit
	h.okJSON(&split, "prompts", "split", "support-bot", "production", "--variant", "1=0.8", "--variant", "2=0.2", "--duration-days", "14", "--name", "bot-v2")
	assert.Equal(t, "bot-v2", split.Test)
	assert.Equal(t, "running", split.Status)
	assert.Equal(t, 14, split.DurationDays)
	require.Len(t, split.Variants, 2)
	assert.Equal(t, api.WholeNumber(1), split.Variants[0].Version, "the first is the control")
	assert.Equal(t, 0.8, split.Variants[0].Weight)
	assert.Equal(t, "v2", split.Variants[1].Key)

	var rep api.ABReport
	h.okJSON(&rep, "ab-tests", "show", "bot-v2")
	assert.Equal(t, "support-bot", rep.Prompt)
	assert.Equal(t, "production", rep.Tag)
	assert.Equal(t, "running", rep.Status)

	r := h.run("prompts", "split", "support-bot", "production", "--variant", "1=1", "--variant", "2=1", "--duration-days", "7")
	assert.Equal(t, exitUsage, r.code, "a tag with a running split: %s", r)
	assert.Contains(t, r.stderr, "has a running split")
	r = h.run("--output", "json", "prompts", "split", "support-bot", "production", "--variant", "1=1", "--variant", "2=1", "--duration-days", "7")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.stderr, `"conflict"`, "json mode names the error's code")
	for _, args := range [][]string{
		{"--variant", "1=1", "--duration-days", "7"},                      // one variant
		{"--variant", "1=1", "--variant", "x=1", "--duration-days", "7"},  // no version
		{"--variant", "1=1", "--variant", "2=-1", "--duration-days", "7"}, // negative weight
		{"--variant", "1=1", "--variant", "2=1", "--duration-days", "0"},
		{"--variant", "1=1", "--variant", "2=1"}, // no duration
	} {
		h.api.DDB.Reset()
		r := h.run(append([]string{"prompts", "split", "support-bot", "staging"}, args...)...)
		assert.Equal(t, exitUsage, r.code, "%v: %s", args, r)
		assert.Zero(t, h.api.DDB.Total(), "%v: nothing sent", args)
	}

	text := h.ok("prompts", "end-split", "support-bot", "production")
	assert.Contains(t, text, "completed")
	assert.Contains(t, text, "bot-v2")
	h.okJSON(&rep, "ab-tests", "show", "bot-v2")
	assert.Equal(t, "completed", rep.Status)
	assert.True(t, rep.Decided, "ending the split decides its report")

	r = h.run("prompts", "end-split", "support-bot", "production")
	assert.Equal(t, exitUsage, r.code, "no running split: %s", r)
	assert.Contains(t, r.stderr, "has no running split")
}
