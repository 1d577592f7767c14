package optimizer

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/judge"
	"github.com/plumehq/plume/shared/optimize"
	"github.com/plumehq/plume/shared/prompt"
)

// Proposals reads what people and judges said of a prompt or a judge and tells what to
// improve and whether an optimization has enough to learn from (api.PromptIssues,
// api.JudgeIssues and the optimization previews). It changes nothing. It reads as a run reads
// (optimize.LoadExamples, the judge's calibrations), so that a preview predicts the run; every
// read is bounded and an answer's Notes say where a bound was reached.
type Proposals struct {
	prompts      Prompts
	judges       Judges
	evaluations  Evaluations
	calibrations Calibrations
	examples     optimize.ExampleSource
	now          func() time.Time
}

// Evaluations lists a judge's evaluations and counts them (ddb.JudgeStore).
type Evaluations interface {
	Evaluations(ctx context.Context, projectID, judgeID string, q judge.Query) (judge.Page, error)
}

// NewProposals returns the proposals of the stores.
func NewProposals(prompts Prompts, judges Judges, evaluations Evaluations, calibrations Calibrations, examples optimize.ExampleSource, now func() time.Time) *Proposals {
	return &Proposals{prompts: prompts, judges: judges, evaluations: evaluations, calibrations: calibrations, examples: examples, now: now}
}

// Bounds of the proposals' reads.
const (
	feedbackReads    = 100 // completions whose feedback an issue read covers
	failingReads     = 200 // failing evaluations read per judge
	calibrationReads = 100 // calibrations an issue read covers
	maxJudgesRead    = 10  // linked judges read per prompt
)

// PromptIssues groups the thumbs down on prompt slug's completions since q's window start, and
// the failing evaluations of its linked judges in the window, by reason. Errors:
// errs.NotFound for an unknown prompt.
func (p *Proposals) PromptIssues(ctx context.Context, projectID, slug string, q api.IssueQuery) (api.PromptIssues, error) {
	if _, err := p.prompts.Get(ctx, projectID, slug, prompt.Selector{}); err != nil {
		return api.PromptIssues{}, err
	}
	since := q.Start(p.now())
	out := api.PromptIssues{PromptSlug: slug, Since: since, LinkedJudges: []api.JudgeCounts{}, Notes: []string{}}
	linked, err := p.linked(ctx, projectID, slug, &out.Notes)
	if err != nil {
		return out, err
	}
	var failing []issue
	for _, j := range linked {
		counts, evs, err := p.judgeCounts(ctx, projectID, j, since, failingReads)
		if err != nil {
			return out, err
		}
		out.LinkedJudges = append(out.LinkedJudges, counts)
		if counts.Failing > len(evs) {
			out.Notes = append(out.Notes, fmt.Sprintf("judge %q: the newest %d of %d failing evaluations were read", j.Name, len(evs), counts.Failing))
		}
		for _, e := range evs {
			failing = append(failing, issue{reason: e.Reason, judge: &j,
				example: api.IssueExample{SpanID: e.SpanID, Verdict: verdictText(e), JudgeReason: shorten(e.Reason)}})
		}
	}

	fbs, err := p.examples.CompletionFeedback(ctx, projectID, slug, feedbackReads)
	if err != nil {
		return out, err
	}
	read := map[string]bool{}
	var negative []issue
	for _, f := range fbs {
		if f.UpdatedAt.Before(since) || len(read) == feedbackReads && !read[f.SpanID] {
			break // newest first: the rest is older, or past the bound
		}
		read[f.SpanID] = true
		if !f.ThumbsUp {
			negative = append(negative, issue{reason: deref(f.Reason), example: api.IssueExample{SpanID: f.SpanID, ExpectedOutput: shorten(deref(f.ExpectedOutput))}})
		}
	}
	if len(read) == feedbackReads {
		out.Notes = append(out.Notes, fmt.Sprintf("the feedback on the %d completions with the newest feedback was read", feedbackReads))
	}
	out.CompletionsRead, out.NegativeFeedback = len(read), len(negative)

	var note string
	out.FeedbackIssues, note = groupIssues(negative, "thumbs down")
	out.Notes = appendNote(out.Notes, note)
	out.EvaluationIssues, note = groupIssues(failing, "failing evaluations")
	out.Notes = appendNote(out.Notes, note)
	return out, p.fillExamples(ctx, projectID, out.FeedbackIssues, out.EvaluationIssues)
}

