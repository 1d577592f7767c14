package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/functions/optimizer"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/errs"
	judgerun "github.com/plumehq/plume/shared/judge/run"
	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/llm/fakemodel/fakemodeltest"
	"github.com/plumehq/plume/shared/llm/pricetable"
	"github.com/plumehq/plume/shared/pricing"
)

// newOptimizeHarness is a client harness whose API has a model client, priced, calling the
// in-repo fake model server, so that the optimizer worker runs the runs in-process. The
// worker scores one example at a time, so that a run's cost is summed in the same order on
// every run of the test. opts.Models is set here; opts.Optimizer runs after that setting.
func newOptimizeHarness(t *testing.T, opts apitest.Options) *clientHarness {
	t.Helper()
	fake := fakemodeltest.Start(t)
	opts.Models = llm.New(llm.Config{Providers: map[string]llm.Endpoint{llm.ProviderOpenAI: {BaseURL: fake.OpenAIBaseURL(), APIKey: "sk-test"}},
		JudgeModel: "openai/gpt-4o-mini"}, llm.Options{BaseDelay: time.Millisecond, Pricer: pricetable.New(pricing.Default())})
	change := opts.Optimizer
	opts.Optimizer = func(w *optimizer.Worker) {
		w.ScoreOneAtATime()
		if change != nil {
			change(w)
		}
	}
	return newClientHarness(t, opts)
}

// feedbackSpans is the number of completions of the optimization tests, each with feedback.
const feedbackSpans = 6

// optimizable gives the harness a prompt support-bot worth optimizing: a judge linked to it
// (returned), and feedbackSpans completions with people's feedback (odd ones thumbs up).
func (h *clientHarness) optimizable() string {
	h.t.Helper()
	version := h.api.EnsurePrompt(h.t, h.api.A, "support-bot", "You answer support questions.")
	h.ingestSpans("support-bot", version, feedbackSpans)
	for i := 1; i <= feedbackSpans; i++ {
		h.api.MustDo(h.t, "POST", "/v1/prompts/support-bot/completions/"+spanID(i)+"/feedback", h.api.A.Key,
			map[string]any{"thumbs_up": i%2 == 1, "reason": fmt.Sprintf("reason %d", i), "expected_output": fmt.Sprintf("Expected %d", i)})
	}
	var j api.Judge
	h.okJSON(&j, "judges", "create", "--name", "helpful", "--prompt", judgeTemplate)
	h.ok("judges", "link", j.ID, "--prompt", "support-bot")
	return j.ID
}

// waitArgs make --wait poll often and give it the time a run takes.
var waitArgs = []string{"--wait", "--poll-interval", "5ms", "--timeout", "2m"}

// startWait starts a run with args and --wait, requires it to succeed, and returns it.
func (h *clientHarness) startWait(args ...string) api.OptimizationRun {
	h.t.Helper()
	r := h.run(append(append([]string{"--output", "json", "optimize"}, args...), waitArgs...)...)
	require.Equal(h.t, exitOK, r.code, "%s", r)
	assert.Contains(h.t, r.stderr, ": queued, iteration 0, 0 model calls, $0.0000\n", "the progress is told on stderr")
	var run api.OptimizationRun
	require.NoError(h.t, json.Unmarshal([]byte(r.stdout), &run), "stdout is not JSON: %s", r.stdout)
	require.Equal(h.t, "succeeded", run.Status)
	assert.Contains(h.t, r.stderr, fmt.Sprintf("run %s: succeeded, iteration %d, %d model calls", run.ID, run.Progress.Iteration, run.Progress.ModelCalls))
	return run
}

// simulated waits for the simulations a prompt's run gets once it succeeded.
func (h *clientHarness) simulated(runID string) {
	h.t.Helper()
	require.Eventually(h.t, func() bool {
		var run api.OptimizationRun
		h.okJSON(&run, "optimize", "prompt", "get", runID)
		return len(run.Simulations) > 0
	}, time.Minute, 10*time.Millisecond)
}

