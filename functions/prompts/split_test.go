package prompts_test

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
)

// splitFixture is a prompt with versions 1 to 3 and the tag production at 1, in project A of
// an API whose clock the test moves.
type splitFixture struct {
	srv   *apitest.API
	clock *apitest.Clock
	a     apitest.Tenant
}

func newSplitFixture(t *testing.T) splitFixture {
	t.Helper()
	c := apitest.NewClock(time.Now().UTC().Truncate(time.Second))
	srv := apitest.New(t, apitest.Options{Clock: c.Now})
	f := splitFixture{srv: srv, clock: c, a: srv.A}
	for _, content := range []string{"v1: be brief", "v2: be brief and kind", "v3: be kind"} {
		srv.EnsurePrompt(t, f.a, "support-bot", content)
	}
	srv.MustDo(t, "POST", f.tags()+"/production:pin", f.a.Key, map[string]any{"version": 1})
	return f
}

func (f splitFixture) tags() string {
	return "/projects/" + f.a.ProjectID + "/prompts/support-bot/tags"
}

// fetch is the SDK's get_prompt with the sticky parameters (none when empty).
func (f splitFixture) fetch(t *testing.T, sessionID, userID string) (api.PromptVersion, http.Header) {
	t.Helper()
	q := url.Values{"tag": {"production"}}
	if sessionID != "" {
		q.Set(api.PromptSessionParam, sessionID)
	}
	if userID != "" {
		q.Set(api.PromptUserParam, userID)
	}
	res := f.srv.MustDo(t, "GET", "/v1/prompts/support-bot?"+q.Encode(), f.a.Key, nil)
	var v api.PromptVersion
	res.Decode(t, &v)
	return v, res.Header
}

func (f splitFixture) report(t *testing.T, name string) api.ABReport {
	t.Helper()
	var rep api.ABReport
	f.srv.MustDo(t, "GET", "/projects/"+f.a.ProjectID+"/ab-tests/"+name, f.a.Key, nil).Decode(t, &rep)
	return rep
}

// choices is a report's choices by variant.
func choices(rep api.ABReport) map[string]int64 {
	out := map[string]int64{}
	for _, r := range rep.Results {
		out[r.Key] = r.Choices
	}
	return out
}

// TestPromptSplitServesByWeight splits production 70/30 between versions 1 and 2 and fetches
// it for fixed sessions: each version's share of them is within 4 binomial standard
// deviations of its weight, every answer names its variant and choice id and forbids caching,
// the report counts exactly the sessions served each version, and a session's later fetches
// get its version again without a write.
func TestPromptSplitServesByWeight(t *testing.T) {
	f := newSplitFixture(t)
	var sp api.PromptSplit
	f.srv.MustDo(t, "POST", f.tags()+"/production:split", f.a.Key, map[string]any{
		"name": "bot-prod", "duration_days": 7,
		"variants": []map[string]any{{"version": 1, "weight": 0.7}, {"version": 2, "weight": 0.3}},
	}).Decode(t, &sp)
	require.Equal(t, "bot-prod", sp.Test)
	require.Len(t, sp.Variants, 2)
	assert.Equal(t, "v1", sp.Variants[0].Key)
	assert.NotEmpty(t, sp.Variants[1].VersionID)
	assert.Equal(t, f.clock.Now().Add(7*24*time.Hour), sp.EndsAt)

	const sessions = 2000
	served := map[int]int64{}
	versionOf := map[string]int{}
	for i := range sessions {
		id := fmt.Sprintf("session-%05d", i)
		v, h := f.fetch(t, id, "")
		require.NotNil(t, v.ABChoice, "session %s", id)
		require.NotNil(t, v.ABChoice.ABChoiceID)
		assert.Equal(t, "bot-prod", v.ABChoice.ChoiceName)
		assert.Equal(t, fmt.Sprintf("v%d", v.Version), v.ABChoice.VariantKey)
		assert.Equal(t, v.VersionID, v.ABChoice.VariantValue)
		assert.Equal(t, "production", *v.Tag)
		assert.Equal(t, "private, no-store", h.Get("Cache-Control"))
		served[v.Version]++
		versionOf[id] = v.Version
	}
	for n, w := range map[int]float64{1: 0.7, 2: 0.3} {
		sigma := math.Sqrt(sessions * w * (1 - w))
		assert.InDelta(t, sessions*w, float64(served[n]), 4*sigma, "version %d served %d of %d", n, served[n], sessions)
	}
	assert.Equal(t, map[string]int64{"v1": served[1], "v2": served[2]}, choices(f.report(t, "bot-prod")))

	for i := range 200 {
		id := fmt.Sprintf("session-%05d", i)
		f.fetch(t, id, "") // the key's auth cached again (60 s): the 2,000 fetches above may take longer
		f.srv.DDB.Reset()
		v, _ := f.fetch(t, id, "")
		assert.Equal(t, versionOf[id], v.Version, "session %s keeps its version", id)
		assert.Equal(t, map[string]int{"BatchGetItem": 2}, f.srv.DDB.Counts(), "a session's later fetch reads as a plain one and writes nothing")
	}
	assert.Equal(t, map[string]int64{"v1": served[1], "v2": served[2]}, choices(f.report(t, "bot-prod")), "fetched again, counted once")
}