// JudgeIssues groups the verdicts of judge judgeID that people's calibrations said were wrong
// (the newest calibrations, whatever the window), and its failing evaluations in q's window,
// by reason. Errors: errs.NotFound for an unknown judge.
func (p *Proposals) JudgeIssues(ctx context.Context, projectID, judgeID string, q api.IssueQuery) (api.JudgeIssues, error) {
	j, err := p.judges.Judge(ctx, projectID, judgeID)
	if err != nil {
		return api.JudgeIssues{}, err
	}
	since := q.Start(p.now())
	out := api.JudgeIssues{JudgeID: j.ID, Name: j.Name, EvaluationType: j.EvaluationType, Since: since, Notes: []string{}}
	counts, evs, err := p.judgeCounts(ctx, projectID, j, since, failingReads)
	if err != nil {
		return out, err
	}
	out.Evaluations, out.Failing = counts.Evaluations, counts.Failing
	if counts.Failing > len(evs) {
		out.Notes = append(out.Notes, fmt.Sprintf("the newest %d of %d failing evaluations were read", len(evs), counts.Failing))
	}
	var failing []issue
	for _, e := range evs {
		failing = append(failing, issue{reason: e.Reason, example: api.IssueExample{SpanID: e.SpanID, Verdict: verdictText(e)}})
	}

	pairs, err := p.calibrations.Calibrations(ctx, projectID, j.ID, judge.CalibrationQuery{Limit: calibrationReads})
	if err != nil {
		return out, err
	}
	if len(pairs) == calibrationReads {
		out.Notes = append(out.Notes, fmt.Sprintf("the newest %d calibrations were read", calibrationReads))
	}
	out.CalibrationsRead = len(pairs)
	var wrong []issue
	for _, c := range pairs {
		if !c.ThumbsUp {
			wrong = append(wrong, issue{reason: c.Reason, example: api.IssueExample{SpanID: c.Evaluation.SpanID,
				Verdict: verdictText(c.Evaluation), JudgeReason: shorten(c.Evaluation.Reason)}})
		}
	}
	out.Disagreements = len(wrong)

	var note string
	out.DisagreementIssues, note = groupIssues(wrong, "disagreements")
	out.Notes = appendNote(out.Notes, note)
	out.FailureIssues, note = groupIssues(failing, "failing evaluations")
	out.Notes = appendNote(out.Notes, note)
	return out, p.fillExamples(ctx, projectID, out.DisagreementIssues, out.FailureIssues)
}

