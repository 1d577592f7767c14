package judges

import (
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
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

func f(v float64) *float64 { return &v }

var (
	t0 = time.Date(2026, 11, 21, 9, 30, 0, 123456000, time.UTC)
	t1 = t0.Add(90 * time.Minute)

	fullJudge = judge.Judge{
		ID: "j-1", ProjectID: "p-1", Name: "Helpfulness <v2>", Template: "**Accuracy**: facts & sources", EvaluationType: judge.TypeScored,
		ScoreMin: f(1), ScoreMax: f(5), PassThreshold: f(3.8), SampleRate: 0.25, Temperature: 0.3, Model: "gpt-4o-mini",
		TagFilter:    &judge.TagFilter{Tags: map[string][]string{"env": {"prod", "staging"}, "tier": {"gold"}}, Match: judge.MatchAny},
		TargetPrompt: "support-bot", Criteria: []judge.Criterion{{Key: "accuracy", Label: "Accuracy", Description: "facts & sources"}, {Key: "tone", Label: "Tone"}},
		CriteriaInferred: true, Paused: true, Backfill: 50, LinkedPrompts: []string{"support-bot"}, EvaluationCount: 3, PassCount: 2,
		CreatedAt: t0, CreatedBy: "u-1", UpdatedAt: t1, UpdatedBy: "u-2",
	}
	minimalJudge = judge.Judge{ID: "j-2", ProjectID: "p-1", Name: "Brevity", Template: "Is it brief?", EvaluationType: judge.TypeBinary, SampleRate: 1, CreatedAt: t0, CreatedBy: "u-1", UpdatedAt: t0, UpdatedBy: "u-1"}

	fullEvaluation = judge.Evaluation{
		ID: "e-1", SpanID: "s-1", TraceID: "t-1", JudgeID: "j-1", JudgeName: "Helpfulness <v2>", EvaluationType: judge.TypeScored,
		Result: true, Reason: "cites <sources> & is kind", Confidence: f(0.9), Score: f(4.5), ScoreMin: f(1), ScoreMax: f(5), PassThreshold: f(3.8),
		Model: "gpt-4o-mini", DurationMS: f(812.5), Cost: f(0.00042), CriteriaScores: map[string]judge.CriterionScore{"accuracy": {Score: f(5), Reason: "right"}, "tone": {Score: f(4)}},
		HasFeedback: true, CreatedAt: t0, UpdatedAt: t1,
	}
	minimalEvaluation = judge.Evaluation{ID: "e-2", SpanID: "s-2", JudgeID: "j-2", JudgeName: "Brevity", EvaluationType: judge.TypeBinary, CreatedAt: t0, UpdatedAt: t0}
)

// TestWireBytes pins the answers of the judges area to the bytes the server wrote before the
// wire types moved to package api (judge.JudgeJSON, CriteriaJSON, EvaluationJSON and maps).
func TestWireBytes(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"full judge", toJudge(fullJudge), `{"id":"j-1","project_id":"p-1","name":"Helpfulness <v2>","template":"**Accuracy**: facts & sources","evaluation_type":"scored","score_min":1,"score_max":5,"pass_threshold":3.8,"sample_rate":0.25,"temperature":0.3,"model":"gpt-4o-mini","tag_filter":{"tags":{"env":["prod","staging"],"tier":["gold"]},"match":"any"},"target_prompt":"support-bot","criteria":[{"key":"accuracy","label":"Accuracy","description":"facts & sources"},{"key":"tone","label":"Tone","description":""}],"criteria_source":"inferred","paused":true,"status":"paused","backfill":50,"template_version":1,"linked_prompts":["support-bot"],"evaluation_count":3,"pass_rate":0.6666666666666666,"created_at":"2026-11-21T09:30:00.123456Z","created_by":"u-1","updated_at":"2026-11-21T11:00:00.123456Z","updated_by":"u-2"}` + "\n"},
		{"minimal judge", toJudge(minimalJudge), `{"id":"j-2","project_id":"p-1","name":"Brevity","template":"Is it brief?","evaluation_type":"binary","score_min":null,"score_max":null,"pass_threshold":null,"sample_rate":1,"temperature":0,"model":null,"tag_filter":null,"target_prompt":null,"criteria":[],"criteria_source":"explicit","paused":false,"status":"active","backfill":0,"template_version":1,"linked_prompts":[],"evaluation_count":0,"pass_rate":null,"created_at":"2026-11-21T09:30:00.123456Z","created_by":"u-1","updated_at":"2026-11-21T09:30:00.123456Z","updated_by":"u-1"}` + "\n"},
		{"full criteria", toJudgeCriteria(fullJudge), `{"judge_id":"j-1","evaluation_type":"scored","score_min":1,"score_max":5,"pass_threshold":3.8,"criteria":[{"key":"accuracy","label":"Accuracy","description":"facts & sources"},{"key":"tone","label":"Tone","description":""}]}` + "\n"},
		{"minimal criteria", toJudgeCriteria(minimalJudge), `{"judge_id":"j-2","evaluation_type":"binary","score_min":null,"score_max":null,"pass_threshold":null,"criteria":[]}` + "\n"},
		{"full evaluation", EvaluationOf(fullEvaluation), `{"id":"e-1","span_id":"s-1","judge_id":"j-1","judge_name":"Helpfulness <v2>","evaluation_type":"scored","evaluation_result":true,"evaluation_reason":"cites <sources> & is kind","confidence_score":0.9,"score":4.5,"score_min":1,"score_max":5,"pass_threshold":3.8,"model_used":"gpt-4o-mini","evaluation_duration_ms":812.5,"cost":0.00042,"criteria_scores":{"accuracy":{"score":5,"reason":"right"},"tone":{"score":4}},"has_user_feedback":true,"created_at":"2026-11-21T09:30:00.123456Z","updated_at":"2026-11-21T11:00:00.123456Z"}` + "\n"},
		{"minimal evaluation", EvaluationOf(minimalEvaluation), `{"id":"e-2","span_id":"s-2","judge_id":"j-2","judge_name":"Brevity","evaluation_type":"binary","evaluation_result":false,"evaluation_reason":"","confidence_score":null,"score":null,"score_min":null,"score_max":null,"pass_threshold":null,"model_used":"","evaluation_duration_ms":null,"cost":null,"criteria_scores":{},"has_user_feedback":false,"created_at":"2026-11-21T09:30:00.123456Z","updated_at":"2026-11-21T09:30:00.123456Z"}` + "\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, wire(t, tt.v))
		})
	}
}

