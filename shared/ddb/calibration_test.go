package ddb_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/feedback"
	"github.com/plumehq/plume/shared/judge"
)

// calT0 is the time of the first calibration of the fixture; calibration i is i hours later.
var calT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func calAt(i int) time.Time { return calT0.Add(time.Duration(i) * time.Hour) }

type calFixture struct {
	judges    *ddb.JudgeStore
	feedback  *ddb.FeedbackStore
	client    *dynamodb.Client
	counter   *ddbtest.Counter
	name      string
	project   string
	judge     judge.Judge
	spans     []string
	ann, bob  auth.User
	reasonFor map[string]string // "<user>/<span>" -> reason given
}

func newCalFixture(t *testing.T) *calFixture {
	t.Helper()
	client, counter, name := ddbtest.NewTable(t)
	table := ddb.NewTable(client, name)
	f := &calFixture{
		judges: ddb.NewJudgeStore(table), feedback: ddb.NewFeedbackStore(table), client: client, counter: counter, name: name,
		project: uuid.NewString(), ann: auth.User{ID: "ann"}, bob: auth.User{ID: "bob"}, reasonFor: map[string]string{},
	}
	f.judge = f.createJudge(t, f.project, uuid.NewString())
	for range 6 {
		f.spans = append(f.spans, f.putSpan(t, f.project))
	}
	return f
}

func (f *calFixture) createJudge(t *testing.T, projectID, id string) judge.Judge {
	t.Helper()
	j := judge.Judge{ID: id, ProjectID: projectID, Name: "Correct", EvaluationType: judge.TypeBinary, CreatedAt: calT0, UpdatedAt: calT0}
	require.NoError(t, f.judges.CreateJudge(context.Background(), j))
	return j
}

// putSpan writes the summary item of a new span of projectID: evaluations are of known spans,
// and PutEvaluations reads nothing else of it.
func (f *calFixture) putSpan(t *testing.T, projectID string) string {
	t.Helper()
	id := uuid.NewString()
	_, err := f.client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: &f.name, Item: map[string]types.AttributeValue{
		infra.AttrPK: &types.AttributeValueMemberS{Value: "P#" + projectID + "#S#" + id},
		infra.AttrSK: &types.AttributeValueMemberS{Value: "SPAN"},
		"t":          &types.AttributeValueMemberS{Value: "trace-" + id},
	}})
	require.NoError(t, err)
	return id
}

// evaluate writes j's verdicts on spans, passing span i when pass(i).
func (f *calFixture) evaluate(t *testing.T, j judge.Judge, spans []string, pass func(int) bool) {
	t.Helper()
	evs := make([]judge.Evaluation, len(spans))
	for i, s := range spans {
		evs[i] = judge.Evaluation{SpanID: s, JudgeID: j.ID, JudgeName: j.Name, EvaluationType: j.EvaluationType,
			Result: pass(i), Reason: "verdict on " + s, CreatedAt: calT0.Add(-time.Hour), UpdatedAt: calT0.Add(-time.Hour)}
	}
	_, err := f.judges.PutEvaluations(context.Background(), j, evs)
	require.NoError(t, err)
}

// calibrate submits user's calibration of j's verdict on span at, as the feedback service does
// (PutFeedback, then FlagEvaluation), and returns it.
func (f *calFixture) calibrate(t *testing.T, j judge.Judge, user auth.User, span string, at time.Time, thumbsUp bool) feedback.Feedback {
	t.Helper()
	reason := fmt.Sprintf("%s on %s at %s", user.ID, span, at.Format(time.TimeOnly))
	f.reasonFor[user.ID+"/"+span] = reason
	fb := feedback.Feedback{
		ProjectID: j.ProjectID, SpanID: span, TraceID: "trace-" + span, PromptSlug: "bot", ThumbsUp: thumbsUp, Reason: &reason,
		Calibration: &judge.Calibration{JudgeID: j.ID, ScoreDirection: judge.TooLow},
		CreatedBy:   user, CreatedAt: at, UpdatedAt: at,
	}
	stored, err := f.feedback.PutFeedback(context.Background(), fb)
	require.NoError(t, err)
	require.NoError(t, f.feedback.FlagEvaluation(context.Background(), j.ProjectID, span, j.ID))
	return stored
}

func (f *calFixture) read(t *testing.T, q judge.CalibrationQuery) []judge.Pair {
	t.Helper()
	pairs, err := f.feedback.Calibrations(context.Background(), f.project, f.judge.ID, q)
	require.NoError(t, err)
	return pairs
}

