package feedback_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/auth"
)

func completionsPath(pid, slug string, q url.Values) string {
	p := "/projects/" + pid + "/prompts/" + slug + "/completions"
	if len(q) > 0 {
		p += "?" + q.Encode()
	}
	return p
}

// completionsFixture is a prompt "bot" of tenant A with five completions of version 1, each
// ingested in a batch of its own, then three of version 2 in one batch, all newer; a completion
// of another prompt; a judge linked to "bot" that evaluated two of them; feedback on two.
type completionsFixture struct {
	api        *apitest.API
	v1, v2     string
	byVersion  map[int][]string // span ids, oldest first
	judgeID    string
	longInput  string
	otherSpan  string
	secretSpan string // tenant B's
}

func newCompletionsFixture(t *testing.T) completionsFixture {
	t.Helper()
	f := completionsFixture{api: apitest.New(t, apitest.Options{}), byVersion: map[int][]string{}}
	a := f.api.A
	f.v1 = f.api.EnsurePrompt(t, a, "bot", "Answer.")
	f.v2 = f.api.EnsurePrompt(t, a, "bot", "Answer briefly.")
	f.api.EnsurePrompt(t, a, "other", "Other.")
	base := time.Now().Add(-2 * time.Hour)
	f.longInput = strings.Repeat("é", 1600) // 3,200 bytes
	for i := range 5 {
		id := uuid.NewString()
		in := fmt.Sprintf("q%d <script>alert(1)</script>", i)
		if i == 0 {
			in = f.longInput
		}
		f.api.MustDo(t, "POST", "/spans", a.Key, []any{apitest.LLMSpan(id, uuid.NewString(), "", "bot", f.v1, in, fmt.Sprintf("a%d", i), base.Add(time.Duration(i)*time.Minute))})
		f.byVersion[1] = append(f.byVersion[1], id)
	}
	var batch []any
	for i := range 3 {
		id := uuid.NewString()
		batch = append(batch, apitest.LLMSpan(id, uuid.NewString(), "", "bot", f.v2, fmt.Sprintf("q2-%d", i), "a", base.Add(time.Hour+time.Duration(i)*time.Minute)))
		f.byVersion[2] = append(f.byVersion[2], id)
	}
	f.api.MustDo(t, "POST", "/spans", a.Key, batch)
	f.otherSpan = uuid.NewString()
	f.api.MustDo(t, "POST", "/spans", a.Key, []any{apitest.LLMSpan(f.otherSpan, uuid.NewString(), "", "other", "", "q", "a", base.Add(90*time.Minute))})

	b := f.api.B
	bv := f.api.EnsurePrompt(t, b, "secret", "B's.")
	f.secretSpan = uuid.NewString()
	f.api.MustDo(t, "POST", "/spans", b.Key, []any{apitest.LLMSpan(f.secretSpan, uuid.NewString(), "", "secret", bv, "b-input", "b-output", base)})

	j := f.api.MustDo(t, "POST", "/projects/"+a.ProjectID+"/judges", a.Key, map[string]any{
		"name": "Tone", "template": "**Tone**: polite", "evaluation_type": "scored", "score_min": 1, "score_max": 5,
	}).Map(t)
	f.judgeID = j["id"].(string)
	f.api.MustDo(t, "PUT", "/projects/"+a.ProjectID+"/prompts/bot/judges/"+f.judgeID, a.Key, nil)
	f.api.MustDo(t, "POST", "/projects/"+a.ProjectID+"/judges/"+f.judgeID+"/evaluations", a.Key, []any{
		map[string]any{"span_id": f.byVersion[2][2], "score": 5, "evaluation_reason": "polite"},
		map[string]any{"span_id": f.byVersion[1][4], "score": 1, "evaluation_reason": "rude"},
	})
	f.api.MustDo(t, "POST", feedbackPath("bot", f.byVersion[2][2]), a.Key, map[string]any{"thumbs_up": true, "reason": "great <b>answer</b>"})
	f.api.MustDo(t, "POST", feedbackPath("bot", f.byVersion[1][0]), a.Key, map[string]any{"thumbs_up": false})
	return f
}

