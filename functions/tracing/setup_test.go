package tracing

import (
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/webtest"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/blob"
	"github.com/plumehq/plume/shared/blob/blobtest"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/pricing"
	"github.com/plumehq/plume/shared/trace"
	"github.com/plumehq/plume/shared/web"
)

// testAPI is the tracing area (both halves, mounted as plume-local does) over a fresh table and
// an embedded S3, with two projects and a settable clock.
type testAPI struct {
	h       http.Handler
	ingest  http.Handler // the two functions' handlers, unmounted
	query   http.Handler
	auth    *ddb.AuthStore
	authn   *auth.Authenticator
	traces  *ddb.TraceStore
	blobs   *blob.Store
	table   string // the DynamoDB table's name
	s3URL   string // the embedded S3 server
	ddb     *ddbtest.Counter
	s3      *blobtest.Counter
	a, b    tenant
	clockMu sync.Mutex
	clock   time.Time
}

type tenant struct{ projectID, key string }

func newTestAPI(t testing.TB) *testAPI {
	t.Helper()
	client, counter, name := ddbtest.NewTable(t)
	table := ddb.NewTable(client, name)
	blobs, s3Counter, s3URL := blobtest.New(t)
	api := &testAPI{ddb: counter, s3: s3Counter, clock: time.Now().UTC(), table: name, s3URL: s3URL}
	authStore := ddb.NewAuthStore(table)
	api.a = newTenant(t, authStore)
	api.b = newTenant(t, authStore)
	traces := ddb.NewTraceStore(table)
	// Attachment URLs are fetched from the tests' own servers (httptest, on 127.0.0.1).
	extractor, err := trace.NewExtractor(blobs, trace.ExtractorConfig{Hosts: []string{"127.0.0.1"}, MaxBytes: testAttachmentMaxBytes})
	require.NoError(t, err)
	svc := trace.NewService(traces, blobs, pricing.NewPricer(pricing.Default()), trace.WithClock(api.now), trace.WithExtractor(extractor))
	urls := AttachmentURLs{Presigner: blobs, MaxBytes: testAttachmentMaxBytes}
	authn := auth.NewAuthenticator(authStore, auth.MaxCacheTTL)
	mux := http.NewServeMux()
	api.auth = authStore
	api.authn, api.traces, api.blobs = authn, traces, blobs
	api.ingest = NewIngestHandler(svc, authn, urls)
	api.query = NewQueryHandler(trace.NewQueries(traces, blobs), authn, urls)
	web.Mount(mux, IngestRoutes, api.ingest)
	web.Mount(mux, QueryRoutes, api.query)
	mux.Handle("/", web.Chain(http.HandlerFunc(web.NotFound)))
	api.h = mux
	counter.Reset()
	return api
}

func newTenant(t testing.TB, store *ddb.AuthStore) tenant {
	t.Helper()
	tn := webtest.NewTenant(t, store)
	return tenant{projectID: tn.ProjectID, key: tn.Key}
}

func (api *testAPI) now() time.Time {
	api.clockMu.Lock()
	defer api.clockMu.Unlock()
	return api.clock
}

// setClock makes the service's clock read at.
func (api *testAPI) setClock(at time.Time) {
	api.clockMu.Lock()
	defer api.clockMu.Unlock()
	api.clock = at
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
	var body web.ErrorBody
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
