package signals_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
)

// TestSplitSpansJoinTheirVersion: sessions fetch a prompt tag split between two versions (by
// their session id, as an application passes it), and each makes an llm span with the version
// it was served, linked as the SDK links it; the spans' feedback counts for the served version
// in the split's report, though no span carries the choice in ab_choices. A span of a session
// made with a version it was not served (the application pinned one itself), and a span of a
// session that never fetched the split, count nowhere; draining the stream again counts
// nothing twice.
func TestSplitSpansJoinTheirVersion(t *testing.T) {
	srv := apitest.New(t, apitest.Options{})
	a := srv.A
	ids := map[int]string{1: srv.EnsurePrompt(t, a, "bot", "v1: be brief"), 2: srv.EnsurePrompt(t, a, "bot", "v2: be kind")}
	tags := "/projects/" + a.ProjectID + "/prompts/bot/tags"
	srv.MustDo(t, "POST", tags+"/production:pin", a.Key, map[string]any{"version": 1})
	srv.MustDo(t, "POST", tags+"/production:split", a.Key, map[string]any{"name": "bot-kind", "duration_days": 7,
		"variants": []map[string]any{{"version": 1, "weight": 0.5}, {"version": 2, "weight": 0.5}}})

	served := map[string]int64{}
	var spans []map[string]any
	var thumbs []string
	at := time.Now().Add(-time.Minute)
	for i := range 12 {
		session := fmt.Sprintf("conversation-%02d", i)
		var v api.PromptVersion
		srv.MustDo(t, "GET", "/v1/prompts/bot?tag=production&session_id="+session, a.Key, nil).Decode(t, &v)
		require.NotNil(t, v.ABChoice)
		served[v.ABChoice.VariantKey]++
		span := uuid.NewString()
		spans = append(spans, apitest.LLMSpan(span, uuid.NewString(), session, "bot", v.VersionID, "q", "a", at))
		thumbs = append(thumbs, span)
		if i == 0 { // the same session, a version it was not served
			other := ids[3-v.Version]
			spans = append(spans, apitest.LLMSpan(uuid.NewString(), uuid.NewString(), session, "bot", other, "q", "a", at))
		}
	}
	require.Len(t, served, 2, "both versions served: %v", served)
	stranger := uuid.NewString() // a session that never fetched the split
	spans = append(spans, apitest.LLMSpan(stranger, uuid.NewString(), "conversation-stranger", "bot", ids[2], "q", "a", at))
	srv.MustDo(t, "POST", "/spans", a.Key, spans)
	srv.DrainStream(t)
	for _, s := range append(thumbs, spans[1]["id"].(string), stranger) {
		srv.MustDo(t, "POST", "/v1/prompts/bot/completions/"+s+"/feedback", a.Key, map[string]any{"thumbs_up": true})
	}
	srv.DrainStream(t)
	srv.DrainStream(t)

	var rep api.ABReport
	srv.MustDo(t, "GET", "/projects/"+a.ProjectID+"/ab-tests/bot-kind", a.Key, nil).Decode(t, &rep)
	require.Len(t, rep.Results, 2)
	for _, r := range rep.Results {
		assert.Equal(t, served[r.Key], r.Choices, "variant %s: the sessions served it", r.Key)
		assert.Equal(t, api.ABFeedback{Spans: served[r.Key], Up: served[r.Key]}, r.Feedback,
			"variant %s: the feedback of its sessions' spans made with it, once each", r.Key)
	}
}