func (f completionsFixture) list(t *testing.T, q url.Values) api.CompletionList {
	t.Helper()
	var out api.CompletionList
	f.api.MustDo(t, "GET", completionsPath(f.api.A.ProjectID, "bot", q), f.api.A.Key, nil).Decode(t, &out)
	return out
}

func TestPromptCompletions(t *testing.T) {
	f := newCompletionsFixture(t)
	a := f.api.A
	newestFirst := []string{f.byVersion[2][2], f.byVersion[2][1], f.byVersion[2][0], f.byVersion[1][4], f.byVersion[1][3], f.byVersion[1][2], f.byVersion[1][1], f.byVersion[1][0]}

	t.Run("newest first, with versions, feedback and evaluations", func(t *testing.T) {
		f.api.DDB.Reset()
		f.api.S3.Reset()
		page := f.list(t, nil)
		// The prompt and version, the completions index, the summaries, the judges, the
		// versions and evaluations, the feedback: 6 requests for the page, however many
		// completions it holds.
		assert.Equal(t, 6, f.api.DDB.Total(), "DynamoDB requests: %s", f.api.DDB)
		// One ranged GetObject per span batch object: the page's 8 completions came in 6 batches.
		assert.LessOrEqual(t, f.api.S3.Count("GetObject"), 6, "S3 GetObject requests")
		assert.Equal(t, api.DefaultCompletionsLimit, page.Limit)
		assert.Nil(t, page.NextCursor)
		var ids []string
		for _, c := range page.Completions {
			ids = append(ids, c.SpanID)
		}
		require.Equal(t, newestFirst, ids)
		byID := map[string]api.Completion{}
		for _, c := range page.Completions {
			byID[c.SpanID] = c
			assert.NotEmpty(t, c.TraceID)
			assert.NotNil(t, c.EndedAt)
			require.NotNil(t, c.Model)
			assert.Equal(t, "gpt-4o-mini", *c.Model)
		}
		top := byID[f.byVersion[2][2]]
		require.NotNil(t, top.PromptVersion)
		assert.Equal(t, 2, *top.PromptVersion)
		assert.Equal(t, f.v2, *top.PromptVersionID)
		require.Len(t, top.Feedback, 1)
		assert.True(t, top.Feedback[0].ThumbsUp)
		assert.Equal(t, "great <b>answer</b>", *top.Feedback[0].Reason)
		assert.Equal(t, a.UserID, top.Feedback[0].CreatedBy.ID)
		require.Len(t, top.Evaluations, 1)
		assert.Equal(t, f.judgeID, top.Evaluations[0].JudgeID)
		assert.Equal(t, "Tone", top.Evaluations[0].JudgeName)
		assert.Equal(t, 5.0, *top.Evaluations[0].Score)
		assert.True(t, top.Evaluations[0].EvaluationResult)
		assert.Equal(t, "polite", top.Evaluations[0].EvaluationReason)

		rude := byID[f.byVersion[1][4]]
		assert.Equal(t, 1, *rude.PromptVersion)
		assert.Empty(t, rude.Feedback)
		require.Len(t, rude.Evaluations, 1)
		assert.False(t, rude.Evaluations[0].EvaluationResult)

		oldest := byID[f.byVersion[1][0]]
		require.Len(t, oldest.Feedback, 1)
		assert.False(t, oldest.Feedback[0].ThumbsUp)
		assert.Nil(t, oldest.Feedback[0].Reason)
		assert.Empty(t, oldest.Evaluations)
		assert.True(t, oldest.Input.Cut)
		assert.Equal(t, len(f.longInput), oldest.Input.Bytes)
		assert.LessOrEqual(t, len(*oldest.Input.Text), api.CompletionExcerptBytes)
		assert.True(t, strings.HasPrefix(f.longInput, *oldest.Input.Text))
		assert.False(t, oldest.Output.Cut)
		assert.Equal(t, "a0", *oldest.Output.Text)
	})

	t.Run("pages", func(t *testing.T) {
		var ids []string
		q := url.Values{"limit": {"3"}}
		for pages := 1; ; pages++ {
			require.LessOrEqual(t, pages, 3, "8 completions in pages of 3")
			f.api.DDB.Reset()
			page := f.list(t, q)
			assert.LessOrEqual(t, f.api.DDB.Total(), 6, "DynamoDB requests: %s", f.api.DDB)
			assert.LessOrEqual(t, len(page.Completions), 3)
			for _, c := range page.Completions {
				ids = append(ids, c.SpanID)
			}
			if page.NextCursor == nil {
				break
			}
			q.Set("cursor", *page.NextCursor)
		}
		assert.Equal(t, newestFirst, ids)
	})

	t.Run("version filter", func(t *testing.T) {
		var ids []string
		q := url.Values{"limit": {"2"}, "version": {"1"}}
		for pages := 1; ; pages++ {
			require.LessOrEqual(t, pages, 4)
			page := f.list(t, q)
			for _, c := range page.Completions {
				assert.Equal(t, 1, *c.PromptVersion)
				assert.Equal(t, f.v1, *c.PromptVersionID)
				ids = append(ids, c.SpanID)
			}
			if page.NextCursor == nil {
				break
			}
			q.Set("cursor", *page.NextCursor)
		}
		assert.Equal(t, newestFirst[3:], ids)
		v2 := f.list(t, url.Values{"version": {"2"}})
		assert.Len(t, v2.Completions, 3)
	})

	t.Run("a prompt without completions", func(t *testing.T) {
		f.api.EnsurePrompt(t, a, "quiet", "Shh.")
		var out api.CompletionList
		f.api.MustDo(t, "GET", completionsPath(a.ProjectID, "quiet", nil), a.Key, nil).Decode(t, &out)
		assert.NotNil(t, out.Completions)
		assert.Empty(t, out.Completions)
		assert.Nil(t, out.NextCursor)
	})

	ingest, key, err := auth.NewKey(auth.KeySpec{ProjectID: a.ProjectID, Role: auth.RoleIngest}, time.Now())
	require.NoError(t, err)
	require.NoError(t, f.api.Auth.CreateKey(t.Context(), key))
	tests := []struct {
		name   string
		path   string
		key    string
		status int
		want   string
	}{
		{"another project's prompt", completionsPath(a.ProjectID, "secret", nil), a.Key, http.StatusNotFound, "secret"},
		{"another project's path", completionsPath(f.api.B.ProjectID, "secret", nil), a.Key, http.StatusForbidden, ""},
		{"an ingest key", completionsPath(a.ProjectID, "bot", nil), ingest, http.StatusForbidden, "ingest"},
		{"an unknown prompt", completionsPath(a.ProjectID, "nope", nil), a.Key, http.StatusNotFound, "nope"},
		{"an unknown version", completionsPath(a.ProjectID, "bot", url.Values{"version": {"9"}}), a.Key, http.StatusNotFound, "version 9"},
		{"limit 0", completionsPath(a.ProjectID, "bot", url.Values{"limit": {"0"}}), a.Key, http.StatusBadRequest, "limit"},
		{"limit 51", completionsPath(a.ProjectID, "bot", url.Values{"limit": {"51"}}), a.Key, http.StatusBadRequest, "limit"},
		{"limit not a number", completionsPath(a.ProjectID, "bot", url.Values{"limit": {"ten"}}), a.Key, http.StatusBadRequest, "limit"},
		{"version 0", completionsPath(a.ProjectID, "bot", url.Values{"version": {"0"}}), a.Key, http.StatusBadRequest, "version"},
		{"cursor not base64", completionsPath(a.ProjectID, "bot", url.Values{"cursor": {"!!"}}), a.Key, http.StatusBadRequest, "cursor"},
		{"cursor of nothing", completionsPath(a.ProjectID, "bot", url.Values{"cursor": {"aGVsbG8"}}), a.Key, http.StatusBadRequest, "cursor"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := f.api.Do(t, "GET", tt.path, tt.key, nil)
			assert.Equal(t, tt.status, res.Status, "%s", res.Body)
			assert.Contains(t, string(res.Body), tt.want)
			for _, leak := range []string{f.secretSpan, "b-input", "b-output", f.otherSpan} {
				assert.NotContains(t, string(res.Body), leak)
			}
		})
	}
}

