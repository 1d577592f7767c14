package judge

import "time"

// JudgeJSON is a judge as the API shows it.
type JudgeJSON struct {
	ID             string      `json:"id"`
	ProjectID      string      `json:"project_id"`
	Name           string      `json:"name"`
	Template       string      `json:"template"`
	EvaluationType string      `json:"evaluation_type"`
	ScoreMin       *float64    `json:"score_min"`
	ScoreMax       *float64    `json:"score_max"`
	PassThreshold  *float64    `json:"pass_threshold"`
	SampleRate     float64     `json:"sample_rate"`
	Temperature    float64     `json:"temperature"`
	Model          *string     `json:"model"`
	TagFilter      *TagFilter  `json:"tag_filter"`
	TargetPrompt   *string     `json:"target_prompt"`
	Criteria       []Criterion `json:"criteria"`
	// CriteriaSource is "explicit" or "inferred" (from the template).
	CriteriaSource  string    `json:"criteria_source"`
	Paused          bool      `json:"paused"`
	Status          string    `json:"status"` // "active" or "paused"
	Backfill        int       `json:"backfill"`
	LinkedPrompts   []string  `json:"linked_prompts"`
	EvaluationCount int64     `json:"evaluation_count"`
	PassRate        *float64  `json:"pass_rate"`
	CreatedAt       time.Time `json:"created_at"`
	CreatedBy       string    `json:"created_by"`
	UpdatedAt       time.Time `json:"updated_at"`
	UpdatedBy       string    `json:"updated_by"`
}

// JSON returns the API form of j.
func (j Judge) JSON() JudgeJSON {
	out := JudgeJSON{
		ID: j.ID, ProjectID: j.ProjectID, Name: j.Name, Template: j.Template, EvaluationType: j.EvaluationType,
		ScoreMin: j.ScoreMin, ScoreMax: j.ScoreMax, PassThreshold: j.PassThreshold, SampleRate: j.SampleRate,
		Temperature: j.Temperature, Model: nonEmpty(j.Model), TagFilter: j.TagFilter, TargetPrompt: nonEmpty(j.TargetPrompt),
		Criteria: j.Criteria, CriteriaSource: "explicit", Paused: j.Paused, Status: "active", Backfill: j.Backfill,
		LinkedPrompts: j.LinkedPrompts, EvaluationCount: j.EvaluationCount, PassRate: j.PassRate(),
		CreatedAt: j.CreatedAt, CreatedBy: j.CreatedBy, UpdatedAt: j.UpdatedAt, UpdatedBy: j.UpdatedBy,
	}
	if j.CriteriaInferred {
		out.CriteriaSource = "inferred"
	}
	if j.Paused {
		out.Status = "paused"
	}
	if out.Criteria == nil {
		out.Criteria = []Criterion{}
	}
	if out.LinkedPrompts == nil {
		out.LinkedPrompts = []string{}
	}
	return out
}

// CriteriaJSON is the criteria response (spec §2.10).
type CriteriaJSON struct {
	JudgeID        string      `json:"judge_id"`
	EvaluationType string      `json:"evaluation_type"`
	ScoreMin       *float64    `json:"score_min"`
	ScoreMax       *float64    `json:"score_max"`
	PassThreshold  *float64    `json:"pass_threshold"`
	Criteria       []Criterion `json:"criteria"`
}

// CriteriaJSON returns the criteria response of j.
func (j Judge) CriteriaJSON() CriteriaJSON {
	cs := j.Criteria
	if cs == nil {
		cs = []Criterion{}
	}
	return CriteriaJSON{JudgeID: j.ID, EvaluationType: j.EvaluationType, ScoreMin: j.ScoreMin, ScoreMax: j.ScoreMax, PassThreshold: j.PassThreshold, Criteria: cs}
}

// EvaluationJSON is an evaluation as the API shows it (spec §2.9 with the span-listing fields
// judge_name and evaluation_type). Unified feedback embeds it with kind and automation_id.
type EvaluationJSON struct {
	ID                   string                    `json:"id"`
	SpanID               string                    `json:"span_id"`
	JudgeID              string                    `json:"judge_id"`
	JudgeName            string                    `json:"judge_name"`
	EvaluationType       string                    `json:"evaluation_type"`
	EvaluationResult     bool                      `json:"evaluation_result"`
	EvaluationReason     string                    `json:"evaluation_reason"`
	ConfidenceScore      *float64                  `json:"confidence_score"`
	Score                *float64                  `json:"score"`
	ScoreMin             *float64                  `json:"score_min"`
	ScoreMax             *float64                  `json:"score_max"`
	PassThreshold        *float64                  `json:"pass_threshold"`
	ModelUsed            string                    `json:"model_used"`
	EvaluationDurationMS *float64                  `json:"evaluation_duration_ms"`
	CriteriaScores       map[string]CriterionScore `json:"criteria_scores"`
	HasUserFeedback      bool                      `json:"has_user_feedback"`
	CreatedAt            time.Time                 `json:"created_at"`
	UpdatedAt            time.Time                 `json:"updated_at"`
}

// JSON returns the API form of e.
func (e Evaluation) JSON() EvaluationJSON {
	cs := e.CriteriaScores
	if cs == nil {
		cs = map[string]CriterionScore{}
	}
	return EvaluationJSON{
		ID: e.ID, SpanID: e.SpanID, JudgeID: e.JudgeID, JudgeName: e.JudgeName, EvaluationType: e.EvaluationType,
		EvaluationResult: e.Result, EvaluationReason: e.Reason, ConfidenceScore: e.Confidence, Score: e.Score,
		ScoreMin: e.ScoreMin, ScoreMax: e.ScoreMax, PassThreshold: e.PassThreshold, ModelUsed: e.Model,
		EvaluationDurationMS: e.DurationMS, CriteriaScores: cs, HasUserFeedback: e.HasFeedback,
		CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt,
	}
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
