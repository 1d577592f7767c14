package signals_test

import (
	"fmt"
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

// tsAnswer is what the TypeScript SDK's SignalWriter parses (SignalResponse).
type tsAnswer struct {
	Status         string `json:"status"`
	Message        string `json:"message"`
	ProcessedCount int    `json:"processed_count"`
	FailedCount    int    `json:"failed_count"`
	Errors         []struct {
		Index      int    `json:"index"`
		EntityType string `json:"entity_type"`
		EntityID   string `json:"entity_id"`
		SignalName string `json:"signal_name"`
		Error      string `json:"error"`
	} `json:"errors"`
}

// entitySignals reads GET /signals/entity as the TypeScript SDK's getEntitySignals does: a
// JSON array, by name.
func entitySignals(t *testing.T, srv *apitest.API, key, typ, id string) map[string]api.Signal {
	t.Helper()
	res := srv.MustDo(t, "GET", "/signals/entity/"+typ+"/"+id, key, nil)
	var arr []api.Signal
	res.Decode(t, &arr)
	out := map[string]api.Signal{}
	for _, s := range arr {
		out[s.Name] = s
	}
	return out
}

// TestPythonSetSignal replays ze.set_signal's POST /signals/bulk byte for byte (Python's json
// of a dict: True sent as "numerical", strings as "boolean"), before the span exists; the
// SDK reads only the status (raise_for_status).
func TestPythonSetSignal(t *testing.T) {
	srv := apitest.New(t, apitest.Options{})
	a := srv.A
	spanID := uuid.NewString()
	body := fmt.Sprintf(`{"signals": [`+
		`{"entity_type": "span", "entity_id": %q, "name": "converted", "value": true, "signal_type": "numerical"}, `+
		`{"entity_type": "span", "entity_id": %q, "name": "revenue", "value": 42.5, "signal_type": "numerical"}, `+
		`{"entity_type": "span", "entity_id": %q, "name": "clicks", "value": 3, "signal_type": "numerical"}, `+
		`{"entity_type": "span", "entity_id": %q, "name": "happy", "value": "false", "signal_type": "boolean"}]}`,
		spanID, spanID, spanID, spanID)
	res := srv.Do(t, "POST", "/signals/bulk", a.Key, body)
	require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)

	got := entitySignals(t, srv, a.Key, "span", spanID)
	require.Len(t, got, 4)
	assert.Equal(t, true, got["converted"].Value, "Python's True is a boolean")
	assert.Equal(t, api.SignalBoolean, got["converted"].SignalType)
	assert.Equal(t, 42.5, got["revenue"].Value)
	assert.Equal(t, api.SignalNumerical, got["revenue"].SignalType)
	assert.Equal(t, float64(3), got["clicks"].Value)
	assert.Equal(t, false, got["happy"].Value)

	// The span arrives afterwards: its signals are still there, joined by id.
	now := time.Now()
	srv.MustDo(t, "POST", "/spans", a.Key, []any{map[string]any{"id": spanID, "trace_id": uuid.NewString(), "name": "checkout",
		"started_at": float64(now.UnixMicro()) / 1e6, "ended_at": float64(now.UnixMicro()) / 1e6}})
	assert.Len(t, entitySignals(t, srv, a.Key, "span", spanID), 4)

	// Set again: updated, not duplicated; created_at kept.
	srv.MustDo(t, "POST", "/signals/bulk", a.Key, fmt.Sprintf(`{"signals": [{"entity_type": "span", "entity_id": %q, "name": "revenue", "value": 50, "signal_type": "numerical"}]}`, spanID))
	again := entitySignals(t, srv, a.Key, "span", spanID)
	require.Len(t, again, 4)
	assert.Equal(t, float64(50), again["revenue"].Value)
	assert.Equal(t, got["revenue"].CreatedAt, again["revenue"].CreatedAt)
	assert.True(t, again["revenue"].UpdatedAt.After(got["revenue"].UpdatedAt) || again["revenue"].UpdatedAt.Equal(got["revenue"].UpdatedAt))
}