// TestPromptCompletionsFullPage: a page of 50 completions from 10 batches, each with feedback and
// an evaluation, costs the same 6 DynamoDB requests as a page of one.
func TestPromptCompletionsFullPage(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	a := api.A
	vid := api.EnsurePrompt(t, a, "bot", "Answer.")
	jid := api.MustDo(t, "POST", "/projects/"+a.ProjectID+"/judges", a.Key, map[string]any{"name": "Pass", "template": "**Ok**: fine"}).Map(t)["id"].(string)
	api.MustDo(t, "PUT", "/projects/"+a.ProjectID+"/prompts/bot/judges/"+jid, a.Key, nil)
	var evals []any
	for range 10 {
		_, ids := ingestTrace(t, api, a, "bot", vid, "", 6)
		for _, id := range ids {
			api.MustDo(t, "POST", feedbackPath("bot", id), a.Key, map[string]any{"thumbs_up": true})
			evals = append(evals, map[string]any{"span_id": id, "evaluation_result": true})
		}
	}
	api.MustDo(t, "POST", "/projects/"+a.ProjectID+"/judges/"+jid+"/evaluations", a.Key, evals)

	api.DDB.Reset()
	res := api.MustDo(t, "GET", completionsPath(a.ProjectID, "bot", url.Values{"limit": {"50"}}), a.Key, nil)
	assert.Equal(t, 6, api.DDB.Total(), "DynamoDB requests: %s", api.DDB)
	var page struct {
		Completions []struct {
			Feedback    []any `json:"feedback"`
			Evaluations []any `json:"evaluations"`
		} `json:"completions"`
		NextCursor *string `json:"next_cursor"`
	}
	res.Decode(t, &page)
	require.Len(t, page.Completions, 50)
	require.NotNil(t, page.NextCursor)
	for _, c := range page.Completions {
		assert.Len(t, c.Feedback, 1)
		assert.Len(t, c.Evaluations, 1)
	}
}