// TestEnvelopesAsMaps: the envelopes write the bytes of the maps they replaced (whose keys
// encoding/json sorts).
func TestEnvelopesAsMaps(t *testing.T) {
	judges := []api.Judge{toJudge(fullJudge), toJudge(minimalJudge)}
	evs := toEvaluations([]judge.Evaluation{fullEvaluation, minimalEvaluation})
	none := toEvaluations(nil)
	require.NotNil(t, none, "an empty list is [], not null")
	tests := []struct {
		name     string
		v        any
		asBefore map[string]any
	}{
		{"judge list", api.JudgeList{Judges: judges, Count: 2}, map[string]any{"judges": judges, "count": 2}},
		{"recorded", api.RecordEvaluationsResult{Evaluations: evs, Count: 2}, map[string]any{"evaluations": evs, "count": 2}},
		{"page", api.EvaluationPage{Evaluations: evs, Total: 7, Limit: 2, Offset: 4}, map[string]any{"evaluations": evs, "total": 7, "limit": 2, "offset": 4}},
		{"empty page", api.EvaluationPage{Evaluations: none, Limit: 100}, map[string]any{"evaluations": none, "total": 0, "limit": 100, "offset": 0}},
		{"span", api.SpanEvaluations{SpanID: "s-1", Evaluations: evs}, map[string]any{"span_id": "s-1", "evaluations": evs}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, wire(t, tt.asBefore), wire(t, tt.v))
		})
	}
}

