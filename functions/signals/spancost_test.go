package signals_test

import (
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
)

// TestSpanChoicesRequests counts the DynamoDB requests of a batch of 10 spans with and without
// ab_choices: the request path is the same (the choices ride on each span's index item), and
// the stream adds, for spans that carry choices, one BatchGetItem of their tests and one of
// their records per batch, one write per span (its record), and the join of each span's
// verdicts and feedback so far when its record gets its first choice (one Query per span).
func TestSpanChoicesRequests(t *testing.T) {
	srv := apitest.New(t, apitest.Options{})
	a := srv.A
	trace1, session := uuid.NewString(), uuid.NewString()
	onTrace := choiceID(t, srv, a.Key, "trace", trace1, "cost", "b")
	batch := func(choices bool) string {
		var spans []string
		for range 10 {
			ab := "null"
			if choices {
				ab = carried(onTrace, "cost", "b")
			}
			spans = append(spans, pythonSpan(uuid.NewString(), uuid.NewString(), session, ab))
		}
		return "[" + strings.Join(spans, ", ") + "]"
	}
	measure := func(choices bool) (ingest, stream map[string]int) {
		srv.DrainStream(t)
		srv.DDB.Reset()
		res := srv.Do(t, "POST", "/spans", a.Key, batch(choices))
		require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
		ingest = maps.Clone(srv.DDB.Counts())
		srv.StreamDDB.Reset()
		srv.DrainStream(t)
		return ingest, maps.Clone(srv.StreamDDB.Counts())
	}
	measure(false) // the session's first batch
	plainIngest, plainStream := measure(false)
	choiceIngest, choiceStream := measure(true)
	t.Logf("10 spans without ab_choices: ingest %v, stream %v", plainIngest, plainStream)
	t.Logf("10 spans with one choice each: ingest %v, stream %v", choiceIngest, choiceStream)
	assert.Equal(t, plainIngest, choiceIngest, "the request path does not change")
	extra := moreRequests(plainStream, choiceStream)
	t.Logf("the stream's extra requests for 10 spans with choices: %v", extra)
	assert.Equal(t, map[string]int{"BatchGetItem": 3, "PutItem": 10, "Query": 10}, extra, fmt.Sprint(srv.StreamDDB))
}

// TestSplitSpansRequests: what the stream's split join costs. A batch of 10 llm spans of the
// prompt made in 10 sessions the split served (with the version each was served), against the same batch in 10 sessions that
// never fetched it: the stream reads the split's test once (1 BatchGetItem: the join and
// Carry share it; a second read was shown here before) and the spans' signal records (1
// BatchGetItem), records each span's carried choice (1 Query and 1 PutItem a span, as a span
// that carries it in ab_choices), and the records' changes find the spans in the test (1
// BatchGetItem). The request path is the same.
func TestSplitSpansRequests(t *testing.T) {
	srv := apitest.New(t, apitest.Options{})
	a := srv.A
	version := srv.EnsurePrompt(t, a, "bot", "v1: be brief")
	srv.EnsurePrompt(t, a, "bot", "v2: be kind")
	tags := "/projects/" + a.ProjectID + "/prompts/bot/tags"
	srv.MustDo(t, "POST", tags+"/production:pin", a.Key, map[string]any{"version": 1})
	srv.MustDo(t, "POST", tags+"/production:split", a.Key, map[string]any{"name": "bot-one", "duration_days": 7,
		"variants": []map[string]any{{"version": 1, "weight": 0.5}, {"version": 2, "weight": 0.5}}})
	measure := func(split bool) (ingest, stream map[string]int) {
		at := time.Now().Add(-time.Minute)
		var spans []map[string]any
		for range 10 {
			session, served := uuid.NewString(), version
			if split {
				var v api.PromptVersion
				srv.MustDo(t, "GET", "/v1/prompts/bot?tag=production&session_id="+session, a.Key, nil).Decode(t, &v)
				served = v.VersionID
			}
			spans = append(spans, apitest.LLMSpan(uuid.NewString(), uuid.NewString(), session, "bot", served, "q", "a", at))
		}
		srv.DrainStream(t)
		srv.DDB.Reset()
		srv.MustDo(t, "POST", "/spans", a.Key, spans)
		ingest = maps.Clone(srv.DDB.Counts())
		srv.StreamDDB.Reset()
		srv.DrainStream(t)
		return ingest, maps.Clone(srv.StreamDDB.Counts())
	}
	measure(false) // the day's first batch
	plainIngest, plainStream := measure(false)
	splitIngest, splitStream := measure(true)
	t.Logf("10 spans of sessions without the split: ingest %v, stream %v", plainIngest, plainStream)
	t.Logf("10 spans of sessions the split served: ingest %v, stream %v", splitIngest, splitStream)
	assert.Equal(t, plainIngest, splitIngest, "the request path does not change")
	extra := moreRequests(plainStream, splitStream)
	assert.Equal(t, map[string]int{"BatchGetItem": 3, "PutItem": 10, "Query": 10}, extra, fmt.Sprint(srv.StreamDDB))
}

// moreRequests is, by operation, how many more requests than base counts made (negative for
// fewer), the operations with no difference left out.
func moreRequests(base, counts map[string]int) map[string]int {
	more := map[string]int{}
	for op, n := range counts {
		if d := n - base[op]; d != 0 {
			more[op] = d
		}
	}
	for op, n := range base {
		if _, ok := counts[op]; !ok {
			more[op] = -n
		}
	}
	return more
}
