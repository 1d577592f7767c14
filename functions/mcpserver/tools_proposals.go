package mcpserver

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/shared/optimize"
)

// The proposal tools read what people and judges said and propose what to do: the
// investigate tools group the failures by reason, the prepare tools tell whether an
// optimization has enough to learn from and write the call that starts it. They change
// nothing. The REST API has no listing of a prompt's feedback, so they find a prompt's
// completions among the project's newest llm spans and read each one's feedback; every read
// and every answer is bounded, and Notes says where a bound was reached.

// Bounds of the proposal tools' reads and answers.
const (
	issueWindowHours    = 7 * 24
	maxIssueWindowHours = 90 * 24
	issueSpanScan       = 500  // newest llm spans read to find a prompt's completions in a window
	prepareSpanScan     = 1000 // the same, for an optimization's examples (the last 30 days)
	feedbackReads       = 100  // completions whose feedback is read
	failingReads        = 200  // failing evaluations read per judge
	calibrationReads    = 100  // calibrated evaluations of a judge whose feedback is read
	maxJudgesRead       = 10   // linked judges read per prompt
	maxIssueGroups      = 10   // groups per list
	examplesPerGroup    = 3
	exampleChars        = 300
	reasonChars         = 300
	readConcurrency     = 8
	// preparedSeed is the seed a prepared prompt run pins when none is given, so that the
	// split, and with it the type auto picks, is the one predicted.
	preparedSeed = 1
)

// NextCall is a call of one of this server's tools, as an agent makes it.
type NextCall struct {
	Tool      string         `json:"tool" jsonschema:"the tool's name"`
	Arguments map[string]any `json:"arguments" jsonschema:"its arguments"`
}

// IssueGroup is the failures that share one reason.
type IssueGroup struct {
	Reason    string         `json:"reason" jsonschema:"the reason, normalised (lowercase, trimmed, spaces collapsed; truncated to 300 characters): identical reasons are one group"`
	Count     int            `json:"count" jsonschema:"how many failures give it"`
	JudgeID   string         `json:"judge_id,omitempty" jsonschema:"the judge, for failing evaluations"`
	JudgeName string         `json:"judge_name,omitempty" jsonschema:"the judge's name"`
	Examples  []IssueExample `json:"examples" jsonschema:"up to 3 of them, newest first"`
}

// IssueExample is one failure of an IssueGroup.
type IssueExample struct {
	SpanID         string `json:"span_id" jsonschema:"the completion's span id"`
	Input          string `json:"input" jsonschema:"the completion's input, truncated to 300 characters"`
	Output         string `json:"output" jsonschema:"its output, truncated to 300 characters"`
	ExpectedOutput string `json:"expected_output,omitempty" jsonschema:"the output the person wanted, truncated"`
	Verdict        string `json:"verdict,omitempty" jsonschema:"the judge's verdict: pass or fail, and a scored judge's score"`
	JudgeReason    string `json:"judge_reason,omitempty" jsonschema:"the judge's reason, truncated"`
}

// JudgeCounts counts a judge's evaluations.
type JudgeCounts struct {
	JudgeID     string `json:"judge_id" jsonschema:"the judge's id"`
	Name        string `json:"name" jsonschema:"the judge's name"`
	Evaluations int    `json:"evaluations" jsonschema:"its evaluations (in the window, where there is one)"`
	Failing     int    `json:"failing" jsonschema:"those that failed"`
}

// InvestigatePromptInput selects a prompt and a window.
type InvestigatePromptInput struct {
	PromptSlug  string `json:"prompt_slug" jsonschema:"the prompt's slug"`
	WindowHours int    `json:"window_hours,omitempty" jsonschema:"how far back to look, in hours (default 168, a week; at most 2160)"`
}

