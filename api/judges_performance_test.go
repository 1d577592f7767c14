package api_test

import (
	"testing"
	"time"

	"github.com/plumehq/plume/api"
)

// TestJudgePerformanceGolden pins the performance answer: snake_case, every rate present and
// null when there is no data for it (never 0), score null for a binary judge, criteria an array.
func TestJudgePerformanceGolden(t *testing.T) {
	start := time.Date(2026, 10, 22, 9, 30, 0, 123456000, time.UTC)
	end := start.Add(30 * 24 * time.Hour)
	tests := []struct {
		name string
		v    api.JudgePerformance
		want string
	}{
		{"binary, no calibrations", api.JudgePerformance{
			JudgeID: "j-1", EvaluationType: api.EvaluationBinary, StartDate: start, EndDate: end, Criteria: []api.CriterionAgreement{},
		}, `{"judge_id":"j-1","evaluation_type":"binary","start_date":"2026-10-22T09:30:00.123456Z","end_date":"2026-11-21T09:30:00.123456Z","n":0,` +
			`"verdict":{"n":0,"accuracy":null,"kappa":null,"true_positive_rate":null,"true_negative_rate":null,"counts":{"true_positive":0,"false_positive":0,"false_negative":0,"true_negative":0}},` +
			`"score":null,"criteria":[]}`},
		{"scored", api.JudgePerformance{
			JudgeID: "j-2", EvaluationType: api.EvaluationScored, StartDate: start, EndDate: end, N: 5,
			Verdict: api.VerdictAgreement{N: 4, Accuracy: refTo(0.75), Kappa: refTo(0.5), TruePositiveRate: refTo(1.0), TrueNegativeRate: refTo(2.0 / 3),
				Counts: api.VerdictCounts{TruePositive: 1, FalsePositive: 1, TrueNegative: 2}},
			Score: &api.ScoreAgreement{N: 5, MeanAbsoluteError: refTo(1.0), TooHighShare: refTo(0.2), TooLowShare: refTo(0.4),
				Counts: api.ScoreCounts{WithExpectedScore: 3, TooHigh: 1, TooLow: 2}},
			Criteria: []api.CriterionAgreement{{Key: "accuracy",
				Verdict: api.VerdictAgreement{N: 1, Accuracy: refTo(1.0), TruePositiveRate: refTo(1.0), Counts: api.VerdictCounts{TruePositive: 1}},
				Score:   api.ScoreAgreement{N: 1, MeanAbsoluteError: refTo(1.0), TooHighShare: refTo(0.0), TooLowShare: refTo(1.0), Counts: api.ScoreCounts{WithExpectedScore: 1, TooLow: 1}}}},
		}, `{"judge_id":"j-2","evaluation_type":"scored","start_date":"2026-10-22T09:30:00.123456Z","end_date":"2026-11-21T09:30:00.123456Z","n":5,` +
			`"verdict":{"n":4,"accuracy":0.75,"kappa":0.5,"true_positive_rate":1,"true_negative_rate":0.6666666666666666,"counts":{"true_positive":1,"false_positive":1,"false_negative":0,"true_negative":2}},` +
			`"score":{"n":5,"mean_absolute_error":1,"too_high_share":0.2,"too_low_share":0.4,"counts":{"with_expected_score":3,"too_high":1,"too_low":2}},` +
			`"criteria":[{"key":"accuracy","verdict":{"n":1,"accuracy":1,"kappa":null,"true_positive_rate":1,"true_negative_rate":null,"counts":{"true_positive":1,"false_positive":0,"false_negative":0,"true_negative":0}},` +
			`"score":{"n":1,"mean_absolute_error":1,"too_high_share":0,"too_low_share":1,"counts":{"with_expected_score":1,"too_high":0,"too_low":1}}}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := serverJSON(t, tt.v); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
