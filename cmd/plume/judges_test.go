package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/errs"
)

// judgeTemplate is a judge prompt whose headings are its criteria (accuracy, tone).
const judgeTemplate = `Decide whether the answer helps the customer.

## Accuracy
The answer is correct for the customer's plan.

## Tone
The answer is polite and brief.

Question: {{input}}
Answer: {{output}}`

// spanID is the id of the test's n-th span: fixed, so that golden output and the optimizer's
// seeded choices are the same on every run.
func spanID(n int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) }

// ingestSpans posts n llm spans of prompt slug, span i answering question i, an hour ago.
func (h *clientHarness) ingestSpans(slug, versionID string, n int) {
	h.t.Helper()
	at := time.Now().Add(-time.Hour)
	var spans []any
	for i := 1; i <= n; i++ {
		spans = append(spans, apitest.LLMSpan(spanID(i), fmt.Sprintf("10000000-0000-4000-8000-%012d", i), "", slug, versionID,
			fmt.Sprintf("Question %d: how do I reset my password?", i), fmt.Sprintf("Answer %d: open Settings, then Security.", i),
			at.Add(time.Duration(i)*time.Second)))
	}
	h.api.MustDo(h.t, "POST", "/spans", h.api.A.Key, spans)
}

// recordEvaluations stores the judge's verdicts on spans 1..n: span i passes when i is odd.
func (h *clientHarness) recordEvaluations(judgeID string, n int) {
	h.t.Helper()
	var evs []map[string]any
	for i := 1; i <= n; i++ {
		evs = append(evs, map[string]any{"span_id": spanID(i), "evaluation_result": i%2 == 1, "evaluation_reason": fmt.Sprintf("verdict %d", i),
			"confidence_score": 0.9, "model_used": "openai/gpt-4o-mini", "criteria_scores": map[string]any{"accuracy": map[string]any{"score": 1, "reason": "correct"}}})
	}
	h.api.MustDo(h.t, "POST", "/projects/"+h.api.A.ProjectID+"/judges/"+judgeID+"/evaluations", h.api.A.Key, evs)
}

// TestJudgesCommands: every judges command, text and json, against the whole API.
func TestJudgesCommands(t *testing.T) {
	h := newClientHarness(t, apitest.Options{})
	version := h.api.EnsurePrompt(t, h.api.A, "support-bot", "You answer support questions.")
	h.api.EnsurePrompt(t, h.api.A, "billing", "You explain invoices.")
	h.ingestSpans("support-bot", version, 4)
	file := filepath.Join(t.TempDir(), "helpful.md")
	require.NoError(t, os.WriteFile(file, []byte(judgeTemplate), 0o600))

	// create makes a judge each time: one golden file per output format.
	golden(t, "judges-create.text", h.ok("judges", "create", "--name", "helpful", "--prompt-file", file,
		"--target-prompt", "support-bot", "--sample-rate", "0.5", "--tag", "env=production", "--tag", "env=staging"))
	golden(t, "judges-create.json", h.ok("--output", "json", "judges", "create", "--name", "tone", "--prompt", "Rate the tone of {{output}}.",
		"--evaluation-type", "scored", "--score-min", "1", "--score-max", "5", "--pass-threshold", "4", "--temperature", "0.2"))
	var list []api.Judge
	h.okJSON(&list, "judges", "list", "--where", "name=helpful")
	require.Len(t, list, 1)
	id := list[0].ID

	h.goldenBoth("judges-list", "judges", "list", "--order", "name")
	h.goldenBoth("judges-link", "judges", "link", id, "--prompt", "support-bot")
	h.ok("judges", "link", id, "--prompt", "billing")
	h.goldenBoth("judges-unlink", "judges", "unlink", id, "--prompt", "billing")
	h.goldenBoth("judges-get", "judges", "get", id)
	h.goldenBoth("judges-criteria", "judges", "criteria", id)
	h.goldenBoth("judges-update", "judges", "update", id, "--sample-rate", "0.25", "--model", "openai/gpt-4o", "--tag", "env=production", "--tag-match", "any")
	h.ok("judges", "update", id, "--prompt", judgeTemplate+"\nBe strict.")
	h.goldenBoth("judges-versions", "judges", "versions", id)

	h.recordEvaluations(id, 4)
	h.goldenBoth("judges-feedback-create", "judges", "feedback", "create", id, "--prompt", "support-bot", "--completion-id", spanID(1),
		"--thumbs-down", "--reason", "the plan is wrong", "--criterion", "accuracy=0:cites the wrong plan", "--criterion", "tone=:fine")
	h.ok("judges", "feedback", "create", id, "--prompt", "support-bot", "--completion-id", spanID(2), "--thumbs-up")
	h.goldenBoth("judges-evaluations", "judges", "evaluations", id, "--limit", "3")
	h.goldenBoth("judges-evaluations-filtered", "judges", "evaluations", id, "--result", "pass", "--without-feedback")
	h.goldenBoth("judges-performance", "judges", "performance", id)
	h.goldenBoth("judges-backfill", "judges", "backfill", id, "--count", "10")

	// Server paging: the total is on stderr, each page has at most --limit evaluations.
	r := h.run("judges", "evaluations", id, "--limit", "3", "--offset", "3")
	require.Equal(t, exitOK, r.code, "%s", r)
	assert.Contains(t, r.stderr, "evaluations 4 to 4 of 4")
	var evs []api.Evaluation
	h.okJSON(&evs, "judges", "evaluations", id, "--with-feedback")
	assert.Len(t, evs, 2, "the two calibrated evaluations")
	h.okJSON(&evs, "judges", "evaluations", id, "--start-date", time.Now().Add(time.Hour).UTC().Format(time.RFC3339))
	assert.Empty(t, evs)

	// update sends only the flags given; --pause stops backfills; an empty --model clears it.
	var j api.Judge
	h.okJSON(&j, "judges", "update", id, "--pause", "--model", "")
	assert.True(t, j.Paused)
	assert.Nil(t, j.Model)
	assert.Equal(t, 0.25, j.SampleRate, "kept")
	assert.Equal(t, []string{"support-bot"}, j.LinkedPrompts)
	r = h.run("judges", "backfill", id, "--count", "1")
	assert.Equal(t, exitUsage, r.code, "a paused judge is not backfilled (409): %s", r)
	h.okJSON(&j, "judges", "update", id, "--resume", "--no-tag-filter")
	assert.False(t, j.Paused)
	assert.Nil(t, j.TagFilter)
	var perf api.JudgePerformance
	h.okJSON(&perf, "judges", "performance", id)
	assert.Equal(t, 2, perf.N)
}

