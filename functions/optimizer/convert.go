package optimizer

import (
	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/optimize"
)

// toRun is the API form of a run.
func toRun(r optimize.Run) api.OptimizationRun {
	out := api.OptimizationRun{
		ID: r.ID, ProjectID: r.ProjectID, Status: r.Status, OptimizerType: r.Type, Requested: r.Requested,
		Progress:    api.OptimizationProgress(r.Progress),
		Baseline:    api.OptimizationBaseline(r.Baseline),
		Simulations: []api.OptimizationSimulation{}, CreatedAt: r.CreatedAt, CreatedBy: r.CreatedBy, UpdatedAt: r.UpdatedAt,
		StartedAt: r.StartedAt, FinishedAt: r.FinishedAt,
		Config: api.OptimizationConfig{Models: r.Config.Models, Seed: &r.Config.Seed,
			Budget: &api.OptimizationBudget{MaxModelCalls: r.Config.Budget.MaxModelCalls, MaxCostUSD: r.Config.Budget.MaxCostUSD}},
	}
	if out.OptimizerType == "" {
		out.OptimizerType = r.Requested
	}
	switch r.Target.Kind {
	case optimize.TargetJudge:
		out.JudgeID = &r.Target.JudgeID
	default:
		out.PromptSlug = &r.Target.Slug
	}
	for _, in := range r.Config.Intents {
		out.Config.Intents = append(out.Config.Intents, api.OptimizationIntent(in))
	}
	if d := r.Config.Dataset; d != nil {
		out.Config.Dataset = &api.OptimizationDataset{Name: d.Name, Version: d.Version, VersionID: d.VersionID, InputColumns: d.InputColumns,
			ExpectedOutputColumn: d.ExpectedOutputColumn, WithFeedback: d.WithFeedback}
	}
	if c := r.Candidate; c != nil {
		ac := &api.OptimizationCandidate{Content: c.Content, Rendered: c.Render(), Hash: c.Hash(), Demonstrations: []api.OptimizationDemonstration{}}
		for _, d := range c.Demonstrations {
			ac.Demonstrations = append(ac.Demonstrations, api.OptimizationDemonstration(d))
		}
		out.Candidate = ac
	}
	if rep := r.Report; rep != nil {
		out.Metrics = &api.OptimizationReport{
			HoldoutIDs: rep.HoldoutIDs, Regressed: rep.Regressed, Recommendation: rep.Recommendation, Reason: rep.Reason,
			Baseline: api.OptimizationScores(rep.Baseline), Candidate: api.OptimizationScores(rep.Candidate),
		}
		if d := rep.Dataset; d != nil {
			ad := api.OptimizationReportDataset(*d)
			out.Metrics.Dataset = &ad
		}
		if a := rep.BaselineAgreement; a != nil {
			out.Metrics.BaselineAgreement = &api.JudgeAgreement{N: a.N, Accuracy: a.Accuracy, Kappa: a.Kappa, TruePositiveRate: a.TruePositiveRate, TrueNegativeRate: a.TrueNegativeRate}
		}
		if a := rep.CandidateAgreement; a != nil {
			out.Metrics.CandidateAgreement = &api.JudgeAgreement{N: a.N, Accuracy: a.Accuracy, Kappa: a.Kappa, TruePositiveRate: a.TruePositiveRate, TrueNegativeRate: a.TrueNegativeRate}
		}
		if out.Metrics.Regressed == nil {
			out.Metrics.Regressed = []string{}
		}
		out.Recommendation = &rep.Recommendation
	}
	for _, s := range r.Simulations {
		as := api.OptimizationSimulation{Model: s.Model, BaselineScore: s.BaselineScore, CandidateScore: s.CandidateScore,
			CostUSD: s.CostUSD, LatencyMS: s.LatencyMS, Examples: s.Examples}
		if s.Error != "" {
			as.Error = &s.Error
		}
		out.Simulations = append(out.Simulations, as)
	}
	if r.Error != "" {
		out.Error = &r.Error
	}
	if r.DeployedVersionID != "" {
		out.DeployedVersionID = &r.DeployedVersionID
	}
	return out
}

// toPreview is the API form of a deploy preview.
func toPreview(p Preview) api.DeployPreview {
	s := api.DeploySummary{
		RunID: p.Run.ID, PromptSlug: p.Run.Target.Slug, Tag: ProductionTag,
		CandidateContent: p.Content, CandidateHash: p.Run.Candidate.Hash(),
	}
	if p.Run.Target.Kind == optimize.TargetJudge {
		s.Tag, s.JudgeID, s.CurrentTemplate = "", &p.Run.Target.JudgeID, p.Template
	}
	if p.Production != nil {
		s.ProductionVersion, s.ProductionContent = &p.Production.Number, &p.Production.Content
	}
	if rep := p.Run.Report; rep != nil {
		s.Recommendation, s.BaselineScore, s.CandidateScore = rep.Recommendation, rep.Baseline.Overall, rep.Candidate.Overall
	}
	return api.DeployPreview{Receipt: p.Receipt, ExpiresAt: p.ExpiresAt, Summary: s}
}