// InvestigatePromptOutput is investigate-prompt-issues' answer.
type InvestigatePromptOutput struct {
	PromptSlug       string        `json:"prompt_slug" jsonschema:"the prompt"`
	Since            time.Time     `json:"since" jsonschema:"the window's start"`
	LinkedJudges     []JudgeCounts `json:"linked_judges" jsonschema:"the judges linked to the prompt and their evaluations in the window"`
	CompletionsRead  int           `json:"completions_read" jsonschema:"completions of the prompt in the window whose feedback was read (at most 100)"`
	NegativeFeedback int           `json:"negative_feedback" jsonschema:"thumbs down among them"`
	FeedbackIssues   []IssueGroup  `json:"feedback_issues" jsonschema:"people's thumbs down grouped by reason, largest first (at most 10 groups)"`
	EvaluationIssues []IssueGroup  `json:"evaluation_issues" jsonschema:"failing evaluations of the linked judges grouped by judge and reason, largest first (at most 10 groups)"`
	Notes            []string      `json:"notes" jsonschema:"where a read or the answer was bounded"`
	Next             NextCall      `json:"next" jsonschema:"a call to make next"`
}

// InvestigateJudgeInput selects a judge and a window.
type InvestigateJudgeInput struct {
	JudgeID     string `json:"judge_id" jsonschema:"the judge's id"`
	WindowHours int    `json:"window_hours,omitempty" jsonschema:"how far back to look at evaluations and performance, in hours (default 168; at most 2160)"`
}

// InvestigateJudgeOutput is investigate-judge-issues' answer.
type InvestigateJudgeOutput struct {
	JudgeID            string               `json:"judge_id" jsonschema:"the judge"`
	Name               string               `json:"name" jsonschema:"its name"`
	EvaluationType     string               `json:"evaluation_type" jsonschema:"binary or scored"`
	Since              time.Time            `json:"since" jsonschema:"the window's start"`
	Evaluations        int                  `json:"evaluations" jsonschema:"its evaluations in the window"`
	Failing            int                  `json:"failing" jsonschema:"those that failed"`
	CalibrationsRead   int                  `json:"calibrations_read" jsonschema:"calibrated evaluations read, newest first whatever the window (at most 100)"`
	Disagreements      int                  `json:"disagreements" jsonschema:"calibrations that say the verdict was wrong"`
	DisagreementIssues []IssueGroup         `json:"disagreement_issues" jsonschema:"verdicts people said were wrong, grouped by the person's reason (at most 10 groups)"`
	FailureIssues      []IssueGroup         `json:"failure_issues" jsonschema:"the judge's failing evaluations in the window, grouped by its reason (at most 10 groups)"`
	Performance        api.JudgePerformance `json:"performance" jsonschema:"the judge's agreement with the calibrations submitted in the window"`
	Notes              []string             `json:"notes" jsonschema:"where a read or the answer was bounded"`
	Next               NextCall             `json:"next" jsonschema:"a call to make next"`
}

// PreparePromptInput is the optimization of a prompt to prepare.
type PreparePromptInput struct {
	PromptSlug    string `json:"prompt_slug" jsonschema:"the prompt's slug"`
	OptimizerType string `json:"optimizer_type,omitempty" jsonschema:"auto (the default), quick_refine, dspy_bootstrap or dspy_gepa"`
	MaxModelCalls int    `json:"max_model_calls,omitempty" jsonschema:"the budget's model calls; omit for the type's default"`
	Seed          *int64 `json:"seed,omitempty" jsonschema:"the split's seed; omit to pin 1"`
}

// PromptSignal is what an optimization of a prompt would learn from.
type PromptSignal struct {
	Examples           int           `json:"examples" jsonschema:"completions of the prompt found, the run's examples (at most 200)"`
	FeedbackRead       int           `json:"feedback_read" jsonschema:"of those, the newest whose feedback was read (at most 100)"`
	WithFeedback       int           `json:"with_feedback" jsonschema:"completions with a person's feedback"`
	Negative           int           `json:"negative" jsonschema:"of those, thumbs down"`
	Positive           int           `json:"positive" jsonschema:"thumbs up"`
	WithExpectedOutput int           `json:"with_expected_output" jsonschema:"completions with an expected output"`
	Demonstrations     int           `json:"demonstrations" jsonschema:"training examples (by the seed's split) with an expected output or a thumbs up"`
	Judges             []JudgeCounts `json:"judges" jsonschema:"the intents: the prompt's linked judges, all their evaluations"`
}

