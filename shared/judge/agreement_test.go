package judge_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/judge"
)

func num(v float64) *float64 { return &v }

// binaryJudge and scoredJudge are the judges of the fixtures; scoredJudge scores 0 to 10 and
// passes at 7.
var (
	binaryJudge = judge.Judge{ID: "jb", EvaluationType: judge.TypeBinary,
		Criteria: []judge.Criterion{{Key: "accuracy"}}}
	scoredJudge = judge.Judge{ID: "js", EvaluationType: judge.TypeScored,
		ScoreMin: num(0), ScoreMax: num(10), PassThreshold: num(7),
		Criteria: []judge.Criterion{{Key: "accuracy"}, {Key: "tone"}, {Key: "clarity"}}}
)

// verdicts returns binary pairs: tp where judge and person pass, fp where only the judge
// passes, fn where only the person passes, tn where both fail. Thumbs up is agreement.
func verdicts(tp, fp, fn, tn int) []judge.Pair {
	var out []judge.Pair
	add := func(n int, judgePass, humanPass bool) {
		for range n {
			out = append(out, judge.Pair{Evaluation: judge.Evaluation{Result: judgePass}, ThumbsUp: judgePass == humanPass})
		}
	}
	add(tp, true, true)
	add(fp, true, false)
	add(fn, false, true)
	add(tn, false, false)
	return out
}

// scored is a scored evaluation of score s, passing by scoredJudge's threshold.
func scored(s float64) judge.Evaluation {
	return judge.Evaluation{Result: s >= 7, Score: num(s), PassThreshold: num(7)}
}

// assertRate checks an optional rate: nil for no data, else within 1e-12 of want.
func assertRate(t *testing.T, name string, want, got *float64) {
	t.Helper()
	if want == nil {
		assert.Nil(t, got, "%s: want nil (no data), got %v", name, got)
		return
	}
	require.NotNil(t, got, "%s: want %v, got nil", name, *want)
	assert.InDelta(t, *want, *got, 1e-12, name)
}

type wantVerdict struct {
	tp, fp, fn, tn            int
	accuracy, kappa, tpr, tnr *float64
}

func assertVerdict(t *testing.T, want wantVerdict, got judge.VerdictAgreement) {
	t.Helper()
	assert.Equal(t, []int{want.tp, want.fp, want.fn, want.tn}, []int{got.TP, got.FP, got.FN, got.TN}, "TP, FP, FN, TN")
	assert.Equal(t, want.tp+want.fp+want.fn+want.tn, got.N, "N")
	assertRate(t, "accuracy", want.accuracy, got.Accuracy)
	assertRate(t, "kappa", want.kappa, got.Kappa)
	assertRate(t, "TPR", want.tpr, got.TPR)
	assertRate(t, "TNR", want.tnr, got.TNR)
}

type wantScore struct {
	n, withExpected, high, low int
	mae, tooHigh, tooLow       *float64
}

func assertScore(t *testing.T, want wantScore, got judge.ScoreAgreement) {
	t.Helper()
	assert.Equal(t, []int{want.n, want.withExpected, want.high, want.low}, []int{got.N, got.WithExpected, got.High, got.Low}, "N, WithExpected, High, Low")
	assertRate(t, "MAE", want.mae, got.MAE)
	assertRate(t, "too high", want.tooHigh, got.TooHigh)
	assertRate(t, "too low", want.tooLow, got.TooLow)
}

