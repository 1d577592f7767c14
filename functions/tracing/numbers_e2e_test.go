package tracing_test

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	wire "github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/bound/boundtest"
)

// TestEdgeNumbersNeverAnswer5xx sends every edge value of boundtest (0, -0, 1e-7, the floor,
// float noise, 1e-130, 1e-200, 1e-300, 1e9, 1e12, 9.99e125, 1e126, 1e200, 1e999, 2^63, and NaN,
// which is not JSON) through every numeric field of the API that DynamoDB stores: span, OTLP and
// trace costs and durations, judges, evaluations and model prices, against DynamoDB Local.
// None answers 5xx; and the trace that every accepted span cost went to still adds up.
func TestEdgeNumbersNeverAnswer5xx(t *testing.T) {
	api := newTestAPI(t)
	key, pid := api.a.key, api.a.projectID
	started := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339Nano)
	traceID := uuid.NewString()
	values := append(append([]string(nil), boundtest.Edges...), "NaN")

	spanID := uuid.NewString()
	res := api.do(t, "POST", "/spans", key, fmt.Sprintf(`[{"id":%q,"trace_id":%q,"name":"s","started_at":%q}]`, spanID, uuid.NewString(), started))
	require.Equal(t, http.StatusOK, res.status, string(res.raw))
	judge := api.do(t, "POST", "/projects/"+pid+"/judges", key, map[string]any{
		"name": "S", "template": "**Tone**: calm", "evaluation_type": "scored", "score_min": -1e9, "score_max": 1e9,
	})
	require.Equal(t, http.StatusOK, judge.status, string(judge.raw))
	var j struct{ ID string }
	judge.decode(t, &j)

	var sum float64
	spans, otlpOK := 1, 0
	for _, v := range values {
		bodies := []struct{ method, path, body string }{
			{"POST", "/spans", fmt.Sprintf(`[{"trace_id":%q,"name":"s","started_at":%q,"cost":%s}]`, traceID, started, v)},
			{"POST", "/spans", fmt.Sprintf(`[{"trace_id":%q,"name":"s","started_at":%q,"duration_ms":%s}]`, traceID, started, v)},
			{"POST", "/traces", fmt.Sprintf(`[{"session_id":"s","name":"t","started_at":%q,"cost":%s}]`, started, v)},
			{"POST", "/traces", fmt.Sprintf(`[{"session_id":"s","name":"t","started_at":%q,"duration_ms":%s}]`, started, v)},
			{"POST", "/projects/" + pid + "/judges", fmt.Sprintf(`{"name":"x","template":"x","evaluation_type":"scored","score_max":%s}`, v)},
			{"POST", "/projects/" + pid + "/judges", fmt.Sprintf(`{"name":"x","template":"x","evaluation_type":"scored","score_min":%s}`, v)},
			{"POST", "/projects/" + pid + "/judges", fmt.Sprintf(`{"name":"x","template":"x","evaluation_type":"scored","pass_threshold":%s}`, v)},
			{"POST", "/projects/" + pid + "/judges", fmt.Sprintf(`{"name":"x","template":"x","sample_rate":%s,"temperature":%s}`, v, v)},
			{"POST", "/projects/" + pid + "/judges/" + j.ID + "/evaluations", fmt.Sprintf(`[{"span_id":%q,"score":%s}]`, spanID, v)},
			{"POST", "/projects/" + pid + "/judges/" + j.ID + "/evaluations", fmt.Sprintf(`[{"span_id":%q,"score":1,"confidence_score":%s,"evaluation_duration_ms":%s}]`, spanID, v, v)},
			{"POST", "/projects/" + pid + "/judges/" + j.ID + "/evaluations", fmt.Sprintf(`[{"span_id":%q,"score":1,"criteria_scores":{"tone":{"score":%s}}}]`, spanID, v)},
			{"PUT", "/projects/" + pid + "/model-prices/m", fmt.Sprintf(`{"input":%s,"output":%s}`, v, v)},
		}
		otlp := fmt.Sprintf(`{"resourceSpans":[{"scopeSpans":[{"spans":[{"traceId":"0af7651916cd43dd8448eb211c80319c",`+
			`"spanId":"b7ad6b7169203331","name":"s","startTimeUnixNano":"%d","attributes":[`+
			`{"key":"gen_ai.usage.cost","value":{"doubleValue":%s}},{"key":"gen_ai.request.model","value":{"stringValue":"gpt-4o"}},`+
			`{"key":"gen_ai.usage.input_tokens","value":{"doubleValue":%s}}]}]}]}]}`, time.Now().Add(-time.Minute).UnixNano(), v, v)
		res := api.doContentType(t, "POST", "/v1/traces", key, otlp, "application/json")
		assert.Less(t, res.status, 500, "OTLP %s: %s", v, res.raw)
		assert.NotEqual(t, http.StatusNotFound, res.status, "OTLP: %s", res.raw)
		if res.status == http.StatusOK {
			otlpOK++
		}
		for _, b := range bodies {
			res := api.do(t, b.method, b.path, key, b.body)
			assert.Less(t, res.status, 500, "%s %s %s: %s", b.method, b.path, b.body, res.raw)
			assert.NotEqual(t, http.StatusNotFound, res.status, "%s %s: %s", b.method, b.path, res.raw)
			if b.path == "/spans" && res.status == http.StatusOK {
				var stored []wire.Span
				res.decode(t, &stored)
				if stored[0].Cost != nil {
					sum += *stored[0].Cost
				}
				spans++
			}
		}
	}
	assert.Positive(t, otlpOK, "some OTLP exports were accepted")
	tr := api.trace(t, traceID)
	assert.Equal(t, spans-1, tr.SpanCount)
	assert.InDelta(t, sum, tr.Cost, 1e-3, "trace cost %s", strconv.FormatFloat(tr.Cost, 'g', -1, 64))
}