// PreparePromptOutput is prepare-prompt-optimization's answer.
type PreparePromptOutput struct {
	PromptSlug      string       `json:"prompt_slug" jsonschema:"the prompt"`
	BaselineVersion int          `json:"baseline_version" jsonschema:"the version the run would improve on"`
	Baseline        string       `json:"baseline" jsonschema:"why that version"`
	Signal          PromptSignal `json:"signal" jsonschema:"what the run would learn from"`
	EnoughSignal    bool         `json:"enough_signal" jsonschema:"whether a run can succeed and has something to learn"`
	Missing         []string     `json:"missing" jsonschema:"what is missing when enough_signal is false"`
	AutoPicks       string       `json:"auto_picks" jsonschema:"the type auto would pick"`
	Why             string       `json:"why" jsonschema:"the rule that picks it (README: API reference: prompt optimization)"`
	ModelCalls      int          `json:"model_calls" jsonschema:"the budget's model calls"`
	ComparisonCalls int          `json:"comparison_calls" jsonschema:"the calls reserved for comparing candidate and baseline on the holdout"`
	Notes           []string     `json:"notes" jsonschema:"bounds of the reads, and the seed pinned"`
	Next            NextCall     `json:"next" jsonschema:"the call that starts the run, for a person to confirm"`
}

// PrepareJudgeInput is the optimization of a judge to prepare.
type PrepareJudgeInput struct {
	JudgeID       string `json:"judge_id" jsonschema:"the judge's id"`
	MaxModelCalls int    `json:"max_model_calls,omitempty" jsonschema:"the budget's model calls; omit for the default (200)"`
	Seed          *int64 `json:"seed,omitempty" jsonschema:"the split's seed (default 1)"`
}

// PrepareJudgeOutput is prepare-judge-optimization's answer.
type PrepareJudgeOutput struct {
	JudgeID          string               `json:"judge_id" jsonschema:"the judge"`
	Name             string               `json:"name" jsonschema:"its name"`
	TemplateVersion  int                  `json:"template_version" jsonschema:"the template the run would improve on"`
	Calibrated       int                  `json:"calibrated" jsonschema:"calibrated evaluations, the run's examples (it reads at most 500)"`
	CalibrationsRead int                  `json:"calibrations_read" jsonschema:"the newest of those whose feedback was read (at most 100)"`
	Disagreements    int                  `json:"disagreements" jsonschema:"of those, verdicts people said were wrong: what the rewrite learns from"`
	Agreement        api.VerdictAgreement `json:"agreement" jsonschema:"the judge's agreement with people over the last 30 days"`
	EnoughSignal     bool                 `json:"enough_signal" jsonschema:"whether a run can succeed and has something to learn"`
	Missing          []string             `json:"missing" jsonschema:"what is missing when enough_signal is false"`
	AutoPicks        string               `json:"auto_picks" jsonschema:"the type auto picks: quick_refine, the only one for judges"`
	ModelCalls       int                  `json:"model_calls" jsonschema:"the budget's model calls"`
	ComparisonCalls  int                  `json:"comparison_calls" jsonschema:"the calls reserved for comparing the templates on the holdout"`
	Notes            []string             `json:"notes" jsonschema:"bounds of the reads"`
	Next             NextCall             `json:"next" jsonschema:"the call that starts the run, for a person to confirm"`
}

// proposalTools are the read-only tools that investigate and prepare.
func (s *server) proposalTools() []tool {
	return []tool{
		newTool(s, &mcp.Tool{Name: "investigate-prompt-issues", Description: "Find what goes wrong with a prompt: recent thumbs down and failing evaluations of its linked judges, " +
			"grouped by reason, with examples. Changes nothing.",
			Annotations: readOnly("Investigate a prompt's issues")}, investigatePrompt),
		newTool(s, &mcp.Tool{Name: "investigate-judge-issues", Description: "Find where a judge goes wrong: the verdicts people's calibration feedback disagreed with, " +
			"its failing evaluations grouped by reason, and its agreement with people. Changes nothing.",
			Annotations: readOnly("Investigate a judge's issues")}, investigateJudge),
		newTool(s, &mcp.Tool{Name: "prepare-prompt-optimization", Description: "Tell whether a prompt has enough feedback and evaluations to optimize, which type auto would pick, " +
			"and the exact start-prompt-optimization call to confirm. Changes nothing.",
			Annotations: readOnly("Prepare a prompt optimization")}, preparePrompt),
		newTool(s, &mcp.Tool{Name: "prepare-judge-optimization", Description: "Tell whether a judge has enough calibration feedback to optimize its template, " +
			"and the exact start-judge-optimization call to confirm. Changes nothing.",
			Annotations: readOnly("Prepare a judge optimization")}, prepareJudge),
	}
}

