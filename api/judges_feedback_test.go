package api_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/plumehq/plume/api"
)

// serverJSON writes v as the server does: encoding/json without HTML escaping.
func serverJSON(t *testing.T, v any) string {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatalf("encode %T: %v", v, err)
	}
	return string(bytes.TrimSuffix(b.Bytes(), []byte("\n")))
}

func refTo[T any](v T) *T { return &v }

// judgeFixtures are the times, the evaluation and the user of the golden values.
func judgeFixtures() (t0, t1 time.Time, evaluation api.Evaluation, user api.User) {
	t0 = time.Date(2026, 11, 21, 9, 30, 0, 123456000, time.UTC)
	t1 = t0.Add(90 * time.Minute)
	evaluation = api.Evaluation{
		ID: "e-1", SpanID: "s-1", JudgeID: "j-1", JudgeName: "Helpfulness <v2>", EvaluationType: api.EvaluationScored,
		EvaluationResult: true, EvaluationReason: "cites <sources> & is kind", ConfidenceScore: refTo(0.9), Score: refTo(4.5),
		ScoreMin: refTo(1.0), ScoreMax: refTo(5.0), PassThreshold: refTo(3.8), ModelUsed: "gpt-4o-mini", EvaluationDurationMS: refTo(812.5),
		CriteriaScores:  map[string]api.CriterionScore{"accuracy": {Score: refTo(5.0), Reason: "right"}, "tone": {Score: refTo(4.0)}},
		HasUserFeedback: true, CreatedAt: t0, UpdatedAt: t1,
	}
	user = api.User{ID: "u-1", Email: "ann@example.com", Name: "Ann <QA>"}
	return t0, t1, evaluation, user
}

