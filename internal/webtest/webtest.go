// Package webtest sends requests to an http.Handler in tests, as the SDKs and the CLI send
// them: a JSON body and the bearer key of a tenant it creates. It imports no area of the API,
// so every area's own tests can use it.
package webtest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/ddb"
)

// Response is a recorded response.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Decode unmarshals the body into v.
func (r Response) Decode(t testing.TB, v any) {
	t.Helper()
	require.NoError(t, json.Unmarshal(r.Body, v), "body: %s", r.Body)
}

// Map decodes the body as a JSON object.
func (r Response) Map(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	r.Decode(t, &m)
	return m
}

// ErrCode returns the code of an error body.
func (r Response) ErrCode(t testing.TB) string {
	t.Helper()
	var body api.ErrorBody
	r.Decode(t, &body)
	return string(body.Error.Code)
}

// NewRequest makes a request with body (JSON-encoded unless it is a string or []byte, sent as
// application/json) and key as bearer (none when empty).
func NewRequest(t testing.TB, method, path, key string, body any) *http.Request {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = bytes.NewBufferString(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		require.NoError(t, err)
		rd = bytes.NewReader(raw)
	}
	req := httptest.NewRequest(method, path, rd)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	return req
}

// Serve serves req with h and records the response.
func Serve(h http.Handler, req *http.Request) Response {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return Response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
}

// Do is Serve of NewRequest.
func Do(t testing.TB, h http.Handler, method, path, key string, body any) Response {
	t.Helper()
	return Serve(h, NewRequest(t, method, path, key, body))
}

// Tenant is a project and a key of it.
type Tenant struct {
	ProjectID string
	Key       string
	UserID    string
}

// NewTenant creates a project with one key, of a user of its own.
func NewTenant(t testing.TB, store *ddb.AuthStore) Tenant {
	t.Helper()
	ctx := context.Background()
	id := uuid.NewString()
	require.NoError(t, store.CreateProject(ctx, auth.Project{ID: id, Name: "test", CreatedAt: time.Now()}))
	user := auth.User{ID: "u-" + id[:8], Email: id[:8] + "@example.com", Name: "Tester " + id[:4]}
	secret, k, err := auth.NewKey(auth.KeySpec{ProjectID: id, User: user}, time.Now())
	require.NoError(t, err)
	require.NoError(t, store.CreateKey(ctx, k))
	return Tenant{ProjectID: id, Key: secret, UserID: user.ID}
}

// The sample events of every function (events/*/README.md) carry this key of this project.
const (
	SampleProjectID = "5f0c7f4e-8a4b-4d59-9a57-3c1f4f7d2a10"
	SampleKey       = "plm_EventSample0000000000000000000000000000"
)

// SampleTenant creates the sample events' project and key (of the user "sample-user"), so that
// the events of events/ authenticate.
func SampleTenant(t testing.TB, store *ddb.AuthStore) Tenant {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, store.CreateProject(ctx, auth.Project{ID: SampleProjectID, Name: "sample", CreatedAt: time.Now()}))
	user := auth.User{ID: "sample-user"}
	_, k, err := auth.NewKey(auth.KeySpec{ProjectID: SampleProjectID, Secret: SampleKey, User: user}, time.Now())
	require.NoError(t, err)
	require.NoError(t, store.CreateKey(ctx, k))
	return Tenant{ProjectID: SampleProjectID, Key: SampleKey, UserID: user.ID}
}