// calibrated names a pair by its span and the time of its calibration.
type calibrated struct {
	span string
	at   time.Time
}

func pairsOf(pairs []judge.Pair) []calibrated {
	var out []calibrated
	for _, p := range pairs {
		out = append(out, calibrated{p.Evaluation.SpanID, p.CalibratedAt})
	}
	return out
}

// TestCalibrations: a judge's calibrations come newest first, within the window and limit,
// without feedback on evaluations not written yet, and never another judge's or project's.
func TestCalibrations(t *testing.T) {
	ctx := context.Background()
	f := newCalFixture(t)
	s := f.spans
	// Evaluations of spans 0-4 (pass on even spans); span 5 gets calibration feedback first.
	f.evaluate(t, f.judge, s[:5], func(i int) bool { return i%2 == 0 })
	// Ann calibrates spans 0-5 at hours 0-5, Bob span 0 at hour 6: two calibrations of one
	// evaluation. Ann's on span 5 waits for its evaluation (a stub).
	for i, span := range s {
		f.calibrate(t, f.judge, f.ann, span, calAt(i), i%3 == 0)
	}
	f.calibrate(t, f.judge, f.bob, s[0], calAt(6), false)
	// Not calibrations of this judge: plain feedback, another judge's calibration, and the same
	// judge id and spans in another project.
	_, err := f.feedback.PutFeedback(ctx, feedback.Feedback{ProjectID: f.project, SpanID: s[1], TraceID: "trace-" + s[1],
		PromptSlug: "bot", ThumbsUp: true, CreatedBy: f.ann, CreatedAt: calAt(7), UpdatedAt: calAt(7)})
	require.NoError(t, err)
	other := f.createJudge(t, f.project, uuid.NewString())
	f.evaluate(t, other, s[:1], func(int) bool { return true })
	f.calibrate(t, other, f.ann, s[0], calAt(8), true)
	elsewhere := f.createJudge(t, uuid.NewString(), f.judge.ID)
	elsewhereSpan := f.putSpan(t, elsewhere.ProjectID)
	f.evaluate(t, elsewhere, []string{elsewhereSpan}, func(int) bool { return true })
	f.calibrate(t, elsewhere, f.ann, elsewhereSpan, calAt(9), true)

	all := []calibrated{{s[0], calAt(6)}, {s[4], calAt(4)}, {s[3], calAt(3)}, {s[2], calAt(2)}, {s[1], calAt(1)}, {s[0], calAt(0)}}
	tests := []struct {
		name string
		q    judge.CalibrationQuery
		want []calibrated
	}{
		{"all, newest first, stub left out", judge.CalibrationQuery{}, all},
		{"limit", judge.CalibrationQuery{Limit: 2}, all[:2]},
		{"limit above the count", judge.CalibrationQuery{Limit: 50}, all},
		{"window, bounds included", judge.CalibrationQuery{Start: calAt(1), End: calAt(4)}, all[1:5]},
		{"window and limit", judge.CalibrationQuery{Start: calAt(1), End: calAt(4), Limit: 3}, all[1:4]},
		{"open start", judge.CalibrationQuery{End: calAt(2).Add(-time.Microsecond)}, all[4:]},
		{"open end", judge.CalibrationQuery{Start: calAt(3).Add(time.Microsecond)}, all[:2]},
		{"window of the stub only", judge.CalibrationQuery{Start: calAt(5), End: calAt(5)}, nil},
		{"end before start", judge.CalibrationQuery{Start: calAt(4), End: calAt(1)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, pairsOf(f.read(t, tt.q)))
		})
	}

	t.Run("pairs carry the verdict and the calibration", func(t *testing.T) {
		pairs := f.read(t, judge.CalibrationQuery{Start: calAt(3), End: calAt(3)})
		require.Len(t, pairs, 1)
		p := pairs[0]
		assert.Equal(t, f.judge.ID, p.Evaluation.JudgeID)
		assert.False(t, p.Evaluation.Result, "span 3 failed")
		assert.Equal(t, "verdict on "+s[3], p.Evaluation.Reason)
		assert.True(t, p.Evaluation.HasFeedback)
		assert.True(t, p.ThumbsUp, "Ann agreed on span 3 (3 %% 3 == 0)")
		assert.Equal(t, judge.Calibration{JudgeID: f.judge.ID, ScoreDirection: judge.TooLow}, p.Calibration)
		assert.Equal(t, f.reasonFor["ann/"+s[3]], p.Reason)
		assert.Equal(t, calAt(3), p.CalibratedAt)
	})

	t.Run("another project's", func(t *testing.T) {
		pairs, err := f.feedback.Calibrations(ctx, elsewhere.ProjectID, f.judge.ID, judge.CalibrationQuery{})
		require.NoError(t, err)
		assert.Equal(t, []calibrated{{elsewhereSpan, calAt(9)}}, pairsOf(pairs))
	})
}