// PromptPreview predicts the run that q would start on prompt slug: it reads the examples the
// run would read (its default intents: the linked judges), splits them by the seed (1 unless
// given) and applies the run's rules: the type auto picks, the budget, the comparison reserved
// on the holdout. Errors: errs.NotFound for an unknown prompt.
func (p *Proposals) PromptPreview(ctx context.Context, projectID, slug string, q api.PreviewQuery) (api.PromptOptimizationPreview, error) {
	base, production, err := baselineOf(ctx, p.prompts, projectID, slug)
	if err != nil {
		return api.PromptOptimizationPreview{}, err
	}
	why := "what production serves"
	if !production {
		why = "the latest, as production is not pinned"
	}
	out := api.PromptOptimizationPreview{PromptSlug: slug, BaselineVersion: base.Version, Baseline: why, Missing: []string{}, Notes: []string{}}
	out.Signal.Judges = []api.JudgeCounts{}
	all, err := p.judges.Judges(ctx, projectID)
	if err != nil {
		return out, err
	}
	var intents []optimize.Intent
	for _, j := range all {
		if slices.Contains(j.LinkedPrompts, slug) {
			intents = append(intents, optimize.Intent{JudgeID: j.ID, Weight: 1})
			out.Signal.Judges = append(out.Signal.Judges, api.JudgeCounts{JudgeID: j.ID, Name: j.Name})
		}
	}
	examples, err := optimize.LoadExamples(ctx, p.examples, projectID, slug, intents, api.MaxOptimizationExamples)
	if err != nil {
		return out, err
	}
	if len(examples) == api.MaxOptimizationExamples {
		out.Notes = append(out.Notes, fmt.Sprintf("a run reads at most %d completions: those with feedback or a verdict first, then the newest", api.MaxOptimizationExamples))
	}
	out.Signal = promptSignal(examples, out.Signal.Judges)

	seed := int64(1)
	if q.Seed != nil {
		seed = *q.Seed
	} else {
		out.Notes = append(out.Notes, "the start pins seed 1, so that the run splits its examples as predicted here; another seed splits them another way")
	}
	split := optimize.SplitExamples(examples, seed)
	for _, ex := range split.Train {
		if ex.ExpectedOutput != "" || ex.ThumbsUp != nil && *ex.ThumbsUp {
			out.Signal.Demonstrations++
		}
	}
	out.AutoPicks, out.Why = optimize.AutoType(len(examples), q.MaxModelCalls, out.Signal.Demonstrations)
	typ := cmp.Or(q.OptimizerType, api.OptimizerAuto)
	if typ == api.OptimizerAuto {
		typ = out.AutoPicks
	}
	out.ModelCalls = cmp.Or(q.MaxModelCalls, api.DefaultBudgets[typ].MaxModelCalls)
	out.ComparisonCalls = 2 * len(split.Holdout) * (1 + len(intents))

	failing := 0
	for _, j := range out.Signal.Judges {
		failing += j.Failing
	}
	if len(examples) < api.MinOptimizationExamples {
		out.Missing = append(out.Missing, fmt.Sprintf("completions: %d found, a run needs at least %d", len(examples), api.MinOptimizationExamples))
	}
	if len(intents) == 0 {
		out.Missing = append(out.Missing, "a judge to score candidates: link one to the prompt (or give intents when starting the run)")
	}
	if out.Signal.Negative == 0 && failing == 0 && out.Signal.WithExpectedOutput == 0 {
		out.Missing = append(out.Missing, "something to learn from: no thumbs down, failing verdict or expected output on the completions")
	}
	out.Missing = appendNote(out.Missing, budgetShort(len(examples), out.ModelCalls, out.ComparisonCalls))
	out.EnoughSignal = len(out.Missing) == 0
	out.Start = startRequest(typ, q.MaxModelCalls, seed)
	return out, nil
}

// promptSignal counts people's feedback on examples and the judges' verdicts, for judges.
func promptSignal(examples []optimize.Example, judges []api.JudgeCounts) api.PromptSignal {
	s := api.PromptSignal{Examples: len(examples), Judges: judges}
	for _, ex := range examples {
		if ex.ThumbsUp != nil {
			s.WithFeedback++
			if *ex.ThumbsUp {
				s.Positive++
			} else {
				s.Negative++
			}
		}
		if ex.ExpectedOutput != "" {
			s.WithExpectedOutput++
		}
		for i := range judges {
			if v, ok := ex.Judged[judges[i].JudgeID]; ok {
				judges[i].Evaluations++
				if v.Score < 1 {
					judges[i].Failing++
				}
			}
		}
	}
	return s
}

