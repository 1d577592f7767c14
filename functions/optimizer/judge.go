package optimizer

import (
	"context"
	"fmt"
	"math"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/judge"
	"github.com/plumehq/plume/shared/judge/run"
	"github.com/plumehq/plume/shared/optimize"
	"github.com/plumehq/plume/shared/trace"
)

// Calibrations reads a judge's calibrated evaluations (ddb.FeedbackStore).
type Calibrations interface {
	Calibrations(ctx context.Context, projectID, judgeID string, q judge.CalibrationQuery) ([]judge.Pair, error)
}

// optimizeJudge improves a judge's template against its calibration feedback: the examples
// are the spans people calibrated the judge on, what the judge said and whether they agreed;
// quick_refine rewrites the template from the disagreements; the baseline and the candidate
// template judge the holdout's spans again, and their agreement with the people (accuracy,
// kappa, true positive and negative rates) decides: publish only when the candidate's kappa
// is higher and its accuracy not lower.
func (w *Worker) optimizeJudge(ctx context.Context, r optimize.Run) (outcome, error) {
	j, err := w.judges.Judge(ctx, r.ProjectID, r.Target.JudgeID)
	if err != nil {
		return outcome{}, err
	}
	pairs, err := w.calibrations.Calibrations(ctx, r.ProjectID, j.ID, judge.CalibrationQuery{Limit: api.MaxCalibrations})
	if err != nil {
		return outcome{}, err
	}
	ids := make([]string, 0, len(pairs))
	for _, p := range pairs {
		ids = append(ids, p.Evaluation.SpanID)
	}
	spans, err := w.examples.Spans(ctx, r.ProjectID, ids)
	if err != nil {
		return outcome{}, err
	}
	byID := map[string]judge.Pair{}
	var examples []optimize.Example
	for _, p := range pairs {
		sp, ok := spans[p.Evaluation.SpanID]
		if _, seen := byID[sp.ID]; !ok || seen {
			continue // the span is gone, or calibrated by several people: the newest counts
		}
		byID[sp.ID] = p
		up := p.ThumbsUp
		examples = append(examples, optimize.Example{
			ID: sp.ID, Input: deref(sp.InputData), Output: deref(sp.OutputData), ThumbsUp: &up, Reason: p.Reason,
			Judged: map[string]optimize.Verdict{j.ID: optimize.VerdictOf(p.Evaluation)},
		})
	}
	if len(examples) < api.MinOptimizationExamples {
		return outcome{}, errs.Invalid("the judge has %d calibrated evaluations; an optimization needs at least %d", len(examples), api.MinOptimizationExamples)
	}
	split := optimize.SplitExamples(examples, r.Config.Seed)
	budget := r.Config.Budget
	if budget.MaxModelCalls == 0 {
		budget = defaultBudget(optimize.TypeQuickRefine)
	}
	reserve := 2 * len(split.Holdout)
	if budget.MaxModelCalls <= reserve {
		return outcome{}, errs.Invalid("config.budget.max_model_calls %d does not cover the comparison on the holdout (%d calls)", budget.MaxModelCalls, reserve)
	}
	m := &metered{next: w.models, cache: w.cache, projectID: r.ProjectID, now: w.now,
		budget: optimize.Budget{MaxModelCalls: budget.MaxModelCalls - reserve, MaxCostUSD: budget.MaxCostUSD},
		check:  func(ctx context.Context) error { return w.checkCancelled(ctx, r.ProjectID, r.ID) }}
	rf := &reflector{model: m, name: w.defaultModel}
	baseline := optimize.Candidate{Content: j.Template}
	candidate, err := optimize.QuickRefine(ctx, baseline, split.Train, rf)
	if err != nil {
		return outcome{}, err
	}
	m.extend(reserve)
	before, err := w.agreement(ctx, m, j, baseline.Content, split.Holdout, byID)
	if err != nil {
		return outcome{}, err
	}
	after, err := w.agreement(ctx, m, j, candidate.Content, split.Holdout, byID)
	if err != nil {
		return outcome{}, err
	}
	rep := optimize.Report{BaselineAgreement: &before, CandidateAgreement: &after,
		Baseline: optimize.Scores{Overall: or0(before.Accuracy)}, Candidate: optimize.Scores{Overall: or0(after.Accuracy)}}
	for _, ex := range split.Holdout {
		rep.HoldoutIDs = append(rep.HoldoutIDs, ex.ID)
	}
	kb, ka := orInf(before.Kappa), orInf(after.Kappa)
	switch {
	case candidate.Hash() == baseline.Hash():
		rep.Recommendation, rep.Reason = optimize.RecommendNoImprovement, "the reflection found nothing to change in the template"
	case ka <= kb:
		rep.Recommendation = optimize.RecommendNoImprovement
		rep.Reason = fmt.Sprintf("the candidate's kappa %s is not above the template's %s", fmtRate(after.Kappa), fmtRate(before.Kappa))
	case or0(after.Accuracy) < or0(before.Accuracy):
		rep.Recommendation = optimize.RecommendNoImprovement
		rep.Reason = fmt.Sprintf("the candidate's accuracy %s is below the template's %s", fmtRate(after.Accuracy), fmtRate(before.Accuracy))
	default:
		rep.Recommendation = optimize.RecommendPublish
		rep.Reason = fmt.Sprintf("the candidate agrees with people with kappa %s against the template's %s on %d held-out calibrations",
			fmtRate(after.Kappa), fmtRate(before.Kappa), len(split.Holdout))
	}
	progress := m.Spent()
	progress.Iteration = 1
	return outcome{typ: optimize.TypeQuickRefine, candidate: candidate, report: rep, progress: progress}, nil
}