// TestPromptSplitRequests counts the DynamoDB requests of a fetch (the key's auth cached):
// a split adds no request to a plain tag fetch (two), save the one write of a session's first
// fetch.
func TestPromptSplitRequests(t *testing.T) {
	f := newSplitFixture(t)
	f.fetch(t, "", "") // warm the key's cache
	tests := []struct {
		name    string
		split   bool
		session string
		want    map[string]int
	}{
		{"plain tag", false, "s-1", map[string]int{"BatchGetItem": 1, "GetItem": 1}},
		{"split, no key", true, "", map[string]int{"BatchGetItem": 1, "GetItem": 1}},
		{"split, first fetch of a session", true, "s-1", map[string]int{"BatchGetItem": 2, "TransactWriteItems": 1}},
		{"split, the session again", true, "s-1", map[string]int{"BatchGetItem": 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.split {
				f.srv.Do(t, "POST", f.tags()+"/production:split", f.a.Key, map[string]any{"name": "counted", "duration_days": 1,
					"variants": []map[string]any{{"version": 2, "weight": 1}, {"version": 3, "weight": 1}}})
			}
			f.srv.DDB.Reset()
			f.fetch(t, tt.session, "")
			assert.Equal(t, tt.want, f.srv.DDB.Counts())
			t.Logf("%s: %s", tt.name, f.srv.DDB)
		})
	}
}