func TestAgreementBinary(t *testing.T) {
	tests := []struct {
		name  string
		pairs []judge.Pair
		want  wantVerdict
	}{
		// N = 10; po = (4+3)/10 = 0.7; judge pass 5/10, person pass 6/10;
		// pe = (5/10)(6/10) + (5/10)(4/10) = 0.3 + 0.2 = 0.5; kappa = (0.7-0.5)/(1-0.5) = 0.4;
		// TPR = 4/(4+2) = 2/3; TNR = 3/(3+1) = 3/4.
		{"hand computed", verdicts(4, 1, 2, 3), wantVerdict{4, 1, 2, 3, num(0.7), num(0.4), num(4.0 / 6), num(0.75)}},
		// po = 1; pe = (3/5)(3/5) + (2/5)(2/5) = 13/25; kappa = (1-13/25)/(1-13/25) = 1.
		{"perfect agreement", verdicts(3, 0, 0, 2), wantVerdict{3, 0, 0, 2, num(1), num(1), num(1), num(1)}},
		// Everyone passes everything: po = pe = 1, kappa = 0/0 is undefined; no human fail, so
		// no TNR.
		{"all one class", verdicts(5, 0, 0, 0), wantVerdict{5, 0, 0, 0, num(1), nil, num(1), nil}},
		{"all one class, failing", verdicts(0, 0, 0, 4), wantVerdict{0, 0, 0, 4, num(1), nil, nil, num(1)}},
		// The judge always passes, people pass 6 of 10: po = 0.6, pe = (10/10)(6/10) + 0 = 0.6,
		// kappa = 0: no better than chance although accuracy is 0.6.
		{"judge always passes", verdicts(6, 4, 0, 0), wantVerdict{6, 4, 0, 0, num(0.6), num(0), num(1), num(0)}},
		// po = 0; pe = (2/4)(2/4) + (2/4)(2/4) = 0.5; kappa = (0-0.5)/0.5 = -1.
		{"always opposite", verdicts(0, 2, 2, 0), wantVerdict{0, 2, 2, 0, num(0), num(-1), num(0), num(0)}},
		{"empty", nil, wantVerdict{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := judge.Agreement(binaryJudge, tt.pairs)
			assert.Equal(t, len(tt.pairs), got.N)
			assertVerdict(t, tt.want, got.Verdict)
			assert.Nil(t, got.Score, "a binary judge has no score agreement")
			assert.Empty(t, got.Criteria)
		})
	}
}

// TestAgreementHumanVerdict checks how the person's pass/fail is read from each kind of
// feedback, one pair at a time; scoredJudge passes at 7.
func TestAgreementHumanVerdict(t *testing.T) {
	type cell int
	const (
		unknown cell = iota
		tp
		fp
		fn
		tn
	)
	tests := []struct {
		name string
		pair judge.Pair
		want cell
	}{
		{"binary, thumbs up on a pass", judge.Pair{Evaluation: judge.Evaluation{Result: true}, ThumbsUp: true}, tp},
		{"binary, thumbs down on a pass", judge.Pair{Evaluation: judge.Evaluation{Result: true}}, fp},
		{"binary, thumbs down on a fail", judge.Pair{Evaluation: judge.Evaluation{Result: false}}, fn},
		{"expected score above the threshold", judge.Pair{Evaluation: scored(5), Calibration: judge.Calibration{ExpectedScore: num(8)}}, fn},
		{"expected score at the threshold passes", judge.Pair{Evaluation: scored(5), Calibration: judge.Calibration{ExpectedScore: num(7)}}, fn},
		{"expected score below the threshold", judge.Pair{Evaluation: scored(8), Calibration: judge.Calibration{ExpectedScore: num(3)}}, fp},
		{"expected score wins over thumbs up", judge.Pair{Evaluation: scored(8), ThumbsUp: true, Calibration: judge.Calibration{ExpectedScore: num(3)}}, fp},
		{"the evaluation's threshold wins over the judge's", judge.Pair{
			Evaluation:  judge.Evaluation{Result: false, Score: num(4), PassThreshold: num(5)},
			Calibration: judge.Calibration{ExpectedScore: num(6)}}, fn},
		{"scored, thumbs up without expected score", judge.Pair{Evaluation: scored(9), ThumbsUp: true}, tp},
		{"scored, thumbs down alone", judge.Pair{Evaluation: scored(9)}, unknown},
		{"too high on a failing score fails", judge.Pair{Evaluation: scored(5), Calibration: judge.Calibration{ScoreDirection: judge.TooHigh}}, tn},
		{"too low on a passing score passes", judge.Pair{Evaluation: scored(8), Calibration: judge.Calibration{ScoreDirection: judge.TooLow}}, tp},
		{"too high on a passing score", judge.Pair{Evaluation: scored(8), Calibration: judge.Calibration{ScoreDirection: judge.TooHigh}}, unknown},
		{"too low on a failing score", judge.Pair{Evaluation: scored(5), Calibration: judge.Calibration{ScoreDirection: judge.TooLow}}, unknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := judge.Agreement(scoredJudge, []judge.Pair{tt.pair}).Verdict
			got := map[cell]int{tp: v.TP, fp: v.FP, fn: v.FN, tn: v.TN}
			for c, n := range got {
				if c == tt.want {
					assert.Equal(t, 1, n, "cell %d", c)
				} else {
					assert.Zero(t, n, "cell %d", c)
				}
			}
			if tt.want == unknown {
				assert.Zero(t, v.N)
				assert.Nil(t, v.Accuracy)
			}
		})
	}
}