// TestJudgeGolden pins the JSON of a judge, its criteria and an evaluation: a renamed or
// reordered field is a visible change here.
func TestJudgeGolden(t *testing.T) {
	t0, t1, evaluation, _ := judgeFixtures()
	judge := api.Judge{
		ID: "j-1", ProjectID: "p-1", Name: "Helpfulness <v2>", Template: "**Accuracy**: facts & sources", EvaluationType: api.EvaluationScored,
		ScoreMin: refTo(1.0), ScoreMax: refTo(5.0), PassThreshold: refTo(3.8), SampleRate: 0.25, Temperature: 0.3, Model: refTo("gpt-4o-mini"),
		TagFilter:      &api.TagFilter{Tags: map[string][]string{"env": {"prod", "staging"}, "tier": {"gold"}}, Match: "any"},
		TargetPrompt:   refTo("support-bot"),
		Criteria:       []api.Criterion{{Key: "accuracy", Label: "Accuracy", Description: "facts & sources"}, {Key: "tone", Label: "Tone"}},
		CriteriaSource: api.CriteriaInferred, Paused: true, Status: api.JudgePaused, Backfill: 50, TemplateVersion: 2, LinkedPrompts: []string{"support-bot"},
		EvaluationCount: 3, PassRate: refTo(2.0 / 3), CreatedAt: t0, CreatedBy: "u-1", UpdatedAt: t1, UpdatedBy: "u-2",
	}
	criteria := api.JudgeCriteria{JudgeID: "j-1", EvaluationType: api.EvaluationScored, ScoreMin: refTo(1.0), ScoreMax: refTo(5.0), PassThreshold: refTo(3.8), Criteria: judge.Criteria}
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"judge", judge, `{"id":"j-1","project_id":"p-1","name":"Helpfulness <v2>","template":"**Accuracy**: facts & sources","evaluation_type":"scored","score_min":1,"score_max":5,"pass_threshold":3.8,"sample_rate":0.25,"temperature":0.3,"model":"gpt-4o-mini","tag_filter":{"tags":{"env":["prod","staging"],"tier":["gold"]},"match":"any"},"target_prompt":"support-bot","criteria":[{"key":"accuracy","label":"Accuracy","description":"facts & sources"},{"key":"tone","label":"Tone","description":""}],"criteria_source":"inferred","paused":true,"status":"paused","backfill":50,"template_version":2,"linked_prompts":["support-bot"],"evaluation_count":3,"pass_rate":0.6666666666666666,"created_at":"2026-11-21T09:30:00.123456Z","created_by":"u-1","updated_at":"2026-11-21T11:00:00.123456Z","updated_by":"u-2"}`},
		{"criteria", criteria, `{"judge_id":"j-1","evaluation_type":"scored","score_min":1,"score_max":5,"pass_threshold":3.8,"criteria":[{"key":"accuracy","label":"Accuracy","description":"facts & sources"},{"key":"tone","label":"Tone","description":""}]}`},
		{"evaluation", evaluation, `{"id":"e-1","span_id":"s-1","judge_id":"j-1","judge_name":"Helpfulness <v2>","evaluation_type":"scored","evaluation_result":true,"evaluation_reason":"cites <sources> & is kind","confidence_score":0.9,"score":4.5,"score_min":1,"score_max":5,"pass_threshold":3.8,"model_used":"gpt-4o-mini","evaluation_duration_ms":812.5,"cost":null,"criteria_scores":{"accuracy":{"score":5,"reason":"right"},"tone":{"score":4}},"has_user_feedback":true,"created_at":"2026-11-21T09:30:00.123456Z","updated_at":"2026-11-21T11:00:00.123456Z"}`},
		{"evaluation page", api.EvaluationPage{Evaluations: []api.Evaluation{}, Limit: 100, Offset: 0, Total: 0}, `{"evaluations":[],"limit":100,"offset":0,"total":0}`},
		{"judge request", api.JudgeRequest{Name: refTo("x"), SampleRate: refTo(0.5), Model: api.Null[string](), Criteria: api.Some([]api.Criterion{})},
			`{"name":"x","sample_rate":0.5,"model":null,"criteria":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := serverJSON(t, tt.v); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestFeedbackGolden pins the JSON of a feedback record, both kinds of unified feedback item
// and a feedback link.
func TestFeedbackGolden(t *testing.T) {
	t0, t1, evaluation, user := judgeFixtures()
	feedback := api.Feedback{
		ID: "f-1", CompletionID: "s-1", PromptID: "pr-1", PromptSlug: "support-bot", PromptVersionID: refTo("v-1"), ProjectID: "p-1",
		TraceID: refTo("t-1"), Reason: refTo("wrong <amount> & tone"), ExpectedOutput: refTo("$20"), Metadata: json.RawMessage(`{"ticket":7}`),
		JudgeID: refTo("j-1"), ExpectedScore: refTo(2.0), ScoreDirection: refTo(api.TooHigh),
		CriteriaFeedback: map[string]api.CriterionFeedback{"accuracy": {ExpectedScore: refTo(1.0), Reason: "no"}, "tone": {}},
		SourceType:       api.SourceJudge, CreatedBy: user, CreatedAt: t0, UpdatedAt: t1,
	}
	human := api.FeedbackItem{Human: &api.HumanFeedbackItem{
		Kind: api.KindHumanFeedback, ID: "f-1", SpanID: "s-1", Reason: refTo("wrong <amount> & tone"), ExpectedOutput: refTo("$20"),
		CreatedAt: t0, CreatedBy: user, SourceType: api.SourceJudge, JudgeID: refTo("j-1"), PromptVersionID: refTo("v-1"),
	}}
	judged := api.FeedbackItem{Judge: &api.JudgeEvaluationItem{Kind: api.KindJudgeEvaluation, AutomationID: "j-1", Evaluation: evaluation}}
	link := api.Link{
		ID: "l-1", URL: "https://feedback.example.com/f/plf_abc", PromptSlug: "support-bot", LinkType: api.LinkTypeCompletion,
		ProjectID: "p-1", ExpiresAt: t0.Add(7 * 24 * time.Hour), CreatedAt: t0, CreatedBy: user, Status: api.LinkActive,
	}
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"feedback", feedback, `{"id":"f-1","completion_id":"s-1","prompt_id":"pr-1","prompt_slug":"support-bot","prompt_version_id":"v-1","project_id":"p-1","trace_id":"t-1","thumbs_up":false,"reason":"wrong <amount> & tone","expected_output":"$20","metadata":{"ticket":7},"judge_id":"j-1","expected_score":2,"score_direction":"too_high","criteria_feedback":{"accuracy":{"expected_score":1,"reason":"no"},"tone":{}},"source_type":"judge","created_by":{"id":"u-1","email":"ann@example.com","name":"Ann <QA>"},"created_at":"2026-11-21T09:30:00.123456Z","updated_at":"2026-11-21T11:00:00.123456Z"}`},
		{"human item", human, `{"kind":"human_feedback","id":"f-1","span_id":"s-1","thumbs_up":false,"reason":"wrong <amount> & tone","expected_output":"$20","created_at":"2026-11-21T09:30:00.123456Z","created_by":{"id":"u-1","email":"ann@example.com","name":"Ann <QA>"},"source_type":"judge","judge_id":"j-1","prompt_version_id":"v-1"}`},
		{"judge item", judged, `{"kind":"judge_evaluation","automation_id":"j-1","id":"e-1","span_id":"s-1","judge_id":"j-1","judge_name":"Helpfulness <v2>","evaluation_type":"scored","evaluation_result":true,"evaluation_reason":"cites <sources> & is kind","confidence_score":0.9,"score":4.5,"score_min":1,"score_max":5,"pass_threshold":3.8,"model_used":"gpt-4o-mini","evaluation_duration_ms":812.5,"cost":null,"criteria_scores":{"accuracy":{"score":5,"reason":"right"},"tone":{"score":4}},"has_user_feedback":true,"created_at":"2026-11-21T09:30:00.123456Z","updated_at":"2026-11-21T11:00:00.123456Z"}`},
		{"unified", api.UnifiedFeedback{EntityType: api.EntitySpan, EntityID: "s-9", Items: []api.FeedbackItem{}},
			`{"entity_type":"span","entity_id":"s-9","summary":{"total":0,"human_feedback_count":0,"judge_evaluation_count":0},"items":[]}`},
		{"link", link, `{"id":"l-1","url":"https://feedback.example.com/f/plf_abc","prompt_slug":"support-bot","link_type":"prompt_completion","project_id":"p-1","expires_at":"2026-11-28T09:30:00.123456Z","created_at":"2026-11-21T09:30:00.123456Z","revoked_at":null,"created_by":{"id":"u-1","email":"ann@example.com","name":"Ann <QA>"},"status":"active"}`},
		{"link list", api.LinkList{Links: []api.Link{}}, `{"count":0,"links":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := serverJSON(t, tt.v); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}

	// A client decodes items by their kind and gets them back whole.
	var back []api.FeedbackItem
	if err := json.Unmarshal([]byte(serverJSON(t, []api.FeedbackItem{human, judged})), &back); err != nil {
		t.Fatal(err)
	}
	if len(back) != 2 || back[0].Human == nil || back[1].Judge == nil || serverJSON(t, back) != serverJSON(t, []api.FeedbackItem{human, judged}) {
		t.Errorf("round trip: got %s", serverJSON(t, back))
	}
	// json.Marshal escapes HTML in an item as it does everywhere else.
	direct, _ := json.Marshal(human.Human)
	viaItem, _ := json.Marshal(human)
	if !bytes.Equal(direct, viaItem) {
		t.Errorf("json.Marshal of an item: got %s, want %s", viaItem, direct)
	}
	var unknown api.FeedbackItem
	var invalid *api.InvalidError
	if err := json.Unmarshal([]byte(`{"kind":"survey"}`), &unknown); !errors.As(err, &invalid) {
		t.Errorf("unknown kind: got %v, want an *api.InvalidError", err)
	}
}

