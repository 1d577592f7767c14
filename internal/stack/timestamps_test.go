package stack_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/apitest"
)

// TestWriteAnswersWhatReadsAnswer: the times a write answers are the ones a later read of the
// same object answers, to the character (issue 11: writes answered nanoseconds, reads the
// microseconds the table keeps).
func TestWriteAnswersWhatReadsAnswer(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	a := api.A
	pp := "/projects/" + a.ProjectID
	field := func(m map[string]any, name string) string {
		t.Helper()
		v, ok := m[name].(string)
		require.True(t, ok, "%s in %v", name, m)
		return v
	}
	find := func(list []any, key, value string) map[string]any {
		t.Helper()
		for _, it := range list {
			if m := it.(map[string]any); m[key] == value {
				return m
			}
		}
		t.Fatalf("no %s %s in %v", key, value, list)
		return nil
	}
	type pair struct{ name, wrote, read string }
	var pairs []pair

	version := api.MustDo(t, "POST", "/v1/tasks/bot/prompt/versions/ensure", a.Key, map[string]any{"content": "Answer."}).Map(t)
	got := api.MustDo(t, "GET", "/v1/prompts/bot", a.Key, nil).Map(t)
	pairs = append(pairs, pair{"prompt version created_at", field(version, "created_at"), field(got, "created_at")})

	bound := api.MustDo(t, "PATCH", pp+"/prompts/bot/versions/1", a.Key, map[string]any{"model_id": "gpt-4o"}).Map(t)
	versions := api.MustDo(t, "GET", pp+"/prompts/bot/versions", a.Key, nil)
	var list []any
	versions.Decode(t, &list)
	pairs = append(pairs, pair{"bound version updated_at", field(bound, "updated_at"), field(find(list, "id", field(version, "id")), "updated_at")})

	judge := api.MustDo(t, "POST", pp+"/judges", a.Key, map[string]any{"name": "J", "template": "ok?"}).Map(t)
	jid := field(judge, "id")
	readJudge := api.MustDo(t, "GET", pp+"/judges/"+jid, a.Key, nil).Map(t)
	pairs = append(pairs, pair{"judge created_at", field(judge, "created_at"), field(readJudge, "created_at")})
	patched := api.MustDo(t, "PATCH", pp+"/judges/"+jid, a.Key, map[string]any{"paused": true}).Map(t)
	readJudge = api.MustDo(t, "GET", pp+"/judges/"+jid, a.Key, nil).Map(t)
	pairs = append(pairs, pair{"judge updated_at", field(patched, "updated_at"), field(readJudge, "updated_at")})

	spanID, traceID := uuid.NewString(), uuid.NewString()
	api.MustDo(t, "POST", "/spans", a.Key, []any{apitest.LLMSpan(spanID, traceID, "", "bot", field(version, "id"), "in", "out", time.Now())})
	rec := api.MustDo(t, "POST", pp+"/judges/"+jid+"/evaluations", a.Key, []any{map[string]any{"span_id": spanID, "evaluation_result": true}}).Map(t)
	wroteEv := rec["evaluations"].([]any)[0].(map[string]any)
	readEv := api.MustDo(t, "GET", pp+"/spans/"+spanID+"/evaluations", a.Key, nil).Map(t)["evaluations"].([]any)[0].(map[string]any)
	pairs = append(pairs, pair{"evaluation created_at", field(wroteEv, "created_at"), field(readEv, "created_at")})

	fb := api.MustDo(t, "POST", "/v1/prompts/bot/completions/"+spanID+"/feedback", a.Key, map[string]any{"thumbs_up": true}).Map(t)
	unified := api.MustDo(t, "GET", pp+"/feedback/span/"+spanID, a.Key, nil).Map(t)
	readFb := find(unified["items"].([]any), "kind", "human_feedback")
	pairs = append(pairs, pair{"feedback created_at", field(fb, "created_at"), field(readFb, "created_at")})

	link := api.MustDo(t, "POST", "/feedback-links", a.Key, map[string]any{"prompt_slug": "bot", "link_type": "prompt_completion"}).Map(t)
	links := api.MustDo(t, "GET", "/feedback-links", a.Key, nil).Map(t)
	var linkList []any
	for _, k := range []string{"links", "feedback_links", "items"} {
		if l, ok := links[k].([]any); ok {
			linkList = l
		}
	}
	readLink := find(linkList, "id", field(link, "id"))
	pairs = append(pairs, pair{"link created_at", field(link, "created_at"), field(readLink, "created_at")})
	pairs = append(pairs, pair{"link expires_at", field(link, "expires_at"), field(readLink, "expires_at")})

	var wroteSpans, readSpans []map[string]any
	api.MustDo(t, "POST", "/spans", a.Key, []any{map[string]any{"id": uuid.NewString(), "trace_id": traceID, "name": "s2", "started_at": time.Now().Format(time.RFC3339Nano)}}).Decode(t, &wroteSpans)
	api.MustDo(t, "GET", "/spans?id="+field(wroteSpans[0], "id"), a.Key, nil).Decode(t, &readSpans)
	require.Len(t, readSpans, 1)
	for _, name := range []string{"created_at", "updated_at", "started_at"} {
		pairs = append(pairs, pair{"span " + name, field(wroteSpans[0], name), field(readSpans[0], name)})
	}
	var wroteTraces, readTraces []map[string]any
	tid := uuid.NewString()
	api.MustDo(t, "POST", "/traces", a.Key, []any{map[string]any{"id": tid, "session_id": "chat-1", "name": "t", "started_at": time.Now().Format(time.RFC3339Nano)}}).Decode(t, &wroteTraces)
	api.MustDo(t, "GET", "/traces?id="+tid, a.Key, nil).Decode(t, &readTraces)
	require.Len(t, readTraces, 1)
	for _, name := range []string{"created_at", "updated_at", "started_at"} {
		pairs = append(pairs, pair{"trace " + name, field(wroteTraces[0], name), field(readTraces[0], name)})
	}
	var wroteSessions, readSessions []map[string]any
	api.MustDo(t, "POST", "/sessions", a.Key, []any{map[string]any{"project_id": a.ProjectID, "id": "chat-2", "name": "s"}}).Decode(t, &wroteSessions)
	api.MustDo(t, "GET", "/sessions?id="+field(wroteSessions[0], "id"), a.Key, nil).Decode(t, &readSessions)
	require.Len(t, readSessions, 1)
	for _, name := range []string{"created_at", "updated_at"} {
		pairs = append(pairs, pair{"session " + name, field(wroteSessions[0], name), field(readSessions[0], name)})
	}
	price := api.MustDo(t, "PUT", pp+"/model-prices/my-model", a.Key, map[string]any{"input": 1, "output": 2}).Map(t)
	readPrice := api.MustDo(t, "GET", pp+"/model-prices/my-model", a.Key, nil).Map(t)
	pairs = append(pairs, pair{"price updated_at", field(price, "updated_at"), field(readPrice, "updated_at")})
	issued := api.Do(t, "POST", pp+"/api-keys", a.Key, map[string]any{"role": "ingest", "expires_at": time.Now().Add(time.Hour).Format(time.RFC3339Nano)})
	require.Equal(t, http.StatusOK, issued.Status, "%s", issued.Body)
	key := issued.Map(t)
	readKey := find(api.MustDo(t, "GET", pp+"/api-keys", a.Key, nil).Map(t)["keys"].([]any), "id", field(key, "id"))
	for _, name := range []string{"created_at", "expires_at"} {
		pairs = append(pairs, pair{"API key " + name, field(key, name), field(readKey, name)})
	}
	revoked := api.MustDo(t, "DELETE", pp+"/api-keys/"+field(key, "id"), a.Key, nil).Map(t)
	readKey = find(api.MustDo(t, "GET", pp+"/api-keys", a.Key, nil).Map(t)["keys"].([]any), "id", field(key, "id"))
	pairs = append(pairs, pair{"API key revoked_at", field(revoked, "revoked_at"), field(readKey, "revoked_at")})
	pin := api.MustDo(t, "POST", pp+"/prompts/bot/tags/production:pin", a.Key, map[string]any{"version": 1}).Map(t)
	var tags []any
	api.MustDo(t, "GET", pp+"/prompts/bot/tags", a.Key, nil).Decode(t, &tags)
	if u, ok := pin["updated_at"].(string); ok {
		pairs = append(pairs, pair{"tag updated_at", u, field(find(tags, "tag", "production"), "updated_at")})
	} else {
		t.Logf("pin answers %v", pin)
	}

	for _, p := range pairs {
		assert.Equal(t, p.wrote, p.read, p.name)
	}
}
