package feedback_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	plumeapi "github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/judge"
)

// ingestTrace ingests one trace of n llm spans of prompt slug (in batches of 100) and returns the
// trace and span ids.
func ingestTrace(t testing.TB, api *apitest.API, tenant apitest.Tenant, slug, versionID, sessionID string, n int) (string, []string) {
	t.Helper()
	traceID := uuid.NewString()
	at := nowish()
	var batch []any
	var ids []string
	for i := range n {
		id := uuid.NewString()
		ids = append(ids, id)
		batch = append(batch, apitest.LLMSpan(id, traceID, sessionID, slug, versionID, fmt.Sprintf("q%d", i), fmt.Sprintf("a%d", i), at.Add(time.Duration(i)*time.Millisecond)))
	}
	for start := 0; start < n; start += 100 {
		api.MustDo(t, "POST", "/spans", tenant.Key, batch[start:min(start+100, n)])
	}
	return traceID, ids
}

// nowish is a recent span time: an hour ago.
func nowish() time.Time { return time.Now().Add(-time.Hour) }

func feedbackPath(slug, completion string) string {
	return "/v1/prompts/" + slug + "/completions/" + completion + "/feedback"
}

func unifiedPath(pid, entity, id string) string {
	return "/projects/" + pid + "/feedback/" + entity + "/" + id
}

func TestFeedbackUpsertPerUser(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	a := api.A
	vid := api.EnsurePrompt(t, a, "support-bot", "You help.")
	traceID, spans := ingestTrace(t, api, a, "support-bot", vid, "", 1)
	span := spans[0]

	first := api.MustDo(t, "POST", feedbackPath("support-bot", span), a.Key, map[string]any{
		"thumbs_up": false, "reason": "wrong refund amount", "expected_output": "$20", "metadata": map[string]any{"ticket": 7},
	}).Map(t)
	for _, k := range []string{"id", "completion_id", "prompt_id", "thumbs_up", "reason", "expected_output", "created_at", "prompt_version_id", "project_id", "created_by", "updated_at"} {
		assert.Contains(t, first, k)
	}
	assert.Equal(t, span, first["completion_id"])
	assert.Equal(t, vid, first["prompt_version_id"], "resolved from the span's linkage")
	assert.Equal(t, traceID, first["trace_id"])
	assert.Equal(t, a.ProjectID, first["project_id"])
	assert.Equal(t, a.UserID, first["created_by"].(map[string]any)["id"])
	assert.Equal(t, map[string]any{"ticket": 7.0}, first["metadata"])

	// The same user again: the record is updated, not duplicated.
	time.Sleep(2 * time.Millisecond)
	second := api.MustDo(t, "POST", feedbackPath("support-bot", span), a.Key, map[string]any{"thumbs_up": true, "reason": "fine after all"}).Map(t)
	assert.Equal(t, first["id"], second["id"])
	assert.Equal(t, first["created_at"], second["created_at"])
	assert.NotEqual(t, first["updated_at"], second["updated_at"])
	assert.Equal(t, true, second["thumbs_up"])
	assert.Nil(t, second["expected_output"], "a field left out of the new submission is cleared")

	// Concurrent submissions of one user (a client retrying) still leave one record.
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() {
			api.MustDo(t, "POST", feedbackPath("support-bot", span), a.Key, map[string]any{"thumbs_up": true, "reason": fmt.Sprint("retry ", i)})
		})
	}
	wg.Wait()
	second = api.MustDo(t, "POST", feedbackPath("support-bot", span), a.Key, map[string]any{"thumbs_up": true, "reason": "fine after all"}).Map(t)
	assert.Equal(t, first["id"], second["id"])

	// Another user: a second record.
	other := api.KeyFor(t, a, "reviewer-2")
	third := api.MustDo(t, "POST", feedbackPath("support-bot", span), other, map[string]any{"thumbs_up": false}).Map(t)
	assert.NotEqual(t, first["id"], third["id"])

	u := api.MustDo(t, "GET", unifiedPath(a.ProjectID, "span", span), a.Key, nil).Map(t)
	assert.Equal(t, map[string]any{"total": 2.0, "human_feedback_count": 2.0, "judge_evaluation_count": 0.0}, u["summary"])
	byUser := map[string]map[string]any{}
	for _, it := range u["items"].([]any) {
		m := it.(map[string]any)
		assert.Equal(t, "human_feedback", m["kind"])
		assert.Equal(t, "human", m["source_type"])
		byUser[m["created_by"].(map[string]any)["id"].(string)] = m
	}
	require.Contains(t, byUser, a.UserID)
	assert.Equal(t, true, byUser[a.UserID]["thumbs_up"])
	assert.Equal(t, "fine after all", byUser[a.UserID]["reason"])
	assert.Equal(t, false, byUser["reviewer-2"]["thumbs_up"])
}

