package signals_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/internal/apitest"
)

// TestSignalsShownWithTheirEntities: GET /spans/{id}, /traces/{id} and /sessions/{id}, through
// the Go client, carry the signals recorded on that entity (and only on it: the same id in
// another project, or another entity type, shows nothing), by name; an entity without signals
// shows []; the lists carry no signals. Each answer reads the entity's signal record with one
// GetItem beside what GET /spans?id= (or /traces?id=, /sessions?id=) reads, counted.
func TestSignalsShownWithTheirEntities(t *testing.T) {
	srv := apitest.New(t, apitest.Options{})
	a, b := srv.A, srv.B
	ctx := context.Background()
	web := httptest.NewServer(srv.Handler)
	t.Cleanup(web.Close)
	newClient := func(tenant apitest.Tenant) *client.Client {
		c, err := client.New(client.WithBaseURL(web.URL), client.WithAPIKey(tenant.Key), client.WithProject(tenant.ProjectID),
			client.WithRetries(0), client.WithEnv(func(string) string { return "" }))
		require.NoError(t, err)
		return c
	}
	ca, cb := newClient(a), newClient(b)

	spanID, traceID, sessionID, bare := uuid.NewString(), uuid.NewString(), uuid.NewString(), uuid.NewString()
	at := float64(time.Now().UnixMicro()) / 1e6
	for _, tenant := range []apitest.Tenant{a, b} { // the same ids in both projects
		srv.MustDo(t, "POST", "/spans", tenant.Key, []any{
			map[string]any{"id": spanID, "trace_id": traceID, "session_id": sessionID, "name": "checkout", "started_at": at, "ended_at": at + 1},
			map[string]any{"id": bare, "trace_id": traceID, "parent_span_id": spanID, "name": "bare", "started_at": at, "ended_at": at + 1},
		})
	}
	sig := func(entityType, id, name string, v any) map[string]any {
		return map[string]any{"entity_type": entityType, "entity_id": id, "name": name, "value": v}
	}
	srv.MustDo(t, "POST", "/signals/bulk", a.Key, map[string]any{"signals": []any{
		sig("span", spanID, "revenue", 12.5), sig("span", spanID, "converted", true),
		sig("trace", traceID, "latency_ok", "true"), sig("session", sessionID, "turns", 3),
	}})
	srv.MustDo(t, "POST", "/signals/", b.Key, sig("span", spanID, "other_project", 1))

	names := func(sigs []api.Signal) map[string]any {
		out := map[string]any{}
		for _, s := range sigs {
			out[s.Name+":"+s.SignalType] = s.Value
			assert.False(t, s.CreatedAt.IsZero(), s.Name)
		}
		return out
	}
	span, err := ca.Span(ctx, spanID)
	require.NoError(t, err)
	assert.Equal(t, spanID, span.ID)
	assert.Equal(t, "checkout", span.Name)
	require.Len(t, span.Signals, 2)
	assert.Equal(t, "converted", span.Signals[0].Name, "by name")
	assert.Equal(t, map[string]any{"converted:boolean": true, "revenue:numerical": 12.5}, names(span.Signals))

	tr, err := ca.Trace(ctx, traceID)
	require.NoError(t, err)
	assert.Equal(t, 2, tr.SpanCount)
	assert.Equal(t, map[string]any{"latency_ok:boolean": true}, names(tr.Signals))

	sess, err := ca.Session(ctx, sessionID)
	require.NoError(t, err)
	assert.Equal(t, sessionID, sess.ID)
	assert.Equal(t, map[string]any{"turns:numerical": 3.0}, names(sess.Signals))

	named := "checkout-" + uuid.NewString()
	srv.MustDo(t, "POST", "/spans", a.Key, []any{map[string]any{"id": uuid.NewString(), "trace_id": uuid.NewString(), "session_id": named,
		"name": "named", "started_at": at, "ended_at": at + 1}})
	byName, err := ca.Session(ctx, named)
	require.NoError(t, err)
	assert.Equal(t, uuid.NewSHA1(uuid.NameSpaceDNS, []byte(named)).String(), byName.ID, "a session id not a UUID names its uuid5")
	assert.Empty(t, byName.Signals)

	other, err := cb.Span(ctx, spanID)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{"other_project:numerical": 1.0}, names(other.Signals), "a project sees its own signals only")
	bTrace, err := cb.Trace(ctx, traceID)
	require.NoError(t, err)
	assert.Empty(t, bTrace.Signals)

	res := srv.MustDo(t, "GET", "/spans/"+bare, a.Key, nil)
	assert.Contains(t, string(res.Body), `"signals":[]`, "none is [], not null")

	for _, path := range []string{"/spans?id=" + spanID, "/traces?id=" + traceID, "/sessions?id=" + sessionID, "/spans?trace_id=" + traceID} {
		res := srv.MustDo(t, "GET", path, a.Key, nil)
		assert.NotContains(t, string(res.Body), `"signals"`, "%s: lists do not read signals", path)
	}

	t.Run("requests", func(t *testing.T) {
		for _, tt := range []struct{ one, list string }{
			{"/spans/" + spanID, "/spans?id=" + spanID},
			{"/traces/" + traceID, "/traces?id=" + traceID},
			{"/sessions/" + sessionID, "/sessions?id=" + sessionID},
		} {
			srv.DDB.Reset()
			srv.S3.Reset()
			srv.MustDo(t, "GET", tt.list, a.Key, nil)
			list, listS3 := srv.DDB.Counts(), srv.S3.Count("GetObject")
			srv.DDB.Reset()
			srv.S3.Reset()
			srv.MustDo(t, "GET", tt.one, a.Key, nil)
			one := srv.DDB.Counts()
			t.Logf("%s: DynamoDB %v, S3 GetObject %d", tt.one, one, srv.S3.Count("GetObject"))
			list["GetItem"]++
			assert.Equal(t, list, one, "%s reads what %s reads and one GetItem: %v", tt.one, tt.list, srv.DDB)
			assert.Equal(t, listS3, srv.S3.Count("GetObject"), tt.one)
		}
	})

	t.Run("bad input and tenancy", func(t *testing.T) {
		for _, tt := range []struct {
			path   string
			key    string
			status int
		}{
			{"/spans/" + uuid.NewString(), a.Key, http.StatusNotFound},
			{"/traces/" + uuid.NewString(), a.Key, http.StatusNotFound},
			{"/sessions/nobody", a.Key, http.StatusNotFound},
			{"/spans/not-a-span-id-but-long-enough-to-pass-36", a.Key, http.StatusBadRequest},
			{"/traces/not-a-uuid", a.Key, http.StatusNotFound},
			{"/sessions/" + strings.Repeat("s", 129), a.Key, http.StatusNotFound},
			{"/spans/" + spanID, "", http.StatusUnauthorized},
		} {
			res := srv.Do(t, "GET", tt.path, tt.key, nil)
			assert.Equal(t, tt.status, res.Status, "%s: %s", tt.path, res.Body)
			if tt.status != http.StatusUnauthorized {
				assert.Contains(t, string(res.Body), `"code"`, fmt.Sprint(tt.path, " answers the error shape"))
			}
		}
	})
}