// JudgePreview predicts the run that q would start on judge judgeID's template: its examples
// are the judge's calibrated evaluations (one per span, the newest calibration; at most
// api.MaxCalibrations), what it learns from the verdicts people said were wrong. Errors:
// errs.NotFound for an unknown judge, errs.Invalid for a type other than quick_refine.
func (p *Proposals) JudgePreview(ctx context.Context, projectID, judgeID string, q api.PreviewQuery) (api.JudgeOptimizationPreview, error) {
	if q.OptimizerType != "" && q.OptimizerType != api.OptimizerAuto && q.OptimizerType != api.OptimizerQuickRefine {
		return api.JudgeOptimizationPreview{}, errs.Invalid("a judge's template is optimized with quick_refine; %q is for prompts", q.OptimizerType)
	}
	j, err := p.judges.Judge(ctx, projectID, judgeID)
	if err != nil {
		return api.JudgeOptimizationPreview{}, err
	}
	out := api.JudgeOptimizationPreview{JudgeID: j.ID, Name: j.Name, TemplateVersion: j.TemplateVersion, Missing: []string{}, Notes: []string{},
		AutoPicks: api.OptimizerQuickRefine}
	pairs, err := p.calibrations.Calibrations(ctx, projectID, j.ID, judge.CalibrationQuery{Limit: api.MaxCalibrations})
	if err != nil {
		return out, err
	}
	if len(pairs) == api.MaxCalibrations {
		out.Notes = append(out.Notes, fmt.Sprintf("a run reads the newest %d calibrations", api.MaxCalibrations))
	}
	var examples []optimize.Example
	seen := map[string]bool{}
	for _, c := range pairs {
		if seen[c.Evaluation.SpanID] {
			continue // calibrated by several people: the newest counts, as in the run
		}
		seen[c.Evaluation.SpanID] = true
		examples = append(examples, optimize.Example{ID: c.Evaluation.SpanID})
		if !c.ThumbsUp {
			out.Disagreements++
		}
	}
	out.Calibrated = len(examples)
	seed := int64(api.DefaultJudgeRunSeed)
	if q.Seed != nil {
		seed = *q.Seed
	}
	out.ComparisonCalls = 2 * len(optimize.SplitExamples(examples, seed).Holdout)
	out.ModelCalls = cmp.Or(q.MaxModelCalls, api.DefaultBudgets[api.OptimizerQuickRefine].MaxModelCalls)

	if out.Calibrated < api.MinOptimizationExamples {
		out.Missing = append(out.Missing, fmt.Sprintf("calibrations: %d calibrated evaluations, a run needs at least %d", out.Calibrated, api.MinOptimizationExamples))
	}
	if out.Disagreements == 0 {
		out.Missing = append(out.Missing, "something to learn from: nobody said a verdict was wrong (calibration feedback with thumbs_up false)")
	}
	out.Missing = appendNote(out.Missing, budgetShort(out.Calibrated, out.ModelCalls, out.ComparisonCalls))
	out.EnoughSignal = len(out.Missing) == 0
	out.Start = startRequest("", q.MaxModelCalls, seed)
	return out, nil
}

// budgetShort is what is missing when a run of n examples could not pay its comparison on the
// holdout ("" when it can, or when it has too few examples to run at all).
func budgetShort(n, calls, comparison int) string {
	if n < api.MinOptimizationExamples || calls > comparison {
		return ""
	}
	return fmt.Sprintf("budget: %d model calls do not cover the comparison on the holdout (%d calls)", calls, comparison)
}

// startRequest is the body of POST .../optimization-runs that starts the previewed run.
func startRequest(typ string, maxCalls int, seed int64) api.OptimizationStart {
	req := api.OptimizationStart{OptimizerType: typ, Config: api.OptimizationConfig{Seed: &seed}}
	if maxCalls > 0 {
		req.Config.Budget = &api.OptimizationBudget{MaxModelCalls: maxCalls}
	}
	return req
}

// linked are the judges linked to prompt slug, at most maxJudgesRead (a note says so).
func (p *Proposals) linked(ctx context.Context, projectID, slug string, notes *[]string) ([]judge.Judge, error) {
	all, err := p.judges.Judges(ctx, projectID)
	if err != nil {
		return nil, err
	}
	var out []judge.Judge
	for _, j := range all {
		if slices.Contains(j.LinkedPrompts, slug) {
			out = append(out, j)
		}
	}
	if len(out) > maxJudgesRead {
		*notes = append(*notes, fmt.Sprintf("%d judges are linked: the evaluations of the first %d were read", len(out), maxJudgesRead))
		out = out[:maxJudgesRead]
	}
	return out, nil
}

// judgeCounts counts j's evaluations since and its failing ones, and returns the newest limit
// failing ones.
func (p *Proposals) judgeCounts(ctx context.Context, projectID string, j judge.Judge, since time.Time, limit int) (api.JudgeCounts, []judge.Evaluation, error) {
	all, err := p.evaluations.Evaluations(ctx, projectID, j.ID, judge.Query{Start: since})
	if err != nil {
		return api.JudgeCounts{}, nil, err
	}
	failing, err := p.evaluations.Evaluations(ctx, projectID, j.ID, judge.Query{Start: since, Result: new(false), Limit: limit})
	if err != nil {
		return api.JudgeCounts{}, nil, err
	}
	return api.JudgeCounts{JudgeID: j.ID, Name: j.Name, Evaluations: all.Total, Failing: failing.Total}, failing.Evaluations, nil
}