// TestOptimizePrompt: prompt runs started and followed to success with --wait, listed, read,
// promoted with and without confirmation; a run that fails.
func TestOptimizePrompt(t *testing.T) {
	h := newOptimizeHarness(t, apitest.Options{})
	judgeID := h.optimizable()

	first := h.startWait("prompt", "start", "support-bot", "--seed", "7", "--intent", judgeID+":2:0.1", "--model", "openai/gpt-4o")
	assert.Equal(t, "quick_refine", first.OptimizerType, "the default")
	require.NotNil(t, first.Candidate)
	assert.Positive(t, first.Progress.ModelCalls)
	assert.Positive(t, first.Progress.CostUSD)
	h.simulated(first.ID)
	h.goldenBoth("optimize-prompt-get", "optimize", "prompt", "get", first.ID)
	h.goldenBoth("optimize-prompt-list", "optimize", "prompt", "list", "support-bot")
	h.goldenBoth("optimize-prompt-get-wait", append([]string{"optimize", "prompt", "get", first.ID}, waitArgs...)...)

	// Refused: nothing deployed, the summary shown, exit 2.
	r := h.runIn("n\n", "optimize", "prompt", "promote", first.ID)
	assert.Equal(t, exitUsage, r.code, "%s", r)
	assert.Contains(t, r.stdout, "Candidate:\n  "+first.Candidate.Content)
	assert.Contains(t, r.stderr, "[y/N]")
	assert.Contains(t, r.stderr, "not deployed")
	assert.Equal(t, exitUsage, h.runIn("", "optimize", "prompt", "promote", first.ID).code, "no answer is a no")
	assert.Equal(t, exitUsage, h.run("prompts", "get", "support-bot", "--tag", "production").code, "no production tag yet")

	// Confirmed on standard input.
	out := h.runIn("y\n", "optimize", "prompt", "promote", first.ID)
	require.Equal(t, exitOK, out.code, "%s", out)
	golden(t, "optimize-prompt-promote.text", out.stdout)
	var prod api.PromptVersion
	h.okJSON(&prod, "prompts", "get", "support-bot", "--tag", "production")
	assert.Equal(t, first.Candidate.Rendered, prod.Content, "production serves the candidate")
	h.okJSON(&first, "optimize", "prompt", "get", first.ID)
	require.NotNil(t, first.DeployedVersionID)
	assert.Equal(t, prod.ID, *first.DeployedVersionID)

	// --yes, and json mode, deploy without asking.
	second := h.startWait("prompt", "start", "support-bot", "--seed", "8", "--optimizer", "quick_refine", "--max-model-calls", "50", "--max-cost-usd", "1")
	assert.Equal(t, 2, second.Baseline.Version, "the baseline is what production serves")
	h.simulated(second.ID)
	third := h.startWait("prompt", "start", "support-bot", "--seed", "9")
	h.simulated(third.ID)
	out = h.runIn("", "optimize", "prompt", "promote", second.ID, "--yes")
	require.Equal(t, exitOK, out.code, "%s", out)
	assert.Contains(t, out.stdout, "Deployed:")
	assert.NotContains(t, out.stderr, "[y/N]")
	golden(t, "optimize-prompt-promote.json", h.ok("--output", "json", "optimize", "prompt", "promote", third.ID))
	h.okJSON(&third, "optimize", "prompt", "get", third.ID)
	assert.NotNil(t, third.DeployedVersionID)

	// A run that fails: too few completions. --wait exits 4 with the run's error, after
	// printing the run; it cannot be promoted (409: exit 2).
	h.api.EnsurePrompt(t, h.api.A, "billing", "You explain invoices.")
	h.ok("judges", "link", judgeID, "--prompt", "billing")
	golden(t, "optimize-prompt-start.text", h.ok("optimize", "prompt", "start", "billing", "--seed", "1"))
	started := h.ok("--output", "json", "optimize", "prompt", "start", "billing", "--seed", "1", "--optimizer", "auto")
	golden(t, "optimize-prompt-start.json", started)
	var failed api.OptimizationRun
	require.NoError(t, json.Unmarshal([]byte(started), &failed))
	r = h.run(append([]string{"optimize", "prompt", "get", failed.ID}, waitArgs...)...)
	assert.Equal(t, exitRemote, r.code, "%s", r)
	assert.Regexp(t, `Status: +failed\n`, r.stdout, "the run is printed")
	assert.Regexp(t, `error: optimization run \S+ failed: .*the prompt has 0 completions`, r.stderr)
	r = h.run(append([]string{"--output", "json", "optimize", "prompt", "start", "billing"}, waitArgs...)...)
	assert.Equal(t, exitRemote, r.code, "%s", r)
	var body jsonError
	require.NoError(t, json.Unmarshal([]byte(r.stderr[strings.LastIndex(r.stderr, "{\"error\""):]), &body), "%s", r.stderr)
	assert.Contains(t, body.Error.Message, "the prompt has 0 completions")
	r = h.run("--output", "json", "optimize", "prompt", "promote", failed.ID, "--yes")
	assert.Equal(t, exitUsage, r.code, "%s", r)
	assert.Contains(t, r.stderr, string(errs.CodeConflict))
	assert.Empty(t, r.stdout)
}