// TestPromptSplitSticky: a user keeps a version across sessions (the choice is recorded on the
// session, whose signals then join the variant); a signal set on a session before its first
// fetch is added to the variant it is served.
func TestPromptSplitSticky(t *testing.T) {
	f := newSplitFixture(t)
	f.srv.MustDo(t, "POST", f.tags()+"/production:split", f.a.Key, map[string]any{"name": "sticky", "duration_days": 3,
		"variants": []map[string]any{{"version": 1, "weight": 1}, {"version": 2, "weight": 1}, {"version": 3, "weight": 1}}})
	for u := range 20 {
		user := fmt.Sprintf("user-%d", u)
		first, _ := f.fetch(t, user+"-s0", user)
		for s := 1; s < 4; s++ {
			v, _ := f.fetch(t, fmt.Sprintf("%s-s%d", user, s), user)
			assert.Equal(t, first.Version, v.Version, "user %s, session %d", user, s)
		}
	}
	assert.Equal(t, int64(80), sum(choices(f.report(t, "sticky"))), "each session recorded once")

	f.srv.MustDo(t, "POST", "/signals/bulk", f.a.Key, map[string]any{"signals": []map[string]any{
		{"entity_type": "session", "entity_id": "early", "name": "converted", "value": true, "signal_type": "boolean"}}})
	v, _ := f.fetch(t, "early", "")
	rep := f.report(t, "sticky")
	for _, r := range rep.Results {
		if r.Key == v.ABChoice.VariantKey {
			require.Len(t, r.Signals, 1)
			assert.Equal(t, "converted", r.Signals[0].Name)
			assert.Equal(t, int64(1), r.Signals[0].N)
		} else {
			assert.Empty(t, r.Signals)
		}
	}
}

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// TestPromptSplitEnds: ending a split, or its duration passing, serves the tag's own version
// again, without a choice or the no-store header; the test is then completed. Another split
// can start once one has ended, not while it runs.
func TestPromptSplitEnds(t *testing.T) {
	f := newSplitFixture(t)
	body := func(name string) map[string]any {
		return map[string]any{"name": name, "duration_days": 2, "variants": []map[string]any{{"version": 2, "weight": 1}, {"version": 3, "weight": 0}}}
	}
	f.srv.MustDo(t, "POST", f.tags()+"/production:split", f.a.Key, body("first"))
	res := f.srv.Do(t, "POST", f.tags()+"/production:split", f.a.Key, body("second"))
	assert.Equal(t, http.StatusConflict, res.Status, "%s", res.Body)
	v, _ := f.fetch(t, "s", "")
	require.Equal(t, 2, v.Version)

	var tags []api.PromptTag
	f.srv.MustDo(t, "GET", f.tags(), f.a.Key, nil).Decode(t, &tags)
	require.Len(t, tags, 2)
	require.NotNil(t, tags[1].Split)
	assert.Equal(t, "first", tags[1].Split.Test)
	assert.Equal(t, 1, tags[1].Version, "the tag itself stays where it was pinned")

	var ended api.PromptSplit
	f.srv.MustDo(t, "POST", f.tags()+"/production:end-split", f.a.Key, nil).Decode(t, &ended)
	assert.Equal(t, api.ABCompleted, ended.Status)
	v, h := f.fetch(t, "s", "")
	assert.Equal(t, 1, v.Version)
	assert.Nil(t, v.ABChoice)
	assert.Empty(t, h.Get("Cache-Control"))
	rep := f.report(t, "first")
	assert.Equal(t, api.ABCompleted, rep.Status)
	assert.True(t, rep.Decided)
	assert.Equal(t, "support-bot", rep.Prompt)
	assert.Equal(t, "production", rep.Tag)
	assert.Equal(t, http.StatusNotFound, f.srv.Do(t, "POST", f.tags()+"/production:end-split", f.a.Key, nil).Status)
	assert.Equal(t, http.StatusConflict, f.srv.Do(t, "POST", f.tags()+"/production:split", f.a.Key, body("first")).Status, "test names are unique")

	f.srv.MustDo(t, "POST", f.tags()+"/production:split", f.a.Key, body("second"))
	v, _ = f.fetch(t, "s", "")
	require.Equal(t, 2, v.Version)
	f.clock.Add(2*24*time.Hour + time.Second)
	v, _ = f.fetch(t, "s", "")
	assert.Equal(t, 1, v.Version, "past its duration the split serves nothing")
	assert.Nil(t, v.ABChoice)
	var after []api.PromptTag
	f.srv.MustDo(t, "GET", f.tags(), f.a.Key, nil).Decode(t, &after)
	assert.Nil(t, after[1].Split)
	f.srv.MustDo(t, "POST", f.tags()+"/production:split", f.a.Key, body("third"))
}

// TestPromptSplitRefused: bad splits are 400 or 404, an ingest key may fetch but not split,
// and another project sees neither the prompt nor its test.
func TestPromptSplitRefused(t *testing.T) {
	f := newSplitFixture(t)
	two := []map[string]any{{"version": 1, "weight": 1}, {"version": 2, "weight": 1}}
	tests := []struct {
		name string
		path string
		body any
		want int
	}{
		{"one variant", "/production:split", map[string]any{"duration_days": 1, "variants": two[:1]}, http.StatusBadRequest},
		{"a version twice", "/production:split", map[string]any{"duration_days": 1, "variants": []map[string]any{two[0], two[0]}}, http.StatusBadRequest},
		{"weights all zero", "/production:split", map[string]any{"duration_days": 1, "variants": []map[string]any{{"version": 1, "weight": 0}, {"version": 2, "weight": 0}}}, http.StatusBadRequest},
		{"negative weight", "/production:split", map[string]any{"duration_days": 1, "variants": []map[string]any{{"version": 1, "weight": -1}, {"version": 2, "weight": 2}}}, http.StatusBadRequest},
		{"no duration", "/production:split", map[string]any{"variants": two}, http.StatusBadRequest},
		{"fractional duration", "/production:split", map[string]any{"duration_days": 1.5, "variants": two}, http.StatusBadRequest},
		{"bad name", "/production:split", map[string]any{"name": "a/b", "duration_days": 1, "variants": two}, http.StatusBadRequest},
		{"latest", "/latest:split", map[string]any{"duration_days": 1, "variants": two}, http.StatusBadRequest},
		{"unknown tag", "/staging:split", map[string]any{"duration_days": 1, "variants": two}, http.StatusNotFound},
		{"unknown version", "/production:split", map[string]any{"duration_days": 1, "variants": []map[string]any{two[0], {"version": 9, "weight": 1}}}, http.StatusNotFound},
		{"unknown action", "/production:fork", map[string]any{}, http.StatusNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := f.srv.Do(t, "POST", f.tags()+tt.path, f.a.Key, tt.body)
			assert.Equal(t, tt.want, res.Status, "%s", res.Body)
		})
	}
	res := f.srv.Do(t, "GET", "/v1/prompts/support-bot?tag=production&session_id="+url.QueryEscape("a\x01b"), f.a.Key, nil)
	assert.Equal(t, http.StatusBadRequest, res.Status)

	f.srv.MustDo(t, "POST", f.tags()+"/production:split", f.a.Key, map[string]any{"name": "mine", "duration_days": 1, "variants": two})
	b := f.srv.B
	assert.Equal(t, http.StatusNotFound, f.srv.Do(t, "GET", "/v1/prompts/support-bot?tag=production&session_id=x", b.Key, nil).Status)
	assert.Equal(t, http.StatusNotFound, f.srv.Do(t, "GET", "/projects/"+b.ProjectID+"/ab-tests/mine", b.Key, nil).Status)
	assert.Equal(t, http.StatusForbidden, f.srv.Do(t, "POST", f.tags()+"/production:end-split", b.Key, nil).Status)
}