// agreement judges the examples' spans again with template and measures the verdicts against
// the people's calibrations of them.
func (w *Worker) agreement(ctx context.Context, m *metered, j judge.Judge, template string, examples []optimize.Example, pairs map[string]judge.Pair) (optimize.JudgeAgreement, error) {
	j.Template = template
	ctx, err := m.prepay(ctx, len(examples))
	if err != nil {
		return optimize.JudgeAgreement{}, err
	}
	var calibrated []judge.Pair
	for _, ex := range examples {
		sp := trace.Span{ID: ex.ID, Kind: trace.KindLLM, InputData: &ex.Input, OutputData: &ex.Output}
		resp, err := m.Complete(ctx, run.Prompt(j, sp, nil, w.defaultModel))
		if err != nil {
			return optimize.JudgeAgreement{}, err
		}
		in, err := run.Verdict(j, ex.ID, resp)
		if err != nil {
			return optimize.JudgeAgreement{}, err
		}
		evs, err := judge.BuildEvaluations(j, []judge.EvaluationInput{in}, w.now())
		if err != nil {
			return optimize.JudgeAgreement{}, err
		}
		// The person's thumbs were about the verdict they saw: for the new verdict, they agree
		// when it is the verdict the person wanted (the one they saw if they agreed, the other
		// if not). An expected score stands as it is.
		p := pairs[ex.ID]
		wanted := p.Evaluation.Result == p.ThumbsUp
		p.Evaluation, p.ThumbsUp = evs[0], evs[0].Result == wanted
		calibrated = append(calibrated, p)
	}
	perf := judge.Agreement(j, calibrated).Verdict
	return optimize.JudgeAgreement{Accuracy: perf.Accuracy, Kappa: perf.Kappa, TruePositiveRate: perf.TPR,
		TrueNegativeRate: perf.TNR, N: perf.N}, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func or0(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// orInf is a kappa for comparison: none is the worst.
func orInf(p *float64) float64 {
	if p == nil {
		return math.Inf(-1)
	}
	return *p
}

func fmtRate(p *float64) string {
	if p == nil {
		return "(none)"
	}
	return fmt.Sprintf("%.3f", *p)
}