// TestJudgesUsageErrors: judges command lines that cannot run exit 2, before or after the API
// answers.
func TestJudgesUsageErrors(t *testing.T) {
	h := newClientHarness(t, apitest.Options{})
	h.api.EnsurePrompt(t, h.api.A, "support-bot", "You answer support questions.")
	var j api.Judge
	h.okJSON(&j, "judges", "create", "--name", "helpful", "--prompt", judgeTemplate)
	unknown := "00000000-0000-4000-8000-00000000dead"
	tests := []usageError{
		{"create without prompt", []string{"judges", "create", "--name", "x"}, errs.CodeInvalid, "pass --prompt or --prompt-file"},
		{"create without name", []string{"judges", "create", "--prompt", "x"}, errs.CodeInvalid, "pass --name"},
		{"prompt and file", []string{"judges", "create", "--name", "x", "--prompt", "x", "--prompt-file", "f"}, errs.CodeInvalid, "cannot be used together"},
		{"bad evaluation type", []string{"judges", "create", "--name", "x", "--prompt", "x", "--evaluation-type", "graded"}, errs.CodeInvalid, "binary or scored"},
		{"bad tag", []string{"judges", "create", "--name", "x", "--prompt", "x", "--tag", "env"}, errs.CodeInvalid, "key=value"},
		{"bad sample rate", []string{"judges", "create", "--name", "x", "--prompt", "x", "--sample-rate", "2"}, errs.CodeInvalid, "sample_rate"},
		{"update nothing", []string{"judges", "update", j.ID}, errs.CodeInvalid, "nothing to change"},
		{"pause and resume", []string{"judges", "update", j.ID, "--pause", "--resume"}, errs.CodeInvalid, "cannot be used together"},
		{"unknown judge", []string{"judges", "get", unknown}, errs.CodeNotFound, "not found"},
		{"unknown judge evaluations", []string{"judges", "evaluations", unknown}, errs.CodeNotFound, "not found"},
		{"link without prompt", []string{"judges", "link", j.ID}, errs.CodeInvalid, "required flag --prompt not set"},
		{"link unknown prompt", []string{"judges", "link", j.ID, "--prompt", "nothing"}, errs.CodeNotFound, "not found"},
		{"backfill without count", []string{"judges", "backfill", j.ID, "--count", "0"}, errs.CodeInvalid, "--count"},
		{"bad result", []string{"judges", "evaluations", j.ID, "--result", "ok"}, errs.CodeInvalid, "pass or fail"},
		{"both feedback states", []string{"judges", "evaluations", j.ID, "--with-feedback", "--without-feedback"}, errs.CodeInvalid, "cannot be used together"},
		{"bad date", []string{"judges", "performance", j.ID, "--start-date", "yesterday"}, errs.CodeInvalid, "ISO 8601"},
		{"both thumbs", []string{"judges", "feedback", "create", j.ID, "--prompt", "support-bot", "--completion-id", spanID(1), "--thumbs-up", "--thumbs-down"},
			errs.CodeInvalid, "either --thumbs-up or --thumbs-down"},
		{"no thumbs", []string{"judges", "feedback", "create", j.ID, "--prompt", "support-bot", "--completion-id", spanID(1)},
			errs.CodeInvalid, "either --thumbs-up or --thumbs-down"},
		{"feedback without prompt", []string{"judges", "feedback", "create", j.ID, "--completion-id", spanID(1), "--thumbs-up"},
			errs.CodeInvalid, "required flag --prompt not set"},
		{"bad criterion", []string{"judges", "feedback", "create", j.ID, "--prompt", "support-bot", "--completion-id", spanID(1), "--thumbs-up", "--criterion", "accuracy"},
			errs.CodeInvalid, "key=score:reason"},
		{"bad criterion score", []string{"judges", "feedback", "create", j.ID, "--prompt", "support-bot", "--completion-id", spanID(1), "--thumbs-up", "--criterion", "accuracy=high"},
			errs.CodeInvalid, "not a number"},
		{"unknown criterion", []string{"judges", "feedback", "create", j.ID, "--prompt", "support-bot", "--completion-id", spanID(1), "--thumbs-up", "--criterion", "speed=1"},
			errs.CodeInvalid, "not a criterion"},
		{"bad direction", []string{"judges", "feedback", "create", j.ID, "--prompt", "support-bot", "--completion-id", spanID(1), "--thumbs-up", "--score-direction", "up"},
			errs.CodeInvalid, "too_high or too_low"},
		{"feedback unknown judge", []string{"judges", "feedback", "create", unknown, "--prompt", "support-bot", "--completion-id", spanID(1), "--thumbs-up"},
			errs.CodeNotFound, "not found"},
	}
	h.refuses(tests)
}