func TestParseSpecNulls(t *testing.T) {
	spec, err := parseSpec([]byte(`{"model": null, "target_prompt": null, "tag_filter": null, "criteria": null, "extra": 1}`))
	require.NoError(t, err)
	assert.True(t, spec.ClearModel)
	assert.True(t, spec.ClearTargetPrompt)
	assert.True(t, spec.ClearTagFilter)
	assert.True(t, spec.ClearCriteria)
	_, err = parseSpec([]byte(`{"sample_rate": "high"}`))
	assert.ErrorContains(t, err, "sample_rate: must be a number")
}

// TestParseSpec: the fields of a judge definition, absent, null and given, and the messages of
// bad bodies (as judge.ParseSpec worded them).
func TestParseSpec(t *testing.T) {
	s := func(v string) *string { return &v }
	b, n := true, 10
	full, err := parseSpec([]byte(`{"name":"x","template":"t","evaluation_type":"scored","score_min":1,"score_max":5,"pass_threshold":3,` +
		`"sample_rate":0.5,"temperature":0.2,"model":"m","tag_filter":{"tags":{"env":["prod"]},"match":"any"},"target_prompt":"bot",` +
		`"criteria":[{"key":"a","label":"A","description":"d"}],"paused":true,"backfill":10}`))
	require.NoError(t, err)
	assert.Equal(t, judge.Spec{
		Name: s("x"), Template: s("t"), EvaluationType: s("scored"), ScoreMin: f(1), ScoreMax: f(5), PassThreshold: f(3),
		SampleRate: f(0.5), Temperature: f(0.2), Model: s("m"), TagFilter: &judge.TagFilter{Tags: map[string][]string{"env": {"prod"}}, Match: "any"},
		TargetPrompt: s("bot"), Criteria: &[]judge.Criterion{{Key: "a", Label: "A", Description: "d"}}, Paused: &b, Backfill: &n,
	}, full)

	for _, body := range []string{`{}`, `{"name": null, "template": null, "score_min": null, "paused": null, "backfill": null}`} {
		spec, err := parseSpec([]byte(body))
		require.NoError(t, err)
		assert.Equal(t, judge.Spec{}, spec, "null is absent for fields that cannot be cleared: %s", body)
	}
	empty, err := parseSpec([]byte(`{"criteria": [], "model": ""}`))
	require.NoError(t, err)
	assert.Equal(t, judge.Spec{Criteria: &[]judge.Criterion{}, Model: s("")}, empty)

	for body, msg := range map[string]string{
		`[1]`: "the body must be a JSON object", `null`: "the body must be a JSON object", `{"name":`: "the body must be a JSON object",
		`name=x`: "the body must be a JSON object", ``: "the body must be a JSON object", `{"a":1} x`: "the body must be a JSON object",
		`{"name": 3}`:                               "name: must be a string",
		`{"paused": "yes"}`:                         "paused: must be a boolean",
		`{"backfill": 1.5}`:                         "backfill: must be a number",
		`{"tag_filter": []}`:                        "tag_filter: must be an object",
		`{"tag_filter": {"tags": 3}}`:               "tag_filter: tags must be an object",
		`{"tag_filter": {"tags": {"env": "prod"}}}`: "tag_filter: tags must be an array",
		`{"tag_filter": {"tags": {"env": [1]}}}`:    "tag_filter: tags must be a string",
		`{"criteria": {}}`:                          "criteria: must be an array",
		`{"criteria": [1]}`:                         "criteria: must be an object",
		`{"criteria": [{"key": 1}]}`:                "criteria: key must be a string",
		`{"model": 5}`:                              "model: must be a string",
		`{"name": "a", "name": 3}`:                  "name: must be a string",
	} {
		_, err := parseSpec([]byte(body))
		assert.EqualError(t, err, "invalid_request: "+msg, "%s", body)
	}
}
