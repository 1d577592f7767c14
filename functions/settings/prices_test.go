package settings

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/testlog"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/pricing"
	"github.com/plumehq/plume/shared/trace"
)

type fixture struct {
	h      http.Handler
	prices *ddb.PriceStore
	keys   *ddb.AuthStore
	ddb    *ddbtest.Counter // the requests of the handler and of the fixture's own store calls
	a, b   struct{ pid, key string }
}

// newFixture builds the settings area over a fresh table; what it logs goes to t's output.
func newFixture(t *testing.T) *fixture {
	testlog.Capture(t)
	client, counter, name := ddbtest.NewTable(t)
	table := ddb.NewTable(client, name)
	store := ddb.NewAuthStore(table)
	f := &fixture{prices: ddb.NewPriceStore(table), keys: store, ddb: counter}
	for _, tn := range []*struct{ pid, key string }{&f.a, &f.b} {
		tn.pid = uuid.NewString()
		require.NoError(t, store.CreateProject(context.Background(), auth.Project{ID: tn.pid, CreatedAt: time.Now()}))
		secret, k, err := auth.NewKey(auth.KeySpec{ProjectID: tn.pid, User: auth.User{ID: "ops"}}, time.Now())
		require.NoError(t, err)
		require.NoError(t, store.CreateKey(context.Background(), k))
		tn.key = secret
	}
	f.h = NewHandler(f.prices, pricing.Default(), store, auth.NewAuthenticator(store, auth.MaxCacheTTL), Gateway{Trace: "off"})
	return f
}

func (f *fixture) do(t *testing.T, method, path, key string, body any) (int, map[string]any) {
	t.Helper()
	var raw []byte
	if body != nil {
		raw, _ = json.Marshal(body)
	}
	req := httptest.NewRequest(method, path, bytes.NewReader(raw))
	req.Header.Set("Authorization", "Bearer "+key)
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	var out map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &out)
	return rec.Code, out
}

func TestModelPrices(t *testing.T) {
	f := newFixture(t)
	base := "/projects/" + f.a.pid + "/model-prices/"
	model := url.PathEscape("acme/FineTune-7B:v2")

	status, body := f.do(t, "GET", base+model, f.a.key, nil)
	assert.Equal(t, http.StatusNotFound, status, "unknown to the table and the project")

	status, body = f.do(t, "GET", base+"gpt-4o-mini", f.a.key, nil)
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "price_table", body["source"])
	assert.InDelta(t, 0.15, body["input"], 1e-12)

	status, body = f.do(t, "PUT", base+model, f.a.key, map[string]any{"input": 0.2, "output": 0.8, "provider": "acme"})
	require.Equal(t, http.StatusOK, status, body)
	assert.Equal(t, "acme/finetune-7b:v2", body["model"])
	assert.Equal(t, "project_price", body["source"])
	status, body = f.do(t, "PUT", base+"gpt-4o-mini", f.a.key, map[string]any{"input": 0.1, "output": 0.3})
	require.Equal(t, http.StatusOK, status, body)

	status, body = f.do(t, "GET", base+"GPT-4o-mini", f.a.key, nil)
	require.Equal(t, http.StatusOK, status)
	assert.Equal(t, "project_price", body["source"], "the project's price wins, case-insensitively")

	status, body = f.do(t, "GET", "/projects/"+f.a.pid+"/model-prices", f.a.key, nil)
	require.Equal(t, http.StatusOK, status)
	assert.Len(t, body["overrides"], 2)
	assert.EqualValues(t, pricing.Default().Len(), body["price_table"].(map[string]any)["models"])

	// Spans are priced with the project's prices.
	pricer := pricing.NewPricer(pricing.Default()).WithOverrides(f.prices)
	cost, source, ok, err := pricer.Cost(context.Background(), f.a.pid, trace.LLMUsage{Provider: "acme", Model: "FineTune-7B:v2", InputTokens: 1_000_000, OutputTokens: 1_000_000})
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, "project_price", source)
	assert.InDelta(t, 1.0, cost, 1e-12)
	cost, source, _, err = pricer.Cost(context.Background(), f.b.pid, trace.LLMUsage{Model: "gpt-4o-mini", InputTokens: 1_000_000})
	require.NoError(t, err)
	assert.Equal(t, "price_table", source, "another project keeps the table's price")
	assert.InDelta(t, 0.15, cost, 1e-12)

	status, _ = f.do(t, "DELETE", base+"gpt-4o-mini", f.a.key, nil)
	assert.Equal(t, http.StatusOK, status)
	status, body = f.do(t, "GET", base+"gpt-4o-mini", f.a.key, nil)
	assert.Equal(t, "price_table", body["source"])
	status, _ = f.do(t, "DELETE", base+"gpt-4o-mini", f.a.key, nil)
	assert.Equal(t, http.StatusNotFound, status)
}

func TestModelPricesBadInputAndTenancy(t *testing.T) {
	f := newFixture(t)
	base := "/projects/" + f.a.pid + "/model-prices/m"
	tests := []struct {
		name, method, path string
		body               any
		status             int
	}{
		{"missing output", "PUT", base, map[string]any{"input": 1}, 400},
		{"negative price", "PUT", base, map[string]any{"input": -1, "output": 1}, 400},
		{"absurd price", "PUT", base, map[string]any{"input": 1e9, "output": 1}, 400},
		{"price as string", "PUT", base, map[string]any{"input": "1", "output": 1}, 400},
		{"other project: list", "GET", "/projects/" + f.b.pid + "/model-prices", nil, 403},
		{"other project: put", "PUT", "/projects/" + f.b.pid + "/model-prices/m", map[string]any{"input": 1, "output": 1}, 403},
		{"other project: delete", "DELETE", "/projects/" + f.b.pid + "/model-prices/m", nil, 403},
		{"other project: get", "GET", "/projects/" + f.b.pid + "/model-prices/m", nil, 403},
		{"unknown route", "POST", base, nil, 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := f.do(t, tt.method, tt.path, f.a.key, tt.body)
			assert.Equal(t, tt.status, status, body)
			assert.Contains(t, body, "error")
		})
	}
	list, err := f.prices.Overrides(context.Background(), f.b.pid)
	require.NoError(t, err)
	assert.Empty(t, list, "nothing was written to project B")
}
