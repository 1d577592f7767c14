package signals_test

import (
	"fmt"
	"maps"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/apitest"
)

// TestSpanChoicesRequests counts the DynamoDB requests of a batch of 10 spans with and without
// ab_choices: the request path is the same (the choices ride on each span's index item), and
// the stream adds, for spans that carry choices, one BatchGetItem of their tests and one of
// their records per batch, one write per span (its record), and the join of each span's
// verdicts and feedback so far when its record gets its first choice (one Query per span).
func TestSpanChoicesRequests(t *testing.T) {
	srv := apitest.New(t, apitest.Options{Stream: true})
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
		srv.DDB.Reset()
		srv.DrainStream(t)
		return ingest, maps.Clone(srv.DDB.Counts())
	}
	measure(false) // the session's first batch
	plainIngest, plainStream := measure(false)
	choiceIngest, choiceStream := measure(true)
	t.Logf("10 spans without ab_choices: ingest %v, stream %v", plainIngest, plainStream)
	t.Logf("10 spans with one choice each: ingest %v, stream %v", choiceIngest, choiceStream)
	assert.Equal(t, plainIngest, choiceIngest, "the request path does not change")
	extra := map[string]int{}
	for op, n := range choiceStream {
		if d := n - plainStream[op]; d != 0 {
			extra[op] = d
		}
	}
	for op, n := range plainStream {
		if _, ok := choiceStream[op]; !ok {
			extra[op] = -n
		}
	}
	t.Logf("the stream's extra requests for 10 spans with choices: %v", extra)
	assert.Equal(t, map[string]int{"BatchGetItem": 3, "PutItem": 10, "Query": 10}, extra, fmt.Sprint(srv.DDB))
}