func investigatePrompt(ctx context.Context, c *client.Client, in InvestigatePromptInput) (InvestigatePromptOutput, error) {
	if in.PromptSlug == "" {
		return InvestigatePromptOutput{}, errInput("prompt_slug is required")
	}
	since, err := windowStart(in.WindowHours)
	if err != nil {
		return InvestigatePromptOutput{}, err
	}
	if _, err := c.PromptVersion(ctx, in.PromptSlug, client.PromptSelector{}); err != nil {
		return InvestigatePromptOutput{}, err
	}
	out := InvestigatePromptOutput{PromptSlug: in.PromptSlug, Since: since, LinkedJudges: []JudgeCounts{}, Notes: []string{},
		Next: NextCall{Tool: "prepare-prompt-optimization", Arguments: map[string]any{"prompt_slug": in.PromptSlug}}}
	all, err := c.Judges(ctx)
	if err != nil {
		return out, err
	}
	linked := linkedJudges(all, in.PromptSlug)
	if len(linked) > maxJudgesRead {
		out.Notes = append(out.Notes, fmt.Sprintf("%d judges are linked: the evaluations of the first %d were read", len(linked), maxJudgesRead))
		linked = linked[:maxJudgesRead]
	}
	var failing []issue
	for _, j := range linked {
		counts, evs, err := judgeCounts(ctx, c, j, since, failingReads)
		if err != nil {
			return out, err
		}
		out.LinkedJudges = append(out.LinkedJudges, counts)
		if counts.Failing > len(evs) {
			out.Notes = append(out.Notes, fmt.Sprintf("%s: the newest %d of %d failing evaluations were read", judgeName(j), len(evs), counts.Failing))
		}
		for _, e := range evs {
			failing = append(failing, issue{reason: e.EvaluationReason, judge: &j,
				example: IssueExample{SpanID: e.SpanID, Verdict: verdictText(e), JudgeReason: shorten(e.EvaluationReason, reasonChars)}})
		}
	}

	completions, scanned, err := completionsOf(ctx, c, in.PromptSlug, url.Values{"created_after": {since.Format(time.RFC3339Nano)}}, issueSpanScan)
	if err != nil {
		return out, err
	}
	if scanned {
		out.Notes = append(out.Notes, fmt.Sprintf("the newest %d llm spans of the project in the window were searched for the prompt's completions", issueSpanScan))
	}
	read := completions[:min(len(completions), feedbackReads)]
	if len(read) < len(completions) {
		out.Notes = append(out.Notes, fmt.Sprintf("feedback was read on the newest %d of the %d completions found", len(read), len(completions)))
	}
	people, err := peopleFeedback(ctx, c, spanIDs(read))
	if err != nil {
		return out, err
	}
	out.CompletionsRead = len(read)
	var negative []issue
	for _, sp := range read {
		for _, f := range people[sp.ID] {
			if f.SourceType == api.SourceHuman && !f.ThumbsUp {
				negative = append(negative, issue{reason: deref(f.Reason), example: IssueExample{SpanID: sp.ID, ExpectedOutput: shorten(deref(f.ExpectedOutput), exampleChars)}})
			}
		}
	}
	out.NegativeFeedback = len(negative)

	known := make(map[string]api.Span, len(completions))
	for _, sp := range completions {
		known[sp.ID] = sp
	}
	var note string
	out.FeedbackIssues, note = groupIssues(negative, "thumbs down")
	out.Notes = appendNote(out.Notes, note)
	out.EvaluationIssues, note = groupIssues(failing, "failing evaluations")
	out.Notes = appendNote(out.Notes, note)
	if err := fillExamples(ctx, c, known, out.FeedbackIssues, out.EvaluationIssues); err != nil {
		return out, err
	}
	return out, nil
}