// TestCalibrationsMove: a submission again makes a calibration the newest, and feedback that
// came before its evaluation joins once the evaluation is written.
func TestCalibrationsMove(t *testing.T) {
	f := newCalFixture(t)
	s := f.spans
	f.evaluate(t, f.judge, s[:3], func(int) bool { return true })
	for i, span := range s[:4] {
		f.calibrate(t, f.judge, f.ann, span, calAt(i), true)
	}
	require.Equal(t, []calibrated{{s[2], calAt(2)}, {s[1], calAt(1)}, {s[0], calAt(0)}}, pairsOf(f.read(t, judge.CalibrationQuery{})))

	// Ann changes her mind on span 0: it moves to the newest, once.
	first := f.calibrate(t, f.judge, f.ann, s[0], calAt(10), false)
	pairs := f.read(t, judge.CalibrationQuery{})
	assert.Equal(t, []calibrated{{s[0], calAt(10)}, {s[2], calAt(2)}, {s[1], calAt(1)}}, pairsOf(pairs))
	assert.False(t, pairs[0].ThumbsUp)
	assert.Equal(t, calAt(0), first.CreatedAt, "a submission again keeps the creation time")
	assert.Empty(t, f.read(t, judge.CalibrationQuery{End: calAt(0)}), "nothing left at its old time")

	// The evaluation of span 3 arrives after its feedback.
	f.evaluate(t, f.judge, s[3:4], func(int) bool { return false })
	assert.Equal(t, []calibrated{{s[0], calAt(10)}, {s[3], calAt(3)}, {s[2], calAt(2)}, {s[1], calAt(1)}},
		pairsOf(f.read(t, judge.CalibrationQuery{})))
}

// TestCalibrationsRequests: what a read costs, in requests.
func TestCalibrationsRequests(t *testing.T) {
	f := newCalFixture(t)
	s := f.spans
	f.evaluate(t, f.judge, s[:5], func(int) bool { return true })
	for i, span := range s[:5] {
		f.calibrate(t, f.judge, f.ann, span, calAt(i), true)
		f.calibrate(t, f.judge, f.bob, span, calAt(i).Add(time.Minute), true)
	}
	// Feedback on span 5, whose evaluation is not written, is the newest.
	f.calibrate(t, f.judge, f.ann, s[5], calAt(20), true)

	tests := []struct {
		name      string
		q         judge.CalibrationQuery
		pairs     int
		wantCalls string
	}{
		// 11 index entries name 17 items: 11 feedback items and 6 evaluations (one a stub),
		// each evaluation once however many people calibrated it.
		{"all", judge.CalibrationQuery{}, 10, "BatchGetItem=1 Query=1"},
		{"the evaluator's five", judge.CalibrationQuery{End: calAt(19), Limit: 5}, 5, "BatchGetItem=1 Query=1"},
		// The first page holds the stub's feedback; the next page makes up for it.
		{"five, the stub first", judge.CalibrationQuery{Limit: 5}, 5, "BatchGetItem=2 Query=2"},
		{"one, the stub first", judge.CalibrationQuery{Limit: 1}, 1, "BatchGetItem=2 Query=2"},
		{"an empty window", judge.CalibrationQuery{Start: calAt(30)}, 0, "Query=1"},
		{"an inverted window", judge.CalibrationQuery{Start: calAt(3), End: calAt(2)}, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f.counter.Reset()
			assert.Len(t, f.read(t, tt.q), tt.pairs)
			assert.Equal(t, tt.wantCalls, f.counter.String())
		})
	}

	// Writing calibration feedback is one UpdateItem (the index keys are in it), after one
	// GetItem of the trace's session (where GSI3 indexes it).
	f.counter.Reset()
	_, err := f.feedback.PutFeedback(context.Background(), feedback.Feedback{ProjectID: f.project, SpanID: s[0], TraceID: "trace-" + s[0],
		PromptSlug: "bot", ThumbsUp: true, Calibration: &judge.Calibration{JudgeID: f.judge.ID}, CreatedBy: f.ann,
		CreatedAt: calAt(40), UpdatedAt: calAt(40)})
	require.NoError(t, err)
	assert.Equal(t, "GetItem=1 UpdateItem=1", f.counter.String())
}