// TestUnifiedFeedbackOfLargeTrace: a trace of 200 spans with feedback and evaluations on many of
// them is read back whole, with a number of DynamoDB requests that does not depend on the
// number of spans.
func TestUnifiedFeedbackOfLargeTrace(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	a := api.A
	vid := api.EnsurePrompt(t, a, "bot", "Answer.")
	sessionID := uuid.NewString()
	traceID, spans := ingestTrace(t, api, a, "bot", vid, sessionID, 200)
	otherTrace, otherSpans := ingestTrace(t, api, a, "bot", vid, sessionID, 3)
	judge := api.MustDo(t, "POST", "/projects/"+a.ProjectID+"/judges", a.Key, map[string]any{
		"name": "Scored", "template": "**Accuracy**: right facts", "evaluation_type": "scored", "score_min": 1, "score_max": 5,
	}).Map(t)
	jid := judge["id"].(string)

	wantHuman, wantJudge := map[string]bool{}, map[string]bool{}
	var evals []any
	for i, s := range spans {
		if i%5 < 3 { // 120 spans with feedback
			api.MustDo(t, "POST", feedbackPath("bot", s), a.Key, map[string]any{"thumbs_up": i%2 == 0, "reason": fmt.Sprint("r", i)})
			wantHuman[s] = true
		}
		if i%4 != 0 { // 150 spans with an evaluation
			evals = append(evals, map[string]any{"span_id": s, "score": float64(1 + i%5), "confidence_score": 0.9, "model_used": "gpt-4o-mini",
				"evaluation_duration_ms": 812, "criteria_scores": map[string]any{"accuracy": map[string]any{"score": 4, "reason": "ok"}}})
			wantJudge[s] = true
		}
	}
	for start := 0; start < len(evals); start += 100 {
		api.MustDo(t, "POST", "/projects/"+a.ProjectID+"/judges/"+jid+"/evaluations", a.Key, evals[start:min(start+100, len(evals))])
	}
	// Feedback on the other trace of the session must not appear in this trace.
	api.MustDo(t, "POST", feedbackPath("bot", otherSpans[0]), a.Key, map[string]any{"thumbs_up": true})
	api.DrainStream(t) // the feedback index is kept by the stream's consumer

	api.DDB.Reset()
	u := api.MustDo(t, "GET", unifiedPath(a.ProjectID, "trace", traceID), a.Key, nil).Map(t)
	requests := api.DDB.Total()
	assert.Equal(t, map[string]any{"total": 270.0, "human_feedback_count": 120.0, "judge_evaluation_count": 150.0}, u["summary"])
	assert.Equal(t, "trace", u["entity_type"])
	assert.Equal(t, traceID, u["entity_id"])
	gotHuman, gotJudge := map[string]bool{}, map[string]bool{}
	for _, it := range u["items"].([]any) {
		m := it.(map[string]any)
		switch m["kind"] {
		case "human_feedback":
			gotHuman[m["span_id"].(string)] = true
		case "judge_evaluation":
			gotJudge[m["span_id"].(string)] = true
			assert.Equal(t, jid, m["automation_id"])
			assert.Equal(t, "Scored", m["judge_name"])
			assert.Equal(t, "scored", m["evaluation_type"])
			assert.Equal(t, 1.0, m["score_min"])
			assert.Equal(t, 5.0, m["score_max"])
			assert.InDelta(t, 3.8, m["pass_threshold"], 1e-9)
			assert.Equal(t, 0.9, m["confidence_score"])
			assert.Equal(t, "gpt-4o-mini", m["model_used"])
			assert.Equal(t, 812.0, m["evaluation_duration_ms"])
			assert.Equal(t, map[string]any{"accuracy": map[string]any{"score": 4.0, "reason": "ok"}}, m["criteria_scores"])
			assert.Equal(t, m["score"].(float64) >= 3.8, m["evaluation_result"])
		default:
			t.Fatalf("unknown kind %v", m["kind"])
		}
	}
	assert.Equal(t, wantHuman, gotHuman)
	assert.Equal(t, wantJudge, gotJudge)
	// The trace's session (GetItem), one Query of its items under the session (270 items fit
	// one 1 MB page) and one of those still under the trace's own key; the key is cached.
	// 200 spans, 270 items: still 3 requests.
	assert.Equal(t, 3, requests, "DynamoDB requests: %s", api.DDB)

	// The session: one Query of its index partition, whatever its traces.
	api.DDB.Reset()
	s := api.MustDo(t, "GET", unifiedPath(a.ProjectID, "session", sessionID), a.Key, nil).Map(t)
	assert.Equal(t, 271.0, s["summary"].(map[string]any)["total"])
	assert.Equal(t, 1, api.DDB.Total(), "DynamoDB requests: %s", api.DDB)
	_ = otherTrace
}