// TestTypeScriptSignals replays the TypeScript SDK: sendSignal's POST /signals/ (trailing
// slash, one signal, entity type completion), the span flush's bulk (values as strings, after
// the /spans POST) and the trace and session flush; each answer parsed as SignalResponse.
func TestTypeScriptSignals(t *testing.T) {
	srv := apitest.New(t, apitest.Options{})
	a := srv.A
	completion, spanID, traceID, sessionID := uuid.NewString(), uuid.NewString(), uuid.NewString(), uuid.NewString()

	res := srv.Do(t, "POST", "/signals/", a.Key, fmt.Sprintf(`{"entity_type":"completion","entity_id":%q,"name":"thumbs","value":true,"signal_type":"boolean"}`, completion))
	require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
	var one tsAnswer
	res.Decode(t, &one)
	assert.Equal(t, tsAnswer{Status: "success", Message: one.Message, ProcessedCount: 1, Errors: one.Errors}, one)
	assert.Empty(t, one.Errors)
	assert.Equal(t, true, entitySignals(t, srv, a.Key, "completion", completion)["thumbs"].Value)

	now := time.Now().UTC().Format(time.RFC3339Nano)
	srv.MustDo(t, "POST", "/spans", a.Key, []any{map[string]any{"id": spanID, "trace_id": traceID, "session_id": sessionID,
		"name": "answer", "started_at": now, "ended_at": now}})
	bulk := fmt.Sprintf(`{"signals":[`+
		`{"entity_type":"span","entity_id":%q,"name":"latency_ok","value":"true","signal_type":"boolean"},`+
		`{"entity_type":"span","entity_id":%q,"name":"score","value":"0.82","signal_type":"numerical"},`+
		`{"entity_type":"span","entity_id":%q,"name":"bad","value":"maybe","signal_type":"boolean"},`+
		`{"entity_type":"trace","entity_id":%q,"name":"resolved","value":false,"signal_type":"boolean"},`+
		`{"entity_type":"session","entity_id":%q,"name":"turns","value":7,"signal_type":"numerical"}]}`,
		spanID, spanID, spanID, traceID, sessionID)
	res = srv.Do(t, "POST", "/signals/bulk", a.Key, bulk)
	require.Equal(t, http.StatusOK, res.Status, "body: %s", res.Body)
	var ans tsAnswer
	res.Decode(t, &ans)
	assert.Equal(t, "partial", ans.Status)
	assert.Equal(t, 4, ans.ProcessedCount)
	assert.Equal(t, 1, ans.FailedCount)
	require.Len(t, ans.Errors, 1)
	assert.Equal(t, 2, ans.Errors[0].Index)
	assert.Equal(t, "bad", ans.Errors[0].SignalName)
	assert.Equal(t, spanID, ans.Errors[0].EntityID)
	assert.Equal(t, "span", ans.Errors[0].EntityType)

	spanSigs := entitySignals(t, srv, a.Key, "span", spanID)
	assert.Equal(t, true, spanSigs["latency_ok"].Value)
	assert.Equal(t, 0.82, spanSigs["score"].Value)
	assert.NotContains(t, spanSigs, "bad")
	assert.Equal(t, false, entitySignals(t, srv, a.Key, "trace", traceID)["resolved"].Value)
	assert.Equal(t, float64(7), entitySignals(t, srv, a.Key, "session", sessionID)["turns"].Value)

	// An entity with nothing recorded reads as an empty array (getEntitySignals: []).
	res = srv.MustDo(t, "GET", "/signals/entity/trace/"+uuid.NewString(), a.Key, nil)
	assert.JSONEq(t, `[]`, string(res.Body))
}