// TestOptimizeJudge: a judge's run, from calibration feedback given with the CLI to the
// promotion of its template.
func TestOptimizeJudge(t *testing.T) {
	h := newOptimizeHarness(t, apitest.Options{})
	version := h.api.EnsurePrompt(t, h.api.A, "support-bot", "You answer support questions.")
	h.ingestSpans("support-bot", version, feedbackSpans)
	var j api.Judge
	h.okJSON(&j, "judges", "create", "--name", "helpful", "--prompt", judgeTemplate)
	h.recordEvaluations(j.ID, feedbackSpans)
	for i := 1; i <= feedbackSpans; i++ {
		thumbs := "--thumbs-up"
		if i%3 == 0 {
			thumbs = "--thumbs-down"
		}
		h.ok("judges", "feedback", "create", j.ID, "--prompt", "support-bot", "--completion-id", spanID(i), thumbs, "--reason", fmt.Sprintf("calibration %d", i))
	}

	run := h.startWait("judge", "start", j.ID)
	require.NotNil(t, run.JudgeID)
	assert.Equal(t, j.ID, *run.JudgeID)
	require.NotNil(t, run.Candidate)
	h.goldenBoth("optimize-judge-get", "optimize", "judge", "get", run.ID)
	h.goldenBoth("optimize-judge-list", "optimize", "judge", "list", j.ID)

	out := h.runIn("", "optimize", "judge", "promote", run.ID, "--yes")
	require.Equal(t, exitOK, out.code, "%s", out)
	golden(t, "optimize-judge-promote.text", out.stdout)
	h.okJSON(&j, "judges", "get", j.ID)
	assert.Equal(t, run.Candidate.Content, j.Template, "the judge's template is the candidate")
	var versions []api.JudgeTemplateVersion
	h.okJSON(&versions, "judges", "versions", j.ID)
	require.Len(t, versions, 2)
	require.NotNil(t, versions[0].RunID)
	assert.Equal(t, run.ID, *versions[0].RunID)
	golden(t, "optimize-judge-promote.json", h.ok("--output", "json", "optimize", "judge", "promote", run.ID))

	// start without --wait answers the queued run.
	golden(t, "optimize-judge-start.text", h.ok("optimize", "judge", "start", j.ID, "--max-model-calls", "100"))
	golden(t, "optimize-judge-start.json", h.ok("--output", "json", "optimize", "judge", "start", j.ID, "--seed", "3"))
}

// downCaller answers every model call as a provider that is down: the worker leaves the run
// running for the queue's retries, which fail alike and give up, so that the run stays running
// until the test cancels it.
type downCaller struct{}

func (downCaller) Complete(context.Context, llm.Request) (llm.Response, error) {
	return llm.Response{}, errs.Unavailable("the test's model provider is down")
}