// TestFeedbackBeforeItsSpan: feedback on a completion that is not ingested yet is kept, shows
// on the span at once, and joins its trace and session once the span arrives.
func TestFeedbackBeforeItsSpan(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	a := api.A
	vid := api.EnsurePrompt(t, a, "bot", "Answer.")
	spanID, traceID, sessionID := uuid.NewString(), uuid.NewString(), uuid.NewString()

	early := api.MustDo(t, "POST", feedbackPath("bot", spanID), a.Key, map[string]any{"thumbs_up": false, "reason": "slow"}).Map(t)
	assert.Nil(t, early["prompt_version_id"], "the span is unknown: no linkage yet")
	u := api.MustDo(t, "GET", unifiedPath(a.ProjectID, "span", spanID), a.Key, nil).Map(t)
	assert.Equal(t, 1.0, u["summary"].(map[string]any)["total"])
	res := api.Do(t, "GET", unifiedPath(a.ProjectID, "trace", traceID), a.Key, nil)
	assert.Equal(t, http.StatusNotFound, res.Status, "%s", res.Body)

	api.MustDo(t, "POST", "/spans", a.Key, []any{apitest.LLMSpan(spanID, traceID, sessionID, "bot", vid, "q", "a", time.Now().Add(-time.Minute))})
	for _, entity := range []struct{ kind, id string }{{"trace", traceID}, {"session", sessionID}, {"trace", traceID}} {
		u := api.MustDo(t, "GET", unifiedPath(a.ProjectID, entity.kind, entity.id), a.Key, nil).Map(t)
		items := u["items"].([]any)
		require.Len(t, items, 1, "%s %s", entity.kind, entity.id)
		item := items[0].(map[string]any)
		assert.Equal(t, early["id"], item["id"])
		assert.Equal(t, vid, item["prompt_version_id"], "linkage filled in when the span arrived")
	}
}

// TestCalibrationFeedback: feedback with judge_id is checked against the judge and marks the
// evaluation as having user feedback, whichever arrives first.
func TestCalibrationFeedback(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	a := api.A
	vid := api.EnsurePrompt(t, a, "bot", "Answer.")
	_, spans := ingestTrace(t, api, a, "bot", vid, "", 2)
	jid := api.MustDo(t, "POST", "/projects/"+a.ProjectID+"/judges", a.Key, map[string]any{
		"name": "Tone", "template": "## Politeness\nIs it polite?", "evaluation_type": "scored",
	}).Map(t)["id"].(string)
	evalPath := "/projects/" + a.ProjectID + "/judges/" + jid + "/evaluations"

	// Evaluation first, then calibration.
	api.MustDo(t, "POST", evalPath, a.Key, []any{map[string]any{"span_id": spans[0], "score": 9}})
	fb := api.MustDo(t, "POST", feedbackPath("bot", spans[0]), a.Key, map[string]any{
		"thumbs_up": false, "judge_id": jid, "expected_score": 4, "score_direction": "too_high",
		"criteria_feedback": map[string]any{"politeness": map[string]any{"expected_score": 3, "reason": "curt"}},
	}).Map(t)
	assert.Equal(t, jid, fb["judge_id"])
	assert.Equal(t, "judge", fb["source_type"])
	assert.Equal(t, "too_high", fb["score_direction"])
	// Calibration first, then the evaluation.
	api.MustDo(t, "POST", feedbackPath("bot", spans[1]), a.Key, map[string]any{"thumbs_up": true, "judge_id": jid, "expected_score": 8})
	api.MustDo(t, "POST", evalPath, a.Key, []any{map[string]any{"span_id": spans[1], "score": 8}})

	page := api.MustDo(t, "GET", evalPath+"?feedback_state=with_user_feedback", a.Key, nil).Map(t)
	assert.Equal(t, 2.0, page["total"])
	j := api.MustDo(t, "GET", "/projects/"+a.ProjectID+"/judges/"+jid, a.Key, nil).Map(t)
	assert.Equal(t, 2.0, j["evaluation_count"], "the stub left by early calibration is not an evaluation")

	// Plain and calibration feedback of one user on one span are separate records.
	api.MustDo(t, "POST", feedbackPath("bot", spans[0]), a.Key, map[string]any{"thumbs_up": true})
	u := api.MustDo(t, "GET", unifiedPath(a.ProjectID, "span", spans[0]), a.Key, nil).Map(t)
	assert.Equal(t, map[string]any{"total": 3.0, "human_feedback_count": 2.0, "judge_evaluation_count": 1.0}, u["summary"])
}