func TestAgreementScores(t *testing.T) {
	tests := []struct {
		name  string
		pairs []judge.Pair
		want  wantScore
	}{
		// With an expected score: |8-6| = 2 (high), |5-7| = 2 (low), |9-9| = 0, |4-4.5| = 0.5
		// (low); MAE = (2+2+0+0.5)/4 = 1.125. Without: too_high (high), thumbs up alone
		// (neither). N = 6, High = 2, Low = 2: shares 2/6 and 2/6.
		{"mae and shares", []judge.Pair{
			{Evaluation: scored(8), Calibration: judge.Calibration{ExpectedScore: num(6)}},
			{Evaluation: scored(5), Calibration: judge.Calibration{ExpectedScore: num(7)}},
			{Evaluation: scored(9), ThumbsUp: true, Calibration: judge.Calibration{ExpectedScore: num(9)}},
			{Evaluation: scored(4), Calibration: judge.Calibration{ExpectedScore: num(4.5)}},
			{Evaluation: scored(6), Calibration: judge.Calibration{ScoreDirection: judge.TooHigh}},
			{Evaluation: scored(7), ThumbsUp: true},
		}, wantScore{6, 4, 2, 2, num(1.125), num(2.0 / 6), num(2.0 / 6)}},
		// Directions only: no MAE; 2 too low and 1 too high of 4.
		{"directions only", []judge.Pair{
			{Evaluation: scored(3), Calibration: judge.Calibration{ScoreDirection: judge.TooLow}},
			{Evaluation: scored(6), Calibration: judge.Calibration{ScoreDirection: judge.TooLow}},
			{Evaluation: scored(9), Calibration: judge.Calibration{ScoreDirection: judge.TooHigh}},
			{Evaluation: scored(8)},
		}, wantScore{4, 0, 1, 2, nil, num(0.25), num(0.5)}},
		// 8 against 6 is too high whatever the direction says.
		{"expected score wins over direction", []judge.Pair{
			{Evaluation: scored(8), Calibration: judge.Calibration{ExpectedScore: num(6), ScoreDirection: judge.TooLow}},
		}, wantScore{1, 1, 1, 0, num(2), num(1), num(0)}},
		// 0.1+0.2 is 0.30000000000000004 in float64: within ScoreTolerance of 0.3.
		{"equal within tolerance", []judge.Pair{
			{Evaluation: scored(0.3), Calibration: judge.Calibration{ExpectedScore: num(0.1 + 0.2)}},
			{Evaluation: scored(1e9), Calibration: judge.Calibration{ExpectedScore: num(1e9 - 0.5)}},
		}, wantScore{2, 2, 1, 0, num(0.25), num(0.5), num(0)}},
		// A binary evaluation (before the judge became scored) has no score to compare.
		{"binary evaluations are left out", []judge.Pair{
			{Evaluation: judge.Evaluation{Result: true}, Calibration: judge.Calibration{ScoreDirection: judge.TooHigh}},
		}, wantScore{}},
		{"empty", nil, wantScore{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := judge.Agreement(scoredJudge, tt.pairs)
			require.NotNil(t, got.Score, "a scored judge has score agreement, even without data")
			assertScore(t, tt.want, *got.Score)
		})
	}
}