// TestJudgeRequest: a PATCH body tells absent, null and a value apart, and names the field of
// the wrong type.
func TestJudgeRequest(t *testing.T) {
	var r api.JudgeRequest
	if err := json.Unmarshal([]byte(`{"model": null, "tag_filter": {"tags": {"env": ["prod"]}}, "name": null, "extra": 1}`), &r); err != nil {
		t.Fatal(err)
	}
	switch {
	case !r.Model.Set || r.Model.Value != nil:
		t.Errorf("model: got %+v, want null", r.Model)
	case !r.TagFilter.Set || r.TagFilter.Value == nil || r.TagFilter.Value.Tags["env"][0] != "prod":
		t.Errorf("tag_filter: got %+v", r.TagFilter)
	case r.TargetPrompt.Set || r.Criteria.Set:
		t.Errorf("absent fields are not Set: %+v %+v", r.TargetPrompt, r.Criteria)
	case r.Name != nil:
		t.Errorf("name: null is absent, got %q", *r.Name)
	}
	tests := []struct{ body, msg string }{
		{`[1]`, "the body must be a JSON object"},
		{`{"sample_rate": "high"}`, "sample_rate: must be a number"},
		{`{"criteria": [{"key": 1}]}`, "criteria: key must be a string"},
	}
	for _, tt := range tests {
		var r api.JudgeRequest
		err := json.Unmarshal([]byte(tt.body), &r)
		var invalid *api.InvalidError
		if !errors.As(err, &invalid) || invalid.Message != tt.msg {
			t.Errorf("%s: got %v, want %q", tt.body, err, tt.msg)
		}
	}
}

// FuzzJudgeRequest: any body decodes to a request or an *InvalidError, and a request decoded
// encodes to a body that decodes to the same request (absent, null and values kept apart).
func FuzzJudgeRequest(f *testing.F) {
	for _, seed := range []string{
		`{"name":"x","template":"t","evaluation_type":"scored","score_min":1,"score_max":5,"pass_threshold":3,"sample_rate":0.5,"temperature":0.2,"model":"m","tag_filter":{"tags":{"env":["prod"]},"match":"any"},"target_prompt":"bot","criteria":[{"key":"a","label":"A","description":"d"}],"paused":true,"backfill":10}`,
		`{"model": null, "target_prompt": null, "tag_filter": null, "criteria": null, "extra": 1}`,
		`{"criteria": [], "tag_filter": {}}`, `[1]`, `null`, `{"name": 3}`, `{"tag_filter": {"tags": {"env": [1]}}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var r api.JudgeRequest
		err := json.Unmarshal(body, &r)
		var syntax *json.SyntaxError
		var invalid *api.InvalidError
		switch {
		case err == nil:
		case errors.As(err, &syntax), errors.As(err, &invalid):
			return
		default:
			t.Fatalf("%s: unexpected error %T %v", body, err, err)
		}
		again, err := json.Marshal(r)
		if err != nil {
			t.Fatalf("encode %+v: %v", r, err)
		}
		var back api.JudgeRequest
		if err := json.Unmarshal(again, &back); err != nil {
			t.Fatalf("%s: decoding %s: %v", body, again, err)
		}
		if !reflect.DeepEqual(r, back) {
			t.Fatalf("%s: round trip through %s changed %+v into %+v", body, again, r, back)
		}
	})
}