// TestBadSignals: bad requests answer the shared error shape with a 4xx and store nothing.
func TestBadSignals(t *testing.T) {
	srv := apitest.New(t, apitest.Options{})
	a := srv.A
	id := uuid.NewString()
	long := strings.Repeat("x", 300)
	tests := []struct {
		name, path, body string
		status           int
	}{
		{"not JSON", "/signals/bulk", `{"signals": [`, 400},
		{"no signals", "/signals/bulk", `{"signals": []}`, 400},
		{"every signal refused", "/signals/bulk", fmt.Sprintf(`{"signals":[{"entity_type":"span","entity_id":%q,"name":"x","value":"maybe"}]}`, id), 400},
		{"unknown entity type", "/signals/", fmt.Sprintf(`{"entity_type":"user","entity_id":%q,"name":"x","value":1}`, id), 400},
		{"name too long", "/signals/", fmt.Sprintf(`{"entity_type":"span","entity_id":%q,"name":%q,"value":1}`, id, long), 400},
		{"null value", "/signals/", fmt.Sprintf(`{"entity_type":"span","entity_id":%q,"name":"x","value":null}`, id), 400},
		{"too large a number", "/signals/", fmt.Sprintf(`{"entity_type":"span","entity_id":%q,"name":"x","value":1e300}`, id), 400},
		{"bad signal type", "/signals/", fmt.Sprintf(`{"entity_type":"span","entity_id":%q,"name":"x","value":1,"signal_type":"text"}`, id), 400},
		{"no key", "/signals/", fmt.Sprintf(`{"entity_type":"span","entity_id":%q,"name":"x","value":1}`, id), 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := a.Key
			if tt.status == 401 {
				key = ""
			}
			res := srv.Do(t, "POST", tt.path, key, tt.body)
			assert.Equal(t, tt.status, res.Status, "body: %s", res.Body)
			assert.NotEmpty(t, res.ErrCode(t), "the shared error shape")
		})
	}
	assert.Empty(t, entitySignals(t, srv, a.Key, "span", id), "nothing stored")
	res := srv.Do(t, "GET", "/signals/entity/user/"+id, a.Key, nil)
	assert.Equal(t, http.StatusBadRequest, res.Status)
}

// TestLargestBulk: the largest bulk on one entity, long names, fits: MaxSignals are stored,
// the rest refused one by one, nothing answers 500; and again with a test on the entity, whose
// aggregates move in transactions that never pass DynamoDB's 100 actions.
func TestLargestBulk(t *testing.T) {
	srv := apitest.New(t, apitest.Options{})
	a := srv.A
	for _, withChoice := range []bool{false, true} {
		t.Run(fmt.Sprint("choice=", withChoice), func(t *testing.T) {
			id := uuid.NewString()
			if withChoice {
				srv.MustDo(t, "POST", "/ab-choices", a.Key, choiceBody("span", id, "big-"+id[:8], "a", 1))
			}
			sigs := make([]map[string]any, 200)
			for i := range sigs {
				sigs[i] = map[string]any{"entity_type": "span", "entity_id": id, "name": fmt.Sprintf("%03d-%s", i, strings.Repeat("n", 252)),
					"value": i, "signal_type": "numerical"}
			}
			res := srv.Do(t, "POST", "/signals/bulk", a.Key, map[string]any{"signals": sigs})
			require.Equal(t, http.StatusOK, res.Status, "body: %.300s", res.Body)
			var ans tsAnswer
			res.Decode(t, &ans)
			assert.Equal(t, 98, ans.ProcessedCount)
			assert.Equal(t, 102, ans.FailedCount)
			assert.Equal(t, 98, ans.Errors[0].Index)
			assert.Len(t, entitySignals(t, srv, a.Key, "span", id), 98)
			if withChoice {
				rep := report(t, srv, a, "big-"+id[:8])
				require.Len(t, rep.Results[0].Signals, 98)
				assert.Equal(t, int64(1), rep.Results[0].Signals[97].N)
				assert.Equal(t, float64(97), rep.Results[0].Signals[97].Mean)
			}
		})
	}
}