// fillExamples sets the input and output of the groups' examples, read in one batch.
func (p *Proposals) fillExamples(ctx context.Context, projectID string, lists ...[]api.IssueGroup) error {
	var ids []string
	for _, groups := range lists {
		for _, g := range groups {
			for _, ex := range g.Examples {
				if !slices.Contains(ids, ex.SpanID) {
					ids = append(ids, ex.SpanID)
				}
			}
		}
	}
	if len(ids) == 0 {
		return nil
	}
	spans, err := p.examples.Spans(ctx, projectID, ids)
	if err != nil {
		return err
	}
	for _, groups := range lists {
		for _, g := range groups {
			for i := range g.Examples {
				ex := &g.Examples[i]
				if sp, ok := spans[ex.SpanID]; ok {
					ex.Input, ex.Output = shorten(deref(sp.InputData)), shorten(deref(sp.OutputData))
				}
			}
		}
	}
	return nil
}

// issue is one failure to group: its reason, the judge of a failing evaluation, and the
// example it makes.
type issue struct {
	reason  string
	judge   *judge.Judge
	example api.IssueExample
}

// groupIssues groups issues (newest first) by judge and normalised reason, largest groups
// first, at most api.MaxIssueGroups, each with its first api.IssueExamplesPerGroup examples;
// the note says what was left out ("" when nothing was).
func groupIssues(issues []issue, what string) ([]api.IssueGroup, string) {
	byKey := map[string]*api.IssueGroup{}
	var order []string
	for _, is := range issues {
		reason := normReason(is.reason)
		key := reason
		g := api.IssueGroup{Reason: shorten(reason), Examples: []api.IssueExample{}}
		if is.judge != nil {
			key = is.judge.ID + "\x00" + reason
			g.JudgeID, g.JudgeName = is.judge.ID, is.judge.Name
		}
		if byKey[key] == nil {
			byKey[key] = &g
			order = append(order, key)
		}
		grp := byKey[key]
		grp.Count++
		if len(grp.Examples) < api.IssueExamplesPerGroup {
			grp.Examples = append(grp.Examples, is.example)
		}
	}
	out := make([]api.IssueGroup, 0, len(order))
	for _, k := range order {
		out = append(out, *byKey[k])
	}
	slices.SortStableFunc(out, func(a, b api.IssueGroup) int { return cmp.Compare(b.Count, a.Count) })
	if len(out) <= api.MaxIssueGroups {
		return out, ""
	}
	left := 0
	for _, g := range out[api.MaxIssueGroups:] {
		left += g.Count
	}
	return out[:api.MaxIssueGroups], fmt.Sprintf("%s: the %d largest groups are shown; %d more groups (%d failures) are left out",
		what, api.MaxIssueGroups, len(out)-api.MaxIssueGroups, left)
}

// normReason is the form of a reason that groups: lowercase, trimmed, spaces collapsed.
func normReason(r string) string {
	r = strings.ToLower(strings.Join(strings.Fields(r), " "))
	if r == "" {
		return "(no reason given)"
	}
	return r
}

// verdictText words an evaluation's verdict: pass or fail, and a scored judge's score.
func verdictText(e judge.Evaluation) string {
	v := "fail"
	if e.Result {
		v = "pass"
	}
	if e.Score != nil {
		v += ", score " + strconv.FormatFloat(*e.Score, 'g', -1, 64)
	}
	return v
}

// shorten cuts s to api.IssueTextChars characters, saying how much it left out.
func shorten(s string) string {
	r := []rune(s)
	if len(r) <= api.IssueTextChars {
		return s
	}
	return string(r[:api.IssueTextChars]) + fmt.Sprintf("… [truncated: %d more characters]", len(r)-api.IssueTextChars)
}

func appendNote(notes []string, note string) []string {
	if note == "" {
		return notes
	}
	return append(notes, note)
}
