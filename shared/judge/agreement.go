package judge

import (
	"math"
	"time"
)

// Pair is one calibrated evaluation: the judge's verdict on a span and a person's calibration
// feedback on that verdict. ThumbsUp is the feedback's thumbs_up, which on calibration feedback
// means the person agreed with the judge's verdict (as run.Correction reads it); it is not on
// Calibration because it belongs to every feedback, not only to calibrations. Agreement reads
// the verdicts, ThumbsUp and Calibration; Reason and CalibratedAt are for readers that show
// the calibration (the evaluator's few-shot corrections).
type Pair struct {
	Evaluation  Evaluation
	ThumbsUp    bool
	Calibration Calibration
	// Reason is the person's reason; "" when none was given.
	Reason string
	// CalibratedAt is when the person last submitted the feedback: a submission again replaces
	// it, and makes it the newest calibration.
	CalibratedAt time.Time
}

// CalibrationQuery selects a judge's calibrations by the time they were last submitted: within
// [Start, End] (zero: open), and the Limit newest of those (0: all).
type CalibrationQuery struct {
	Start, End time.Time
	Limit      int
}

// ScoreTolerance is the relative tolerance within which a judge's score equals the expected
// score: |score − expected| ≤ ScoreTolerance × max(|score|, |expected|) is neither too high
// nor too low. Both are chosen numbers (shared/bound), so it only absorbs float64 noise (0.1+0.2
// against 0.3, some 1e-16 relative) and never a real step: at ±1e9, the largest score, it is
// 1e-3.
const ScoreTolerance = 1e-12

// BinaryCriterionThreshold is the pass threshold of a binary judge's criterion scores (0 to 1):
// a criterion passes at 0.5 or more.
const BinaryCriterionThreshold = 0.5

// Performance is a judge's agreement with people over calibrated evaluations
// (GET /projects/{pid}/judges/{jid}/performance): pass/fail agreement for every judge, score
// agreement for scored judges, and both per criterion. An optional number is nil when there is
// no data for it, so that "no data" is not read as 0.
type Performance struct {
	// N is the number of pairs given.
	N int
	// Verdict compares the judge's pass/fail with the person's.
	Verdict VerdictAgreement
	// Score compares the judge's scores with the expected ones; nil for a binary judge.
	Score *ScoreAgreement
	// Criteria holds one entry per criterion of the judge that has at least one comparable
	// pair, in the judge's order. Feedback on keys that are no longer criteria is left out.
	Criteria []CriterionAgreement
}

// VerdictAgreement is a confusion matrix of the judge's verdict against the person's, pass
// being the positive class, and the rates read from it:
//
//	accuracy = po = (TP + TN) / N
//	pe       = ((TP+FP)/N)·((TP+FN)/N) + ((FN+TN)/N)·((FP+TN)/N)
//	kappa    = (po − pe) / (1 − pe)   (Cohen's kappa)
//	TPR      = TP / (TP + FN)         (judge pass among human pass)
//	TNR      = TN / (TN + FP)         (judge fail among human fail)
type VerdictAgreement struct {
	// N is the number of pairs whose human verdict is known (TP + FP + FN + TN).
	N int
	// TP: both pass; FP: the judge passes, the person fails; FN: the judge fails, the person
	// passes; TN: both fail.
	TP, FP, FN, TN int
	// Accuracy is nil when N is 0.
	Accuracy *float64
	// Kappa is nil when N is 0 or when pe = 1: judge and person put every pair in the same one
	// class, so agreement by chance is certain and kappa is 0/0.
	Kappa *float64
	// TPR is nil without a human pass, TNR without a human fail.
	TPR *float64
	TNR *float64
}

// ScoreAgreement compares the judge's scores with the person's:
//
//	MAE     = Σ |score − expected| / WithExpected   over pairs with an expected score
//	TooHigh = High / N,  TooLow = Low / N
//
// A pair with an expected score is too high when the score exceeds it, too low when below it,
// and neither within ScoreTolerance. A pair without one counts by the person's direction
// (too_high, too_low), and as neither when the person gave no direction either: the shares are
// of all compared pairs, so that people who only speak up when a score is wrong do not make
// every score look wrong.
type ScoreAgreement struct {
	// N is the number of pairs with a judge score.
	N int
	// WithExpected is the number of those with an expected score.
	WithExpected int
	// High and Low count the pairs whose score was too high and too low.
	High, Low int
	// MAE is nil when WithExpected is 0.
	MAE *float64
	// TooHigh and TooLow are nil when N is 0.
	TooHigh *float64
	TooLow  *float64
}

// CriterionAgreement is the agreement on one criterion, over the pairs where the judge scored
// the criterion and the person gave an expected score for it (criterion feedback without one
// says nothing to compare). The criterion passes when its score reaches the evaluation's pass
// threshold (scored judges) or BinaryCriterionThreshold (binary judges), for the judge and the
// person alike.
type CriterionAgreement struct {
	Key     string
	Verdict VerdictAgreement
	Score   ScoreAgreement
}

