package feedback

import (
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/feedback"
	"github.com/plumehq/plume/shared/judge"
	"github.com/plumehq/plume/shared/web"
)

// wire is what the server writes for v.
func wire(t *testing.T, v any) string {
	t.Helper()
	rec := httptest.NewRecorder()
	web.OK(rec, v)
	return rec.Body.String()
}

// TestWireBytes pins the answers of the feedback area to the bytes the server wrote before the
// wire types moved to package api (feedback.FeedbackJSON, UnifiedJSON, LinkJSON and maps),
// except one fix: a unified item without a reason answers "reason": null, as the feedback
// record does, not "" (issue 11).
func TestWireBytes(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	s := func(v string) *string { return &v }
	t0 := time.Date(2026, 11, 21, 9, 30, 0, 123456000, time.UTC)
	t1 := t0.Add(90 * time.Minute)
	ev := judge.Evaluation{
		ID: "e-1", SpanID: "s-1", TraceID: "t-1", JudgeID: "j-1", JudgeName: "Helpfulness <v2>", EvaluationType: judge.TypeScored,
		Result: true, Reason: "cites <sources> & is kind", Confidence: f(0.9), Score: f(4.5), ScoreMin: f(1), ScoreMax: f(5), PassThreshold: f(3.8),
		Model: "gpt-4o-mini", DurationMS: f(812.5), CriteriaScores: map[string]judge.CriterionScore{"accuracy": {Score: f(5), Reason: "right"}, "tone": {Score: f(4)}},
		HasFeedback: true, CreatedAt: t0, UpdatedAt: t1,
	}
	evMin := judge.Evaluation{ID: "e-2", SpanID: "s-2", JudgeID: "j-2", JudgeName: "Brevity", EvaluationType: judge.TypeBinary, CreatedAt: t0, UpdatedAt: t0}
	user := auth.User{ID: "u-1", Email: "ann@example.com", Name: "Ann <QA>"}
	fb := feedback.Feedback{
		ID: "f-1", ProjectID: "p-1", SpanID: "s-1", TraceID: "t-1", PromptID: "pr-1", PromptSlug: "support-bot", PromptVersionID: "v-1",
		ThumbsUp: false, Reason: s("wrong <amount> & tone"), ExpectedOutput: s("$20"), Metadata: json.RawMessage(`{"ticket":7}`),
		Calibration: &judge.Calibration{JudgeID: "j-1", ExpectedScore: f(2), ScoreDirection: judge.TooHigh, CriteriaFeedback: map[string]judge.CriterionFeedback{"accuracy": {ExpectedScore: f(1), Reason: "no"}, "tone": {}}},
		CreatedBy:   user, LinkID: "l-1", CreatedAt: t0, UpdatedAt: t1,
	}
	fbMin := feedback.Feedback{ID: "f-2", ProjectID: "p-1", SpanID: "s-2", PromptID: "pr-1", PromptSlug: "support-bot", ThumbsUp: true, CreatedBy: auth.User{ID: "u-2"}, CreatedAt: t0, UpdatedAt: t0}
	u := feedback.Unified{EntityType: "trace", EntityID: "t-1", Items: []feedback.Item{{Feedback: &fb}, {Feedback: &fbMin}, {Evaluation: &ev}, {Evaluation: &evMin}}, Human: 2, Judge: 2}
	l := feedback.Link{ID: "l-1", ProjectID: "p-1", PromptSlug: "support-bot", LinkType: feedback.LinkTypeCompletion, TokenHash: "h", CreatedAt: t0, ExpiresAt: t0.Add(7 * 24 * time.Hour), CreatedBy: user}
	revoked := l
	revoked.RevokedAt = &t1

	tests := []struct {
		name string
		v    any
		want string
	}{
		{"full feedback", toFeedback(fb), `{"id":"f-1","completion_id":"s-1","prompt_id":"pr-1","prompt_slug":"support-bot","prompt_version_id":"v-1","project_id":"p-1","trace_id":"t-1","thumbs_up":false,"reason":"wrong <amount> & tone","expected_output":"$20","metadata":{"ticket":7},"judge_id":"j-1","expected_score":2,"score_direction":"too_high","criteria_feedback":{"accuracy":{"expected_score":1,"reason":"no"},"tone":{}},"source_type":"judge","created_by":{"id":"u-1","email":"ann@example.com","name":"Ann <QA>"},"created_at":"2026-11-21T09:30:00.123456Z","updated_at":"2026-11-21T11:00:00.123456Z"}` + "\n"},
		{"minimal feedback", toFeedback(fbMin), `{"id":"f-2","completion_id":"s-2","prompt_id":"pr-1","prompt_slug":"support-bot","prompt_version_id":null,"project_id":"p-1","trace_id":null,"thumbs_up":true,"reason":null,"expected_output":null,"metadata":null,"judge_id":null,"expected_score":null,"score_direction":null,"criteria_feedback":null,"source_type":"human","created_by":{"id":"u-2"},"created_at":"2026-11-21T09:30:00.123456Z","updated_at":"2026-11-21T09:30:00.123456Z"}` + "\n"},
		{"unified", toUnified(u), `{"entity_type":"trace","entity_id":"t-1","summary":{"total":4,"human_feedback_count":2,"judge_evaluation_count":2},"items":[{"kind":"human_feedback","id":"f-1","span_id":"s-1","thumbs_up":false,"reason":"wrong <amount> & tone","expected_output":"$20","created_at":"2026-11-21T09:30:00.123456Z","created_by":{"id":"u-1","email":"ann@example.com","name":"Ann <QA>"},"source_type":"judge","judge_id":"j-1","prompt_version_id":"v-1"},{"kind":"human_feedback","id":"f-2","span_id":"s-2","thumbs_up":true,"reason":null,"created_at":"2026-11-21T09:30:00.123456Z","created_by":{"id":"u-2"},"source_type":"human","prompt_version_id":null},{"kind":"judge_evaluation","automation_id":"j-1","id":"e-1","span_id":"s-1","judge_id":"j-1","judge_name":"Helpfulness <v2>","evaluation_type":"scored","evaluation_result":true,"evaluation_reason":"cites <sources> & is kind","confidence_score":0.9,"score":4.5,"score_min":1,"score_max":5,"pass_threshold":3.8,"model_used":"gpt-4o-mini","evaluation_duration_ms":812.5,"cost":null,"criteria_scores":{"accuracy":{"score":5,"reason":"right"},"tone":{"score":4}},"has_user_feedback":true,"created_at":"2026-11-21T09:30:00.123456Z","updated_at":"2026-11-21T11:00:00.123456Z"},{"kind":"judge_evaluation","automation_id":"j-2","id":"e-2","span_id":"s-2","judge_id":"j-2","judge_name":"Brevity","evaluation_type":"binary","evaluation_result":false,"evaluation_reason":"","confidence_score":null,"score":null,"score_min":null,"score_max":null,"pass_threshold":null,"model_used":"","evaluation_duration_ms":null,"cost":null,"criteria_scores":{},"has_user_feedback":false,"created_at":"2026-11-21T09:30:00.123456Z","updated_at":"2026-11-21T09:30:00.123456Z"}]}` + "\n"},
		{"empty unified", toUnified(feedback.Unified{EntityType: "span", EntityID: "s-9"}), `{"entity_type":"span","entity_id":"s-9","summary":{"total":0,"human_feedback_count":0,"judge_evaluation_count":0},"items":[]}` + "\n"},
		{"created link", toLink(l, "https://feedback.example.com/f/plf_abc", t1), `{"id":"l-1","url":"https://feedback.example.com/f/plf_abc","prompt_slug":"support-bot","link_type":"prompt_completion","project_id":"p-1","expires_at":"2026-11-28T09:30:00.123456Z","created_at":"2026-11-21T09:30:00.123456Z","revoked_at":null,"created_by":{"id":"u-1","email":"ann@example.com","name":"Ann <QA>"},"status":"active"}` + "\n"},
		{"expired link", toLink(l, "", t0.Add(8*24*time.Hour)), `{"id":"l-1","prompt_slug":"support-bot","link_type":"prompt_completion","project_id":"p-1","expires_at":"2026-11-28T09:30:00.123456Z","created_at":"2026-11-21T09:30:00.123456Z","revoked_at":null,"created_by":{"id":"u-1","email":"ann@example.com","name":"Ann <QA>"},"status":"expired"}` + "\n"},
		{"revoked link", toLink(revoked, "", t1), `{"id":"l-1","prompt_slug":"support-bot","link_type":"prompt_completion","project_id":"p-1","expires_at":"2026-11-28T09:30:00.123456Z","created_at":"2026-11-21T09:30:00.123456Z","revoked_at":"2026-11-21T11:00:00.123456Z","created_by":{"id":"u-1","email":"ann@example.com","name":"Ann <QA>"},"status":"revoked"}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, wire(t, tt.v))
		})
	}

	// The link list writes the bytes of the map it replaced (whose keys encoding/json sorts).
	links := []api.Link{toLink(l, "", t1), toLink(revoked, "", t1)}
	assert.Equal(t, wire(t, map[string]any{"links": links, "count": 2}), wire(t, api.LinkList{Links: links, Count: 2}))
}

// TestToInput: absent fields of a submission stay nil; an empty criteria_feedback does not.
func TestToInput(t *testing.T) {
	var absent, empty api.FeedbackRequest
	require.NoError(t, json.Unmarshal([]byte(`{"thumbs_up": true}`), &absent))
	require.NoError(t, json.Unmarshal([]byte(`{"thumbs_up": true, "criteria_feedback": {}}`), &empty))
	assert.Nil(t, toInput(absent).CriteriaFeedback)
	assert.NotNil(t, toInput(empty).CriteriaFeedback)
}