func TestFeedbackLinksAPI(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	a := api.A
	api.EnsurePrompt(t, a, "bot", "Answer.")
	l := api.MustDo(t, "POST", "/feedback-links", a.Key, map[string]any{"prompt_slug": "bot", "link_type": "prompt_completion"}).Map(t)
	for _, k := range []string{"id", "url", "prompt_slug", "link_type", "expires_at", "created_at"} {
		assert.Contains(t, l, k)
	}
	// No PLUME_PUBLIC_URL and not in Lambda: a relative URL, never one built from the request's
	// Host (TestLinkURLIgnoresForgedHost).
	assert.Regexp(t, `^/f/plf_[A-Za-z0-9_-]{43}$`, l["url"])
	created, _ := time.Parse(time.RFC3339Nano, l["created_at"].(string))
	expires, _ := time.Parse(time.RFC3339Nano, l["expires_at"].(string))
	assert.Equal(t, 7*24*time.Hour, expires.Sub(created), "default lifetime")

	list := api.MustDo(t, "GET", "/feedback-links", a.Key, nil).Map(t)
	require.Equal(t, 1.0, list["count"])
	listed := list["links"].([]any)[0].(map[string]any)
	assert.NotContains(t, listed, "url", "the token is shown once, at creation")
	assert.Equal(t, "active", listed["status"])

	r := api.MustDo(t, "DELETE", "/feedback-links/"+l["id"].(string), a.Key, nil).Map(t)
	assert.Equal(t, "revoked", r["status"])
	// Project B can neither see nor revoke A's link.
	assert.Equal(t, 0.0, api.MustDo(t, "GET", "/feedback-links", api.B.Key, nil).Map(t)["count"])
	assert.Equal(t, http.StatusNotFound, api.Do(t, "DELETE", "/feedback-links/"+l["id"].(string), api.B.Key, nil).Status)
}

// TestUnifiedFeedbackPagesWithinAnswerBound: a trace whose evaluations add up to more than
// api.MaxAnswerBytes (Lambda's 6 MB once in its envelope) is answered in pages by offset, each
// within the bound, the summary counting every item; walking the next offsets, or reading with
// the Go client, gives every item once, in order.
func TestUnifiedFeedbackPagesWithinAnswerBound(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	a := api.A
	vid := api.EnsurePrompt(t, a, "bot", "Answer.")
	traceID, spans := ingestTrace(t, api, a, "bot", vid, "", 240)
	jid := api.MustDo(t, "POST", "/projects/"+a.ProjectID+"/judges", a.Key, map[string]any{"name": "Long", "template": "Is it right?"}).Map(t)["id"].(string)
	reason := strings.Repeat("why ", judge.MaxReasonBytes/4) // 16 KB: 240 of them are 3.9 MB
	for start := 0; start < len(spans); start += 48 {
		var evals []any
		for _, s := range spans[start : start+48] {
			evals = append(evals, map[string]any{"span_id": s, "evaluation_result": true, "evaluation_reason": reason})
		}
		api.MustDo(t, "POST", "/projects/"+a.ProjectID+"/judges/"+jid+"/evaluations", a.Key, evals)
	}
	path := unifiedPath(a.ProjectID, "trace", traceID)
	var walked []string
	pages := 0
	for offset := ""; ; pages++ {
		res := api.MustDo(t, "GET", path+offset, a.Key, nil)
		require.LessOrEqual(t, len(res.Body), plumeapi.MaxAnswerBytes)
		u := res.Map(t)
		assert.Equal(t, 240.0, u["summary"].(map[string]any)["total"], "the summary counts every item on every page")
		for _, it := range u["items"].([]any) {
			walked = append(walked, it.(map[string]any)["id"].(string))
		}
		next := res.Header.Get(plumeapi.NextOffsetHeader)
		if next == "" {
			break
		}
		offset = "?offset=" + next
	}
	assert.Equal(t, 1, pages, "one cut page, then the rest")
	require.Len(t, walked, 240)
	srv := httptest.NewServer(api.Handler)
	t.Cleanup(srv.Close)
	c, err := client.New(client.WithBaseURL(srv.URL), client.WithAPIKey(a.Key), client.WithProject(a.ProjectID),
		client.WithRetries(0), client.WithEnv(func(string) string { return "" }))
	require.NoError(t, err)
	u, err := c.UnifiedFeedback(context.Background(), "trace", traceID)
	require.NoError(t, err)
	assert.Equal(t, 240, u.Summary.Total)
	var got []string
	for _, it := range u.Items {
		got = append(got, it.Judge.ID)
	}
	assert.Equal(t, walked, got, "the client reads the same items, in order")
}