// TestOptimizeCancel: runs held running (the model provider is down) are cancelled; --wait on a
// run that is cancelled exits 4, and so does a wait that outlasts --timeout.
func TestOptimizeCancel(t *testing.T) {
	h := newOptimizeHarness(t, apitest.Options{Optimizer: func(w *optimizer.Worker) {
		w.WrapModels(func(judgerun.Caller) judgerun.Caller { return downCaller{} })
	}})
	h.optimizable()

	waited := make(chan result, 1)
	go func() {
		waited <- h.run(append([]string{"optimize", "prompt", "start", "support-bot", "--seed", "7"}, waitArgs...)...)
	}()
	first := h.running()
	golden(t, "optimize-prompt-cancel.text", h.ok("optimize", "prompt", "cancel", first))
	r := <-waited
	assert.Equal(t, exitRemote, r.code, "%s", r)
	assert.Regexp(t, `Status: +cancelled\n`, r.stdout, "the run is printed")
	assert.Contains(t, r.stderr, "optimization run "+first+" was cancelled")

	r = h.run("optimize", "prompt", "cancel", first)
	assert.Equal(t, exitUsage, r.code, "a run that is over (409): %s", r)
	assert.Contains(t, r.stderr, "cancelled")

	var second api.OptimizationRun
	h.okJSON(&second, "optimize", "prompt", "start", "support-bot", "--seed", "8")
	assert.Equal(t, second.ID, h.running())
	golden(t, "optimize-prompt-cancel.json", h.ok("--output", "json", "optimize", "prompt", "cancel", second.ID))

	// The global --timeout bounds --wait: the run goes on.
	r = h.run("optimize", "prompt", "start", "support-bot", "--seed", "9", "--wait", "--poll-interval", "5ms", "--timeout", "300ms")
	assert.Equal(t, exitRemote, r.code, "%s", r)
	assert.Contains(t, r.stderr, "timed out")
	var runs []api.OptimizationRun
	h.okJSON(&runs, "optimize", "prompt", "list", "support-bot", "--limit", "1")
	require.Len(t, runs, 1)
	assert.Contains(t, []string{"queued", "running"}, runs[0].Status)
	h.ok("optimize", "prompt", "cancel", runs[0].ID)
}

// running waits until the newest run of support-bot is running and returns its id.
func (h *clientHarness) running() string {
	h.t.Helper()
	var id string
	require.Eventually(h.t, func() bool {
		var runs []api.OptimizationRun
		h.okJSON(&runs, "optimize", "prompt", "list", "support-bot", "--limit", "1")
		if len(runs) == 1 && runs[0].Status == "running" {
			id = runs[0].ID
			return true
		}
		return false
	}, time.Minute, 5*time.Millisecond)
	return id
}

// TestOptimizeUsageErrors: optimize command lines that cannot run exit 2, before or after the
// API answers.
func TestOptimizeUsageErrors(t *testing.T) {
	h := newClientHarness(t, apitest.Options{})
	h.api.EnsurePrompt(t, h.api.A, "support-bot", "You answer support questions.")
	var j api.Judge
	h.okJSON(&j, "judges", "create", "--name", "helpful", "--prompt", judgeTemplate)
	unknown := "00000000-0000-4000-8000-00000000dead"
	tests := []usageError{
		{"bad optimizer", []string{"optimize", "prompt", "start", "support-bot", "--optimizer", "fast"}, errs.CodeInvalid, "--optimizer must be one of"},
		{"judge optimizer", []string{"optimize", "judge", "start", j.ID, "--optimizer", "dspy_gepa"}, errs.CodeInvalid, "--optimizer must be one of quick_refine, auto"},
		{"judge intents", []string{"optimize", "judge", "start", j.ID, "--intent", j.ID}, errs.CodeInvalid, "unknown flag: --intent"},
		{"intent without judge", []string{"optimize", "prompt", "start", "support-bot", "--intent", ":2"}, errs.CodeInvalid, "no judge id"},
		{"intent weight", []string{"optimize", "prompt", "start", "support-bot", "--intent", j.ID + ":heavy"}, errs.CodeInvalid, "weight must be a positive number"},
		{"intent negative weight", []string{"optimize", "prompt", "start", "support-bot", "--intent", j.ID + ":-1"}, errs.CodeInvalid, "weight must be a positive number"},
		{"intent threshold", []string{"optimize", "prompt", "start", "support-bot", "--intent", j.ID + ":1:1.5"}, errs.CodeInvalid, "from 0 to 1"},
		{"intent parts", []string{"optimize", "prompt", "start", "support-bot", "--intent", j.ID + ":1:0.5:x"}, errs.CodeInvalid, "too many parts"},
		{"unknown intent judge", []string{"optimize", "prompt", "start", "support-bot", "--intent", unknown}, errs.CodeNotFound, "not found"},
		{"no linked judge", []string{"optimize", "prompt", "start", "support-bot"}, errs.CodeInvalid, "no linked judge"},
		{"bad budget", []string{"optimize", "prompt", "start", "support-bot", "--max-model-calls", "0"}, errs.CodeInvalid, "must be positive"},
		{"bad poll interval", []string{"optimize", "prompt", "get", unknown, "--poll-interval", "0s"}, errs.CodeInvalid, "--poll-interval"},
		{"unknown prompt", []string{"optimize", "prompt", "start", "nothing"}, errs.CodeNotFound, "not found"},
		{"unknown judge", []string{"optimize", "judge", "start", unknown}, errs.CodeNotFound, "not found"},
		{"unknown run", []string{"optimize", "prompt", "get", unknown}, errs.CodeNotFound, "not found"},
		{"promote unknown run", []string{"optimize", "judge", "promote", unknown, "--yes"}, errs.CodeNotFound, "not found"},
		{"cancel unknown run", []string{"optimize", "prompt", "cancel", unknown}, errs.CodeNotFound, "not found"},
		{"no target", []string{"optimize", "prompt", "list"}, errs.CodeInvalid, "accepts 1 arg(s)"},
		{"dataset without input column", []string{"optimize", "prompt", "start", "support-bot", "--dataset", "returns"}, errs.CodeInvalid, "--input-column is required"},
		{"input column without dataset", []string{"optimize", "prompt", "start", "support-bot", "--input-column", "q"}, errs.CodeInvalid, "need --dataset"},
		{"bad dataset version", []string{"optimize", "prompt", "start", "support-bot", "--dataset", "returns@two", "--input-column", "q"}, errs.CodeInvalid, "want name[@version]"},
		{"unknown dataset", []string{"optimize", "prompt", "start", "support-bot", "--dataset", "nope", "--input-column", "q", "--expected-column", "a"}, errs.CodeNotFound, `dataset "nope" not found`},
		{"judge dataset", []string{"optimize", "judge", "start", j.ID, "--dataset", "returns"}, errs.CodeInvalid, "unknown flag: --dataset"},
	}
	h.refuses(tests)
}