// TestPromptSplitSessionByTheSDKsID: a split fetched with a session id that is not a UUID
// serves and records the session ingestion stores under its uuid5: fetched again by the uuid5
// it gets the same version and choice id with nothing more counted, and the session's signals,
// sent under the raw id, count in its variant and are shown on GET /sessions/{uuid5}.
func TestPromptSplitSessionByTheSDKsID(t *testing.T) {
	f := newSplitFixture(t)
	f.srv.MustDo(t, "POST", f.tags()+"/production:split", f.a.Key, map[string]any{"name": "by-session", "duration_days": 3,
		"variants": []map[string]any{{"version": 1, "weight": 1}, {"version": 2, "weight": 1}, {"version": 3, "weight": 1}}})
	for i := range 12 {
		raw := fmt.Sprintf("chat %d", i)
		canonical := uuid.NewSHA1(uuid.NameSpaceDNS, []byte(raw)).String()
		byRaw, _ := f.fetch(t, raw, "")
		byUUID, _ := f.fetch(t, canonical, "")
		require.NotNil(t, byRaw.ABChoice)
		require.NotNil(t, byRaw.ABChoice.ABChoiceID)
		assert.Equal(t, byRaw.Version, byUUID.Version, "session %q", raw)
		assert.Equal(t, *byRaw.ABChoice.ABChoiceID, *byUUID.ABChoice.ABChoiceID, "session %q", raw)
	}
	assert.Equal(t, int64(12), sum(choices(f.report(t, "by-session"))), "each session recorded once")

	raw := "chat 0"
	canonical := uuid.NewSHA1(uuid.NameSpaceDNS, []byte(raw)).String()
	v, _ := f.fetch(t, raw, "")
	f.srv.MustDo(t, "POST", "/signals/bulk", f.a.Key, map[string]any{"signals": []map[string]any{
		{"entity_type": "session", "entity_id": raw, "name": "converted", "value": true}}})
	for _, r := range f.report(t, "by-session").Results {
		if r.Key == v.ABChoice.VariantKey {
			require.Len(t, r.Signals, 1, r.Key)
			assert.Equal(t, int64(1), r.Signals[0].N)
		} else {
			assert.Empty(t, r.Signals, r.Key)
		}
	}
	at := float64(time.Now().UnixMicro()) / 1e6
	f.srv.MustDo(t, "POST", "/spans", f.a.Key, []any{map[string]any{"id": uuid.NewString(), "trace_id": uuid.NewString(),
		"session_id": raw, "name": "turn", "started_at": at, "ended_at": at + 1}})
	var sess api.SessionWithSignals
	f.srv.MustDo(t, "GET", "/sessions/"+canonical, f.a.Key, nil).Decode(t, &sess)
	require.Len(t, sess.Signals, 1)
	assert.Equal(t, "converted", sess.Signals[0].Name)
}
