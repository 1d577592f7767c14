package tracing_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	wire "github.com/plumehq/plume/api"
	"github.com/plumehq/plume/functions/tracing"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/internal/webtest"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/blob"
	"github.com/plumehq/plume/shared/blob/blobtest"
	"github.com/plumehq/plume/shared/config"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/trace"
)

// testAPI is the whole API, built by the composition root as plume-local builds it, over a
// fresh table and an embedded S3, with two projects and a settable clock; ingest and query are
// the two tracing functions' handlers, unmounted.
type testAPI struct {
	h      http.Handler
	ingest http.Handler
	query  http.Handler
	auth   *ddb.AuthStore
	authn  *auth.Authenticator
	traces *ddb.TraceStore
	svc    *trace.Service // the ingest side's service, for what the routes no longer let in
	blobs  *blob.Store
	table  string // the DynamoDB table's name
	s3URL  string // the embedded S3 server
	ddb    *ddbtest.Counter
	s3     *blobtest.Counter
	a, b   tenant
	clock  *apitest.Clock
	// whole is the API all of it runs in: its ApplyStream applies the change stream to
	// the aggregates after writes beside the handlers (a bootstrap's, the service's).
	whole *apitest.API
}

type tenant struct{ projectID, key string }

func newTestAPI(t testing.TB) *testAPI {
	t.Helper()
	api := &testAPI{clock: apitest.NewClock(time.Now().UTC())}
	whole := apitest.New(t, apitest.Options{
		Config: func(c *config.Config) {
			// Attachment URLs are fetched from the tests' own servers (httptest, on 127.0.0.1).
			c.AttachmentHosts = []string{"127.0.0.1"}
			c.AttachmentMaxBytes = testAttachmentMaxBytes
		},
		Clock: api.clock.Now,
	})
	var err error
	ingest, err := tracing.IngestFunction.Build(whole.Env)
	require.NoError(t, err)
	query, err := tracing.QueryFunction.Build(whole.Env)
	require.NoError(t, err)
	api.ingest, api.query = whole.Applying(ingest), whole.Applying(query)
	api.h, api.auth, api.authn, api.traces, api.blobs = whole.Handler, whole.Auth, whole.Env.Authn(), whole.Env.Traces(), whole.Blobs
	api.svc, err = whole.Env.TraceService()
	require.NoError(t, err)
	api.table, api.s3URL, api.ddb, api.s3 = whole.TableName, whole.S3URL, whole.DDB, whole.S3
	api.whole = whole
	api.a = tenant{projectID: whole.A.ProjectID, key: whole.A.Key}
	api.b = tenant{projectID: whole.B.ProjectID, key: whole.B.Key}
	return api
}

type response struct {
	status int
	header http.Header
	raw    []byte
}

func (r response) decode(t testing.TB, v any) {
	t.Helper()
	require.NoError(t, json.Unmarshal(r.raw, v), "body: %s", r.raw)
}

func (r response) errCode(t testing.TB) string {
	var body wire.ErrorBody
	r.decode(t, &body)
	return string(body.Error.Code)
}

// do sends body (marshalled unless it is a string or []byte) with key as bearer.
func (api *testAPI) do(t testing.TB, method, path, key string, body any) response {
	t.Helper()
	res := webtest.Do(t, api.h, method, path, key, body)
	return response{status: res.Status, header: res.Header, raw: res.Body}
}

// doContentType sends a raw body with an explicit Content-Type.
func (api *testAPI) doContentType(t testing.TB, method, path, key, body, contentType string) response {
	t.Helper()
	req := webtest.NewRequest(t, method, path, key, body)
	req.Header.Set("Content-Type", contentType)
	res := webtest.Serve(api.h, req)
	return response{status: res.Status, header: res.Header, raw: res.Body}
}
