package feedback_test

import (
	"testing"

	"github.com/google/uuid"

	"github.com/plumehq/plume/internal/apitest"
)

// BenchmarkSubmitFeedback measures one completion feedback submission through the handler
// against DynamoDB Local (one BatchGetItem and one UpdateItem with a warm key), and reports the
// DynamoDB requests it makes.
func BenchmarkSubmitFeedback(b *testing.B) {
	api := apitest.New(b, apitest.Options{})
	vid := api.EnsurePrompt(b, api.A, "bot", "Answer.")
	spans := make([]string, 50)
	var batch []any
	for i := range spans {
		spans[i] = uuid.NewString()
		batch = append(batch, apitest.LLMSpan(spans[i], uuid.NewString(), "", "bot", vid, "q", "a", nowish()))
	}
	api.MustDo(b, "POST", "/spans", api.A.Key, batch)
	body := map[string]any{"thumbs_up": false, "reason": "wrong amount", "expected_output": "$20"}
	api.MustDo(b, "POST", feedbackPath("bot", spans[0]), api.A.Key, body) // warm the key cache
	api.DDB.Reset()
	i := 0
	for b.Loop() {
		api.MustDo(b, "POST", feedbackPath("bot", spans[i%len(spans)]), api.A.Key, body)
		i++
	}
	b.ReportMetric(float64(api.DDB.Total())/float64(i), "ddb-requests/op")
}

// BenchmarkUnifiedTrace measures the unified feedback of a 200-span trace with 270 items.
func BenchmarkUnifiedTrace(b *testing.B) {
	api := apitest.New(b, apitest.Options{})
	a := api.A
	vid := api.EnsurePrompt(b, a, "bot", "Answer.")
	traceID, spans := ingestTrace(b, api, a, "bot", vid, "", 200)
	jid := api.MustDo(b, "POST", "/projects/"+a.ProjectID+"/judges", a.Key, map[string]any{"name": "B", "template": "ok?"}).Map(b)["id"].(string)
	var evals []any
	for i, s := range spans {
		if i%5 < 3 {
			api.MustDo(b, "POST", feedbackPath("bot", s), a.Key, map[string]any{"thumbs_up": i%2 == 0})
		}
		if i%4 != 0 {
			evals = append(evals, map[string]any{"span_id": s, "evaluation_result": true})
		}
	}
	api.MustDo(b, "POST", "/projects/"+a.ProjectID+"/judges/"+jid+"/evaluations", a.Key, evals[:100])
	api.MustDo(b, "POST", "/projects/"+a.ProjectID+"/judges/"+jid+"/evaluations", a.Key, evals[100:])
	path := unifiedPath(a.ProjectID, "trace", traceID)
	api.MustDo(b, "GET", path, a.Key, nil)
	api.DDB.Reset()
	n := 0
	for b.Loop() {
		api.MustDo(b, "GET", path, a.Key, nil)
		n++
	}
	b.ReportMetric(float64(api.DDB.Total())/float64(n), "ddb-requests/op")
}