func investigateJudge(ctx context.Context, c *client.Client, in InvestigateJudgeInput) (InvestigateJudgeOutput, error) {
	if in.JudgeID == "" {
		return InvestigateJudgeOutput{}, errInput("judge_id is required")
	}
	since, err := windowStart(in.WindowHours)
	if err != nil {
		return InvestigateJudgeOutput{}, err
	}
	j, err := c.Judge(ctx, in.JudgeID)
	if err != nil {
		return InvestigateJudgeOutput{}, err
	}
	out := InvestigateJudgeOutput{JudgeID: j.ID, Name: j.Name, EvaluationType: j.EvaluationType, Since: since, Notes: []string{},
		Next: NextCall{Tool: "prepare-judge-optimization", Arguments: map[string]any{"judge_id": j.ID}}}
	if out.Performance, err = c.JudgePerformance(ctx, j.ID, since, time.Time{}); err != nil {
		return out, err
	}
	counts, evs, err := judgeCounts(ctx, c, j, since, failingReads)
	if err != nil {
		return out, err
	}
	out.Evaluations, out.Failing = counts.Evaluations, counts.Failing
	if counts.Failing > len(evs) {
		out.Notes = append(out.Notes, fmt.Sprintf("the newest %d of %d failing evaluations were read", len(evs), counts.Failing))
	}
	var failing []issue
	for _, e := range evs {
		failing = append(failing, issue{reason: e.EvaluationReason, example: IssueExample{SpanID: e.SpanID, Verdict: verdictText(e)}})
	}

	cals, total, err := calibrationsOf(ctx, c, j.ID)
	if err != nil {
		return out, err
	}
	out.CalibrationsRead = len(cals)
	if total > len(cals) {
		out.Notes = append(out.Notes, fmt.Sprintf("the newest %d of %d calibrated evaluations were read", len(cals), total))
	}
	var wrong []issue
	for _, cal := range cals {
		if cal.agree {
			continue
		}
		wrong = append(wrong, issue{reason: cal.reason, example: IssueExample{SpanID: cal.eval.SpanID, Verdict: verdictText(cal.eval),
			JudgeReason: shorten(cal.eval.EvaluationReason, reasonChars)}})
	}
	out.Disagreements = len(wrong)
	var note string
	out.DisagreementIssues, note = groupIssues(wrong, "disagreements")
	out.Notes = appendNote(out.Notes, note)
	out.FailureIssues, note = groupIssues(failing, "failing evaluations")
	out.Notes = appendNote(out.Notes, note)
	if err := fillExamples(ctx, c, nil, out.DisagreementIssues, out.FailureIssues); err != nil {
		return out, err
	}
	return out, nil
}