func TestAgreementCriteria(t *testing.T) {
	crit := func(scores map[string]float64) map[string]judge.CriterionScore {
		out := map[string]judge.CriterionScore{}
		for k, v := range scores {
			out[k] = judge.CriterionScore{Score: num(v)}
		}
		return out
	}
	withCriteria := func(ev judge.Evaluation, scores map[string]float64) judge.Evaluation {
		ev.CriteriaScores = crit(scores)
		return ev
	}
	type wantCriterion struct {
		key     string
		verdict wantVerdict
		score   wantScore
	}
	tests := []struct {
		name  string
		j     judge.Judge
		pairs []judge.Pair
		want  []wantCriterion
	}{
		// accuracy (passes at 7): 8 vs 6 is FP and 2 too high; 9 vs 9 is TP; 3 vs 8 is FN and 5
		// too low. N = 3, po = 1/3, judge pass 2/3, person pass 2/3,
		// pe = (2/3)(2/3) + (1/3)(1/3) = 5/9, kappa = (3/9-5/9)/(4/9) = -0.5, TPR = 1/2,
		// TNR = 0/1; MAE = (2+0+5)/3 = 7/3, shares 1/3 and 1/3.
		// tone: only 5 vs 5 compares (the second has a reason only, the third no judge score):
		// TN, kappa undefined, MAE 0. "removed" is not a criterion any more; clarity has no
		// feedback. Both are left out.
		{"scored judge", scoredJudge, []judge.Pair{
			{Evaluation: withCriteria(scored(6), map[string]float64{"accuracy": 8, "tone": 5}), Calibration: judge.Calibration{
				CriteriaFeedback: map[string]judge.CriterionFeedback{"accuracy": {ExpectedScore: num(6)}, "tone": {ExpectedScore: num(5)}}}},
			{Evaluation: withCriteria(scored(9), map[string]float64{"accuracy": 9, "tone": 2}), Calibration: judge.Calibration{
				CriteriaFeedback: map[string]judge.CriterionFeedback{"accuracy": {ExpectedScore: num(9)}, "tone": {Reason: "rude"}}}},
			{Evaluation: withCriteria(scored(3), map[string]float64{"accuracy": 3, "removed": 1}), Calibration: judge.Calibration{
				CriteriaFeedback: map[string]judge.CriterionFeedback{"accuracy": {ExpectedScore: num(8)}, "tone": {ExpectedScore: num(9)}, "removed": {ExpectedScore: num(9)}}}},
			{Evaluation: withCriteria(scored(7), map[string]float64{"clarity": 7}), ThumbsUp: true},
		}, []wantCriterion{
			{"accuracy", wantVerdict{1, 1, 1, 0, num(1.0 / 3), num(-0.5), num(0.5), num(0)}, wantScore{3, 3, 1, 1, num(7.0 / 3), num(1.0 / 3), num(1.0 / 3)}},
			{"tone", wantVerdict{0, 0, 0, 1, num(1), nil, nil, num(1)}, wantScore{1, 1, 0, 0, num(0), num(0), num(0)}},
		}},
		// A binary judge's criterion scores run 0 to 1 and pass at 0.5: 1 vs 0 is FP, 0.5 vs
		// 0.75 is TP. MAE = (1+0.25)/2 = 0.625; one too high, one too low.
		{"binary judge", binaryJudge, []judge.Pair{
			{Evaluation: judge.Evaluation{Result: true, CriteriaScores: crit(map[string]float64{"accuracy": 1})}, Calibration: judge.Calibration{
				CriteriaFeedback: map[string]judge.CriterionFeedback{"accuracy": {ExpectedScore: num(0)}}}},
			{Evaluation: judge.Evaluation{Result: true, CriteriaScores: crit(map[string]float64{"accuracy": 0.5})}, ThumbsUp: true, Calibration: judge.Calibration{
				CriteriaFeedback: map[string]judge.CriterionFeedback{"accuracy": {ExpectedScore: num(0.75)}}}},
		}, []wantCriterion{
			// po = 1/2; judge pass 2/2, person pass 1/2; pe = (1)(1/2) + 0 = 1/2; kappa = 0.
			{"accuracy", wantVerdict{1, 1, 0, 0, num(0.5), num(0), num(1), num(0)}, wantScore{2, 2, 1, 1, num(0.625), num(0.5), num(0.5)}},
		}},
		{"no criterion feedback", scoredJudge, []judge.Pair{
			{Evaluation: withCriteria(scored(7), map[string]float64{"accuracy": 7}), ThumbsUp: true},
		}, nil},
		{"empty", scoredJudge, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := judge.Agreement(tt.j, tt.pairs).Criteria
			require.Len(t, got, len(tt.want))
			for i, w := range tt.want {
				t.Run(w.key, func(t *testing.T) {
					assert.Equal(t, w.key, got[i].Key)
					assertVerdict(t, w.verdict, got[i].Verdict)
					assertScore(t, w.score, got[i].Score)
				})
			}
		})
	}
}

func TestAgreementEmpty(t *testing.T) {
	for _, j := range []judge.Judge{binaryJudge, scoredJudge} {
		t.Run(j.EvaluationType, func(t *testing.T) {
			got := judge.Agreement(j, nil)
			assert.Zero(t, got.N)
			assert.Equal(t, judge.VerdictAgreement{}, got.Verdict, "no counts and no rates: nil, not 0")
			assert.Empty(t, got.Criteria)
			if j.Scored() {
				require.NotNil(t, got.Score)
				assert.Equal(t, judge.ScoreAgreement{}, *got.Score)
			} else {
				assert.Nil(t, got.Score)
			}
		})
	}
}