// TestOptimizePromptFromDataset: a run started from a dataset version with the CLI's flags,
// followed to success: the run names the version it read, in its config and its report.
func TestOptimizePromptFromDataset(t *testing.T) {
	h := newOptimizeHarness(t, apitest.Options{})
	h.api.EnsurePrompt(t, h.api.A, "support-bot", "You answer support questions about {{product}}.")
	h.api.MustDo(t, "POST", "/v1/datasets", h.api.A.Key, map[string]any{"name": "returns"})
	var rows []any
	for i := range 6 {
		rows = append(rows, map[string]any{"question": fmt.Sprintf("Can I return item %d?", i), "product": "Plume", "answer": "Yes, within 30 days."})
	}
	h.api.MustDo(t, "POST", "/v1/datasets/returns/data", h.api.A.Key, map[string]any{"data": rows})
	v2 := h.api.MustDo(t, "POST", "/v1/datasets/returns/data", h.api.A.Key, map[string]any{"data": rows[:5]}).Map(t)["id"].(string)

	run := h.startWait("prompt", "start", "support-bot", "--seed", "3", "--optimizer", "quick_refine",
		"--dataset", "returns@1", "--input-column", "question", "--expected-column", "answer")
	require.NotNil(t, run.Config.Dataset)
	assert.Equal(t, 1, run.Config.Dataset.Version)
	require.NotNil(t, run.Metrics.Dataset)
	assert.Equal(t, api.OptimizationReportDataset{Name: "returns", Version: 1, VersionID: run.Config.Dataset.VersionID, RowCount: 6, Examples: 6}, *run.Metrics.Dataset)
	assert.Empty(t, run.Config.Intents, "no linked judge: the expected outputs score the candidates")

	run = h.startWait("prompt", "start", "support-bot", "--seed", "3", "--optimizer", "quick_refine",
		"--dataset-version-id", v2, "--input-column", "question,product", "--expected-column", "answer")
	assert.Equal(t, api.OptimizationReportDataset{Name: "returns", Version: 2, VersionID: v2, RowCount: 5, Examples: 5}, *run.Metrics.Dataset)
	h.simulated(run.ID)
}