func preparePrompt(ctx context.Context, c *client.Client, in PreparePromptInput) (PreparePromptOutput, error) {
	requested := cmp.Or(in.OptimizerType, optimize.TypeAuto)
	if !slices.Contains(api.OptimizerTypes, requested) {
		return PreparePromptOutput{}, errInput("optimizer_type must be auto, quick_refine, dspy_bootstrap or dspy_gepa, not %q", requested)
	}
	if in.PromptSlug == "" {
		return PreparePromptOutput{}, errInput("prompt_slug is required")
	}
	if in.MaxModelCalls < 0 {
		return PreparePromptOutput{}, errInput("max_model_calls must be positive")
	}
	base, why, err := baselineOf(ctx, c, in.PromptSlug)
	if err != nil {
		return PreparePromptOutput{}, err
	}
	out := PreparePromptOutput{PromptSlug: in.PromptSlug, BaselineVersion: base.Version, Baseline: why, Missing: []string{}, Notes: []string{}}
	out.Signal.Judges = []JudgeCounts{}
	all, err := c.Judges(ctx)
	if err != nil {
		return out, err
	}
	linked := linkedJudges(all, in.PromptSlug)
	if len(linked) > maxJudgesRead {
		out.Notes = append(out.Notes, fmt.Sprintf("%d judges are linked: the evaluations of the first %d were counted", len(linked), maxJudgesRead))
	}
	for _, j := range linked[:min(len(linked), maxJudgesRead)] {
		counts, _, err := judgeCounts(ctx, c, j, time.Time{}, 0)
		if err != nil {
			return out, err
		}
		out.Signal.Judges = append(out.Signal.Judges, counts)
	}

	completions, scanned, err := completionsOf(ctx, c, in.PromptSlug, nil, prepareSpanScan)
	if err != nil {
		return out, err
	}
	if scanned {
		out.Notes = append(out.Notes, fmt.Sprintf("the newest %d llm spans of the project (last 30 days) were searched for the prompt's completions: there may be more", prepareSpanScan))
	}
	completions = completions[:min(len(completions), api.MaxOptimizationExamples)]
	read := completions[:min(len(completions), feedbackReads)]
	if len(read) < len(completions) {
		out.Notes = append(out.Notes, fmt.Sprintf("feedback was read on the newest %d of the %d completions", len(read), len(completions)))
	}
	people, err := peopleFeedback(ctx, c, spanIDs(read))
	if err != nil {
		return out, err
	}
	examples := make([]optimize.Example, 0, len(completions))
	for _, sp := range completions {
		ex := optimize.Example{ID: sp.ID}
		var last *api.HumanFeedbackItem
		for i, f := range people[sp.ID] {
			if f.SourceType != api.SourceHuman {
				continue
			}
			if last == nil || !f.CreatedAt.Before(last.CreatedAt) {
				last = &people[sp.ID][i]
			}
			if f.ExpectedOutput != nil && *f.ExpectedOutput != "" {
				ex.ExpectedOutput = *f.ExpectedOutput
			}
		}
		if last != nil {
			ex.ThumbsUp = &last.ThumbsUp
			out.Signal.WithFeedback++
			if last.ThumbsUp {
				out.Signal.Positive++
			} else {
				out.Signal.Negative++
			}
		}
		if ex.ExpectedOutput != "" {
			out.Signal.WithExpectedOutput++
		}
		examples = append(examples, ex)
	}
	out.Signal.Examples, out.Signal.FeedbackRead = len(examples), len(read)

	seed := int64(preparedSeed)
	if in.Seed != nil {
		seed = *in.Seed
	} else {
		out.Notes = append(out.Notes, fmt.Sprintf("the next call pins seed %d, so that the run splits its examples as predicted here; another seed splits them another way", preparedSeed))
	}
	split := optimize.SplitExamples(examples, seed)
	for _, ex := range split.Train {
		if ex.ExpectedOutput != "" || ex.ThumbsUp != nil && *ex.ThumbsUp {
			out.Signal.Demonstrations++
		}
	}
	out.AutoPicks, out.Why = optimize.AutoType(len(examples), in.MaxModelCalls, out.Signal.Demonstrations)
	typ := requested
	if typ == optimize.TypeAuto {
		typ = out.AutoPicks
	}
	out.ModelCalls = cmp.Or(in.MaxModelCalls, api.DefaultBudgets[typ].MaxModelCalls)
	out.ComparisonCalls = 2 * len(split.Holdout) * (1 + len(linked))

	failing := 0
	for _, j := range out.Signal.Judges {
		failing += j.Failing
	}
	if len(examples) < api.MinOptimizationExamples {
		out.Missing = append(out.Missing, fmt.Sprintf("completions: %d found, a run needs at least %d", len(examples), api.MinOptimizationExamples))
	}
	if len(linked) == 0 {
		out.Missing = append(out.Missing, "a judge to score candidates: link one with link-judge-to-prompt (or give intents to start-prompt-optimization)")
	}
	if out.Signal.Negative == 0 && failing == 0 && out.Signal.WithExpectedOutput == 0 {
		out.Missing = append(out.Missing, "something to learn from: no thumbs down, failing evaluation or expected output (create-prompt-feedback records some)")
	}
	if len(examples) >= api.MinOptimizationExamples && out.ModelCalls <= out.ComparisonCalls {
		out.Missing = append(out.Missing, fmt.Sprintf("budget: %d model calls do not cover the comparison on the holdout (%d calls)", out.ModelCalls, out.ComparisonCalls))
	}
	out.EnoughSignal = len(out.Missing) == 0

	args := map[string]any{"prompt_slug": in.PromptSlug, "optimizer_type": typ, "seed": seed, "confirm": true}
	if in.MaxModelCalls > 0 {
		args["budget"] = map[string]any{"max_model_calls": in.MaxModelCalls}
	}
	out.Next = NextCall{Tool: "start-prompt-optimization", Arguments: args}
	return out, nil
}

