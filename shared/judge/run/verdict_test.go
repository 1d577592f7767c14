package run_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/judge"
	"github.com/plumehq/plume/shared/judge/run"
	"github.com/plumehq/plume/shared/llm"
)

func TestVerdict(t *testing.T) {
	binary, scored := binaryJudge("t"), scoredJudge("t")
	tests := []struct {
		name    string
		j       judge.Judge
		answer  string
		want    judge.EvaluationInput
		wantErr string
	}{
		{
			name: "binary pass", j: binary, answer: `{"reason":"ok","confidence":0.9,"meets_criteria":true}`,
			want: judge.EvaluationInput{Result: ptr(true), Reason: "ok", Confidence: ptr(0.9)},
		},
		{
			name: "binary fail", j: binary, answer: `{"reason":"rude","confidence":0,"meets_criteria":false}`,
			want: judge.EvaluationInput{Result: ptr(false), Reason: "rude", Confidence: ptr(0.0)},
		},
		{
			name: "scored", j: scored, answer: `{"reason":"good","confidence":1,"score":4.5}`,
			want: judge.EvaluationInput{Score: ptr(4.5), Reason: "good", Confidence: ptr(1.0)},
		},
		{
			name: "scored with criteria", j: withCriteria(scored),
			answer: `{"reason":"r","confidence":0.5,"score":1,"criteria_scores":{"accuracy":{"score":5,"reason":"right"},"tone":{"score":1,"reason":"curt"}}}`,
			want: judge.EvaluationInput{Score: ptr(1.0), Reason: "r", Confidence: ptr(0.5), CriteriaScores: map[string]judge.CriterionScore{
				"accuracy": {Score: ptr(5.0), Reason: "right"}, "tone": {Score: ptr(1.0), Reason: "curt"}}},
		},
		{
			name: "binary with criteria", j: withCriteria(binary),
			answer: `{"reason":"r","confidence":0.5,"meets_criteria":true,"criteria_scores":{"accuracy":{"score":1,"reason":""}}}`,
			want: judge.EvaluationInput{Result: ptr(true), Reason: "r", Confidence: ptr(0.5), CriteriaScores: map[string]judge.CriterionScore{
				"accuracy": {Score: ptr(1.0)}}},
		},
		{name: "score above the range", j: scored, answer: `{"reason":"r","confidence":1,"score":5.5}`, wantErr: "score 5.5 is not between 1 and 5"},
		{name: "score below the range", j: scored, answer: `{"reason":"r","confidence":1,"score":0}`, wantErr: "score 0 is not between 1 and 5"},
		{name: "confidence above 1", j: binary, answer: `{"reason":"r","confidence":1.2,"meets_criteria":true}`, wantErr: "confidence 1.2 is not between 0 and 1"},
		{name: "confidence below 0", j: binary, answer: `{"reason":"r","confidence":-0.1,"meets_criteria":true}`, wantErr: "confidence -0.1 is not between 0 and 1"},
		{name: "no confidence", j: binary, answer: `{"reason":"r","meets_criteria":true}`, wantErr: "confidence is missing"},
		{name: "no reason", j: binary, answer: `{"confidence":1,"meets_criteria":true}`, wantErr: "reason is missing"},
		{name: "binary without meets_criteria", j: binary, answer: `{"reason":"r","confidence":1}`, wantErr: "meets_criteria is missing"},
		{name: "binary with a score", j: binary, answer: `{"reason":"r","confidence":1,"meets_criteria":true,"score":3}`, wantErr: "score is not an answer of a binary judge"},
		{name: "scored without score", j: scored, answer: `{"reason":"r","confidence":1}`, wantErr: "score is missing"},
		{name: "scored with meets_criteria", j: scored, answer: `{"reason":"r","confidence":1,"score":3,"meets_criteria":true}`, wantErr: "meets_criteria is not an answer of a scored judge"},
		{name: "unknown criterion", j: withCriteria(scored), answer: `{"reason":"r","confidence":1,"score":3,"criteria_scores":{"speed":{"score":3,"reason":""}}}`,
			wantErr: `"speed" is not a criterion`},
		{name: "criterion out of the judge's range", j: withCriteria(scored), answer: `{"reason":"r","confidence":1,"score":3,"criteria_scores":{"tone":{"score":9,"reason":""}}}`,
			wantErr: `criteria_scores["tone"].score 9 is not between 1 and 5`},
		{name: "binary criterion above 1", j: withCriteria(binary), answer: `{"reason":"r","confidence":1,"meets_criteria":true,"criteria_scores":{"tone":{"score":2,"reason":""}}}`,
			wantErr: `criteria_scores["tone"].score 2 is not between 0 and 1`},
		{name: "criterion without score", j: withCriteria(scored), answer: `{"reason":"r","confidence":1,"score":3,"criteria_scores":{"tone":{"reason":""}}}`,
			wantErr: `criteria_scores["tone"].score is missing`},
		{name: "not JSON", j: binary, answer: `pass`, wantErr: "not a JSON object"},
		{name: "an array", j: binary, answer: `[1]`, wantErr: "not a JSON object"},
		{name: "null", j: binary, answer: `null`, wantErr: "reason is missing"},
	}
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := llm.Response{JSON: json.RawMessage(tt.answer), Model: "gpt-4o-mini-2024-07-18", Duration: 1500 * time.Millisecond}
			got, err := run.Verdict(tt.j, "span-1", resp)
			if tt.wantErr != "" {
				require.ErrorIs(t, err, run.ErrInvalidVerdict)
				assert.ErrorContains(t, err, tt.wantErr)
				assert.ErrorContains(t, err, "span-1")
				return
			}
			require.NoError(t, err)
			want := tt.want
			want.SpanID, want.Model, want.DurationMS = "span-1", "gpt-4o-mini-2024-07-18", ptr(1500.0)
			assert.Equal(t, want, got)
			_, err = judge.BuildEvaluations(tt.j, []judge.EvaluationInput{got}, now)
			assert.NoError(t, err, "BuildEvaluations accepts the verdict")
		})
	}
}

func TestVerdictCutsReasons(t *testing.T) {
	long := make([]byte, judge.MaxReasonBytes+10)
	for i := range long {
		long[i] = 'x'
	}
	answer, err := json.Marshal(map[string]any{"reason": string(long), "confidence": 1, "score": 3,
		"criteria_scores": map[string]any{"tone": map[string]any{"score": 2, "reason": string(long)}}})
	require.NoError(t, err)
	j := withCriteria(scoredJudge("t"))
	got, err := run.Verdict(j, "span-1", llm.Response{JSON: answer})
	require.NoError(t, err)
	assert.Len(t, got.Reason, judge.MaxReasonBytes)
	assert.Len(t, got.CriteriaScores["tone"].Reason, judge.MaxCriterionReasonBytes)
	assert.Nil(t, got.DurationMS)
	_, err = judge.BuildEvaluations(j, []judge.EvaluationInput{got}, time.Now())
	assert.NoError(t, err)
}
