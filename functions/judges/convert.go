package judges

import (
	"encoding/json"
	"errors"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/judge"
)

// This file converts between the judge domain and its wire form in package api.

// parseSpec reads a judge definition (api.JudgeRequest) from a JSON body: a body that is not a
// JSON object, or a field of the wrong type, is an errs.CodeInvalid error.
func parseSpec(body []byte) (judge.Spec, error) {
	var req api.JudgeRequest
	if err := json.Unmarshal(body, &req); err != nil {
		if ie := (*api.InvalidError)(nil); errors.As(err, &ie) {
			return judge.Spec{}, errs.Invalid("%s", ie.Message)
		}
		return judge.Spec{}, errs.Invalid("the body must be a JSON object")
	}
	return toSpec(req), nil
}

// toSpec is the judge.Spec of a request: null in a nullable field clears it.
func toSpec(r api.JudgeRequest) judge.Spec {
	s := judge.Spec{
		Name: r.Name, Template: r.Template, EvaluationType: r.EvaluationType,
		ScoreMin: r.ScoreMin, ScoreMax: r.ScoreMax, PassThreshold: r.PassThreshold,
		SampleRate: r.SampleRate, Temperature: r.Temperature, Paused: r.Paused, Backfill: r.Backfill,
		Model: r.Model.Value, TargetPrompt: r.TargetPrompt.Value,
		ClearModel:        r.Model.Set && r.Model.Value == nil,
		ClearTargetPrompt: r.TargetPrompt.Set && r.TargetPrompt.Value == nil,
		ClearTagFilter:    r.TagFilter.Set && r.TagFilter.Value == nil,
		ClearCriteria:     r.Criteria.Set && r.Criteria.Value == nil,
	}
	if f := r.TagFilter.Value; f != nil {
		s.TagFilter = &judge.TagFilter{Tags: f.Tags, Match: f.Match}
	}
	if cs := r.Criteria.Value; cs != nil {
		out := make([]judge.Criterion, len(*cs))
		for i, c := range *cs {
			out[i] = judge.Criterion(c)
		}
		s.Criteria = &out
	}
	return s
}

// toJudge is the API form of j.
func toJudge(j judge.Judge) api.Judge {
	out := api.Judge{
		ID: j.ID, ProjectID: j.ProjectID, Name: j.Name, Template: j.Template, EvaluationType: j.EvaluationType,
		ScoreMin: j.ScoreMin, ScoreMax: j.ScoreMax, PassThreshold: j.PassThreshold, SampleRate: j.SampleRate,
		Temperature: j.Temperature, Model: nonEmpty(j.Model), TargetPrompt: nonEmpty(j.TargetPrompt),
		Criteria: toCriteria(j.Criteria), CriteriaSource: api.CriteriaExplicit, Paused: j.Paused, Status: api.JudgeActive,
		Backfill: j.Backfill, TemplateVersion: max(j.TemplateVersion, 1), LinkedPrompts: j.LinkedPrompts, EvaluationCount: j.EvaluationCount, PassRate: j.PassRate(),
		CreatedAt: j.CreatedAt, CreatedBy: j.CreatedBy, UpdatedAt: j.UpdatedAt, UpdatedBy: j.UpdatedBy,
	}
	if f := j.TagFilter; f != nil {
		out.TagFilter = &api.TagFilter{Tags: f.Tags, Match: f.Match}
	}
	if j.CriteriaInferred {
		out.CriteriaSource = api.CriteriaInferred
	}
	if j.Paused {
		out.Status = api.JudgePaused
	}
	if out.LinkedPrompts == nil {
		out.LinkedPrompts = []string{}
	}
	return out
}

// toJudgeCriteria is the criteria answer of j (spec §2.10).
func toJudgeCriteria(j judge.Judge) api.JudgeCriteria {
	return api.JudgeCriteria{
		JudgeID: j.ID, EvaluationType: j.EvaluationType, ScoreMin: j.ScoreMin, ScoreMax: j.ScoreMax,
		PassThreshold: j.PassThreshold, Criteria: toCriteria(j.Criteria),
	}
}

// toCriteria converts criteria, never nil.
func toCriteria(cs []judge.Criterion) []api.Criterion {
	out := make([]api.Criterion, len(cs))
	for i, c := range cs {
		out[i] = api.Criterion(c)
	}
	return out
}

// toEvaluations converts evaluations, never nil. functions/feedback has the same conversion
// for unified feedback; both are pinned to the same golden bytes.
func toEvaluations(evs []judge.Evaluation) []api.Evaluation {
	out := make([]api.Evaluation, len(evs))
	for i, e := range evs {
		out[i] = EvaluationOf(e)
	}
	return out
}

// EvaluationOf is the API form of e; its criteria scores are always an object. It is the one
// conversion of an evaluation: the feedback area's unified feedback uses it too.
func EvaluationOf(e judge.Evaluation) api.Evaluation {
	cs := make(map[string]api.CriterionScore, len(e.CriteriaScores))
	for k, c := range e.CriteriaScores {
		cs[k] = api.CriterionScore(c)
	}
	return api.Evaluation{
		ID: e.ID, SpanID: e.SpanID, JudgeID: e.JudgeID, JudgeName: e.JudgeName, EvaluationType: e.EvaluationType,
		EvaluationResult: e.Result, EvaluationReason: e.Reason, ConfidenceScore: e.Confidence, Score: e.Score,
		ScoreMin: e.ScoreMin, ScoreMax: e.ScoreMax, PassThreshold: e.PassThreshold, ModelUsed: e.Model,
		EvaluationDurationMS: e.DurationMS, Cost: e.Cost, CriteriaScores: cs, HasUserFeedback: e.HasFeedback,
		CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt,
	}
}

// toEvaluationInputs converts the body of POST .../evaluations, keeping absent criteria scores
// nil.
func toEvaluationInputs(in []api.EvaluationRequest) []judge.EvaluationInput {
	out := make([]judge.EvaluationInput, len(in))
	for i, r := range in {
		out[i] = judge.EvaluationInput{
			SpanID: r.SpanID, Result: r.EvaluationResult, Reason: r.EvaluationReason, Confidence: r.ConfidenceScore,
			Score: r.Score, Model: r.ModelUsed, DurationMS: r.EvaluationDurationMS, Cost: r.Cost, CreatedAt: r.CreatedAt,
		}
		if r.CriteriaScores != nil {
			out[i].CriteriaScores = make(map[string]judge.CriterionScore, len(r.CriteriaScores))
			for k, c := range r.CriteriaScores {
				out[i].CriteriaScores[k] = judge.CriterionScore(c)
			}
		}
	}
	return out
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
