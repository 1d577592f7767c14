package judges

import (
	"net/http"
	"time"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/judge"
	"github.com/plumehq/plume/shared/web"
)

// defaultPerformanceWindow is how far back a performance read looks without a start_date:
// long enough to gather calibrations at a reviewer's pace, short enough to describe the judge
// as its template and model are now rather than as they were.
const defaultPerformanceWindow = 30 * 24 * time.Hour

// performance serves GET /projects/{project_id}/judges/{judge_id}/performance?start_date=&end_date=:
// the judge's agreement with the calibration feedback submitted within the window (see
// judge.Agreement). The window ends at end_date, else now, and starts at start_date, else
// defaultPerformanceWindow before its end; dates are read as the evaluation listing reads them.
func (s *server) performance(w http.ResponseWriter, r *http.Request) {
	start, end, err := parseDates(r.URL.Query())
	if err != nil {
		web.Error(w, r, err)
		return
	}
	if end.IsZero() {
		end = judge.Stamp(time.Now())
		if start.After(end) {
			web.Error(w, r, errs.Invalid("start_date is in the future: the window ends now unless end_date is given"))
			return
		}
	}
	if start.IsZero() {
		start = end.Add(-defaultPerformanceWindow)
	}
	j, perf, err := s.svc.Performance(r.Context(), auth.ProjectID(r), r.PathValue("judge_id"), start, end)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	web.OK(w, toPerformance(j, start.UTC(), end.UTC(), perf))
}

// toPerformance is the API form of j's performance p over [start, end]; Criteria is never nil.
func toPerformance(j judge.Judge, start, end time.Time, p judge.Performance) api.JudgePerformance {
	out := api.JudgePerformance{
		JudgeID: j.ID, EvaluationType: j.EvaluationType, StartDate: start, EndDate: end, N: p.N,
		Verdict: toVerdictAgreement(p.Verdict), Criteria: make([]api.CriterionAgreement, len(p.Criteria)),
	}
	if p.Score != nil {
		s := toScoreAgreement(*p.Score)
		out.Score = &s
	}
	for i, c := range p.Criteria {
		out.Criteria[i] = api.CriterionAgreement{Key: c.Key, Verdict: toVerdictAgreement(c.Verdict), Score: toScoreAgreement(c.Score)}
	}
	return out
}

func toVerdictAgreement(v judge.VerdictAgreement) api.VerdictAgreement {
	return api.VerdictAgreement{
		N: v.N, Accuracy: v.Accuracy, Kappa: v.Kappa, TruePositiveRate: v.TPR, TrueNegativeRate: v.TNR,
		Counts: api.VerdictCounts{TruePositive: v.TP, FalsePositive: v.FP, FalseNegative: v.FN, TrueNegative: v.TN},
	}
}

func toScoreAgreement(s judge.ScoreAgreement) api.ScoreAgreement {
	return api.ScoreAgreement{
		N: s.N, MeanAbsoluteError: s.MAE, TooHighShare: s.TooHigh, TooLowShare: s.TooLow,
		Counts: api.ScoreCounts{WithExpectedScore: s.WithExpected, TooHigh: s.High, TooLow: s.Low},
	}
}