func prepareJudge(ctx context.Context, c *client.Client, in PrepareJudgeInput) (PrepareJudgeOutput, error) {
	if in.JudgeID == "" {
		return PrepareJudgeOutput{}, errInput("judge_id is required")
	}
	if in.MaxModelCalls < 0 {
		return PrepareJudgeOutput{}, errInput("max_model_calls must be positive")
	}
	j, err := c.Judge(ctx, in.JudgeID)
	if err != nil {
		return PrepareJudgeOutput{}, err
	}
	out := PrepareJudgeOutput{JudgeID: j.ID, Name: j.Name, TemplateVersion: j.TemplateVersion, Missing: []string{}, Notes: []string{},
		AutoPicks: optimize.TypeQuickRefine}
	perf, err := c.JudgePerformance(ctx, j.ID, time.Time{}, time.Time{})
	if err != nil {
		return out, err
	}
	out.Agreement = perf.Verdict
	cals, total, err := calibrationsOf(ctx, c, j.ID)
	if err != nil {
		return out, err
	}
	out.Calibrated, out.CalibrationsRead = total, len(cals)
	if total > len(cals) {
		out.Notes = append(out.Notes, fmt.Sprintf("disagreements were counted on the newest %d of %d calibrated evaluations", len(cals), total))
	}
	for _, cal := range cals {
		if !cal.agree {
			out.Disagreements++
		}
	}
	n := min(total, api.MaxCalibrations)
	seed := int64(api.DefaultJudgeRunSeed)
	if in.Seed != nil {
		seed = *in.Seed
	}
	// Only the holdout's size matters here, and it depends on the count alone.
	placeholders := make([]optimize.Example, n)
	for i := range placeholders {
		placeholders[i].ID = strconv.Itoa(i)
	}
	out.ComparisonCalls = 2 * len(optimize.SplitExamples(placeholders, seed).Holdout)
	out.ModelCalls = cmp.Or(in.MaxModelCalls, api.DefaultBudgets[api.OptimizerQuickRefine].MaxModelCalls)

	if total < api.MinOptimizationExamples {
		out.Missing = append(out.Missing, fmt.Sprintf("calibrations: %d calibrated evaluations, a run needs at least %d (create-judge-feedback records some)", total, api.MinOptimizationExamples))
	}
	if out.Disagreements == 0 {
		out.Missing = append(out.Missing, "something to learn from: nobody said a verdict was wrong (create-judge-feedback with thumbs_up false)")
	}
	if total >= api.MinOptimizationExamples && out.ModelCalls <= out.ComparisonCalls {
		out.Missing = append(out.Missing, fmt.Sprintf("budget: %d model calls do not cover the comparison on the holdout (%d calls)", out.ModelCalls, out.ComparisonCalls))
	}
	out.EnoughSignal = len(out.Missing) == 0
	args := map[string]any{"judge_id": j.ID, "seed": seed, "confirm": true}
	if in.MaxModelCalls > 0 {
		args["budget"] = map[string]any{"max_model_calls": in.MaxModelCalls}
	}
	out.Next = NextCall{Tool: "start-judge-optimization", Arguments: args}
	return out, nil
}

// windowStart is the start of a window of hours (0: the default) ending now.
func windowStart(hours int) (time.Time, error) {
	switch {
	case hours == 0:
		hours = issueWindowHours
	case hours < 0 || hours > maxIssueWindowHours:
		return time.Time{}, errInput("window_hours must be from 1 to %d, not %d", maxIssueWindowHours, hours)
	}
	return time.Now().UTC().Add(-time.Duration(hours) * time.Hour).Truncate(time.Second), nil
}