// TestResentCompletionListedOnce: an llm span sent again with a changed field (an SDK ending it
// in a second POST, a retry with a later ended_at) stays one completion, answered with what the
// later write changed, in the place of its latest write. The list answered 500 for good once a
// span was re-sent.
func TestResentCompletionListedOnce(t *testing.T) {
	srv := apitest.New(t, apitest.Options{})
	a := srv.A
	v := srv.EnsurePrompt(t, a, "bot", "Answer.")
	at := time.Now().Add(-time.Hour)
	first, second := uuid.NewString(), uuid.NewString()
	span := apitest.LLMSpan(first, uuid.NewString(), "", "bot", v, "q1", "a1", at.Add(time.Minute))
	srv.MustDo(t, "POST", "/spans", a.Key, []any{span, apitest.LLMSpan(second, uuid.NewString(), "", "bot", v, "q2", "a2", at)})
	srv.MustDo(t, "GET", completionsPath(a.ProjectID, "bot", nil), a.Key, nil)

	span["output_data"] = "a1, ended"
	srv.MustDo(t, "POST", "/spans", a.Key, []any{span})
	srv.MustDo(t, "POST", "/spans", a.Key, []any{span}) // and once more, unchanged
	for _, limit := range []string{"1", "2", "50"} {
		t.Run("limit "+limit, func(t *testing.T) {
			var ids []string
			q := url.Values{"limit": {limit}}
			for range 4 {
				var page api.CompletionList
				srv.MustDo(t, "GET", completionsPath(a.ProjectID, "bot", q), a.Key, nil).Decode(t, &page)
				for _, c := range page.Completions {
					ids = append(ids, c.SpanID)
					if c.SpanID == first {
						require.NotNil(t, c.Output.Text)
						assert.Equal(t, "a1, ended", *c.Output.Text)
					}
				}
				if page.NextCursor == nil {
					break
				}
				q.Set("cursor", *page.NextCursor)
			}
			assert.Equal(t, []string{first, second}, ids, "newest write first, each once")
		})
	}
}