// Agreement measures how far judge j agrees with people over pairs, which are calibrated
// evaluations of j (the caller selects them, e.g. over a date window).
//
// The judge's verdict is the evaluation's result. The person's verdict is, for a scored
// evaluation with an expected score, expected_score ≥ the pass threshold (the evaluation's
// snapshot, else j's), so accuracy and kappa exist for scored judges too. Otherwise thumbs up
// (agreement) gives the judge's verdict, and thumbs down on a binary evaluation its opposite.
// Thumbs down on a scored evaluation without an expected score says the score was wrong, not
// on which side of the threshold it belongs; only a direction away from the threshold decides
// it (too_high on a failing score: fail; too_low on a passing score: pass), else the pair is
// left out of Verdict.
func Agreement(j Judge, pairs []Pair) Performance {
	var (
		verdict  confusion
		score    scoreSums
		criteria = make(map[string]*criterionSums, len(j.Criteria))
	)
	for _, p := range pairs {
		threshold := passThreshold(j, p.Evaluation)
		if human, ok := humanPass(p, threshold); ok {
			verdict.add(p.Evaluation.Result, human)
		}
		if s := p.Evaluation.Score; s != nil {
			score.add(*s, p.Calibration.ExpectedScore, p.Calibration.ScoreDirection)
		}
		criterionThreshold, ok := BinaryCriterionThreshold, true
		if p.Evaluation.Score != nil {
			criterionThreshold, ok = deref(threshold)
		}
		for key, fb := range p.Calibration.CriteriaFeedback {
			cs, scored := p.Evaluation.CriteriaScores[key]
			if !scored || cs.Score == nil || fb.ExpectedScore == nil || !j.HasCriterion(key) {
				continue
			}
			c := criteria[key]
			if c == nil {
				c = &criterionSums{}
				criteria[key] = c
			}
			if ok {
				c.verdict.add(*cs.Score >= criterionThreshold, *fb.ExpectedScore >= criterionThreshold)
			}
			c.score.add(*cs.Score, fb.ExpectedScore, "")
		}
	}
	perf := Performance{N: len(pairs), Verdict: verdict.agreement()}
	if j.Scored() {
		s := score.agreement()
		perf.Score = &s
	}
	for _, c := range j.Criteria {
		if sums := criteria[c.Key]; sums != nil {
			perf.Criteria = append(perf.Criteria, CriterionAgreement{Key: c.Key, Verdict: sums.verdict.agreement(), Score: sums.score.agreement()})
		}
	}
	return perf
}

// passThreshold is the threshold a scored evaluation was judged by: its snapshot, else j's
// current one; nil for a binary evaluation.
func passThreshold(j Judge, ev Evaluation) *float64 {
	switch {
	case ev.Score == nil:
		return nil
	case ev.PassThreshold != nil:
		return ev.PassThreshold
	}
	return j.PassThreshold
}

// humanPass is the person's pass/fail verdict on p's span, and whether the feedback tells it
// (see Agreement).
func humanPass(p Pair, threshold *float64) (pass, known bool) {
	ev, c := p.Evaluation, p.Calibration
	switch {
	case threshold != nil && c.ExpectedScore != nil:
		return *c.ExpectedScore >= *threshold, true
	case p.ThumbsUp:
		return ev.Result, true
	case ev.Score == nil:
		return !ev.Result, true
	case threshold == nil:
		return false, false
	case c.ScoreDirection == TooHigh && *ev.Score < *threshold:
		return false, true
	case c.ScoreDirection == TooLow && *ev.Score >= *threshold:
		return true, true
	}
	return false, false
}

type confusion struct{ tp, fp, fn, tn int }

func (c *confusion) add(judgePass, humanPass bool) {
	switch {
	case judgePass && humanPass:
		c.tp++
	case judgePass:
		c.fp++
	case humanPass:
		c.fn++
	default:
		c.tn++
	}
}

func (c confusion) agreement() VerdictAgreement {
	n := c.tp + c.fp + c.fn + c.tn
	a := VerdictAgreement{N: n, TP: c.tp, FP: c.fp, FN: c.fn, TN: c.tn}
	if n == 0 {
		return a
	}
	a.Accuracy = ratio(c.tp+c.tn, n)
	a.TPR = ratio(c.tp, c.tp+c.fn)
	a.TNR = ratio(c.tn, c.tn+c.fp)
	// pe·n² in integers: pe = 1 exactly when this equals n², which a float could miss.
	chance := (c.tp+c.fp)*(c.tp+c.fn) + (c.fn+c.tn)*(c.fp+c.tn)
	if chance != n*n {
		po := float64(c.tp+c.tn) / float64(n)
		pe := float64(chance) / (float64(n) * float64(n))
		a.Kappa = ptr((po - pe) / (1 - pe))
	}
	return a
}

type scoreSums struct {
	n, withExpected, high, low int
	absError                   float64
}

// add counts one judge score against the expected score, or the direction when there is none.
func (s *scoreSums) add(score float64, expected *float64, direction string) {
	s.n++
	if expected != nil {
		s.withExpected++
		diff := score - *expected
		s.absError += math.Abs(diff)
		tol := ScoreTolerance * max(math.Abs(score), math.Abs(*expected))
		switch {
		case diff > tol:
			s.high++
		case diff < -tol:
			s.low++
		}
		return
	}
	switch direction {
	case TooHigh:
		s.high++
	case TooLow:
		s.low++
	}
}

func (s scoreSums) agreement() ScoreAgreement {
	a := ScoreAgreement{N: s.n, WithExpected: s.withExpected, High: s.high, Low: s.low}
	if s.withExpected > 0 {
		a.MAE = ptr(s.absError / float64(s.withExpected))
	}
	if s.n > 0 {
		a.TooHigh, a.TooLow = ratio(s.high, s.n), ratio(s.low, s.n)
	}
	return a
}

type criterionSums struct {
	verdict confusion
	score   scoreSums
}

// ratio is num/den, nil when den is 0.
func ratio(num, den int) *float64 {
	if den == 0 {
		return nil
	}
	return ptr(float64(num) / float64(den))
}

func deref(p *float64) (float64, bool) {
	if p == nil {
		return 0, false
	}
	return *p, true
}
