// Package apitest runs the whole Plume API in-process for end-to-end tests: every area mounted
// as plume-local mounts it, over a fresh DynamoDB Local table and an embedded SigV4-checking S3,
// with two projects (A and B) to test tenancy between.
package apitest

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/functions/feedback"
	"github.com/plumehq/plume/functions/judges"
	"github.com/plumehq/plume/functions/prompts"
	"github.com/plumehq/plume/functions/tracing"
	"github.com/plumehq/plume/internal/webtest"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/blob"
	"github.com/plumehq/plume/shared/blob/blobtest"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	fb "github.com/plumehq/plume/shared/feedback"
	"github.com/plumehq/plume/shared/judge"
	"github.com/plumehq/plume/shared/pricing"
	"github.com/plumehq/plume/shared/prompt"
	"github.com/plumehq/plume/shared/trace"
	"github.com/plumehq/plume/shared/web"
)

// API is the running API.
type API struct {
	Handler http.Handler
	Table   *ddb.Table
	// TableName and S3URL are where the API's data is, for real Lambda bootstraps run
	// beside it.
	TableName string
	S3URL     string
	Blobs     *blob.Store
	DDB       *ddbtest.Counter
	Auth      *ddb.AuthStore
	A, B      Tenant
}

// Tenant is a project and a key of it.
type Tenant = webtest.Tenant

// Options change the API under test.
type Options struct {
	// LinkRate is the feedback links' requests per minute (0: the default).
	LinkRate int
}

// New starts the API for t.
func New(t testing.TB, o Options) *API {
	t.Helper()
	client, counter, name := ddbtest.NewTable(t)
	table := ddb.NewTable(client, name)
	blobs, _, s3URL := blobtest.New(t)
	authStore := ddb.NewAuthStore(table)
	api := &API{Table: table, TableName: name, S3URL: s3URL, Blobs: blobs, DDB: counter, Auth: authStore}
	api.A, api.B = webtest.NewTenant(t, authStore), webtest.NewTenant(t, authStore)

	authn := auth.NewAuthenticator(authStore, auth.MaxCacheTTL)
	traces := ddb.NewTraceStore(table)
	judgeStore := ddb.NewJudgeStore(table)
	feedbackStore := ddb.NewFeedbackStore(table)
	mux := http.NewServeMux()
	web.Mount(mux, prompts.Routes, prompts.NewHandler(prompt.NewService(ddb.NewPromptStore(table)), authn))
	urls := tracing.AttachmentURLs{Presigner: blobs}
	web.Mount(mux, tracing.IngestRoutes, tracing.NewIngestHandler(trace.NewService(traces, blobs, pricing.NewPricer(pricing.Default())), authn, urls))
	web.Mount(mux, tracing.QueryRoutes, tracing.NewQueryHandler(trace.NewQueries(traces, blobs), authn, urls))
	web.Mount(mux, judges.Routes, judges.NewHandler(judge.NewService(judgeStore), judgeStore, authn))
	web.Mount(mux, feedback.Routes, feedback.NewHandler(feedback.Deps{
		Feedback: fb.NewService(feedbackStore), Reader: feedbackStore,
		Links:       fb.NewLinks(ddb.NewLinkStore(table), o.LinkRate),
		Completions: traces, Blobs: blobs,
	}, authn))
	mux.Handle("/", web.Chain(http.HandlerFunc(web.NotFound)))
	api.Handler = mux
	counter.Reset()
	return api
}

// KeyFor issues another key of tenant's project for another user.
func (api *API) KeyFor(t testing.TB, tenant Tenant, userID string) string {
	t.Helper()
	secret, k, err := auth.NewKey(auth.KeySpec{ProjectID: tenant.ProjectID, User: auth.User{ID: userID}}, time.Now())
	require.NoError(t, err)
	require.NoError(t, api.Auth.CreateKey(context.Background(), k))
	return secret
}

// Response is a recorded response.
type Response = webtest.Response

// Do sends body (JSON-encoded unless it is a string or []byte) with key as bearer.
func (api *API) Do(t testing.TB, method, path, key string, body any) Response {
	t.Helper()
	return webtest.Do(t, api.Handler, method, path, key, body)
}

// MustDo is Do that requires status 200.
func (api *API) MustDo(t testing.TB, method, path, key string, body any) Response {
	t.Helper()
	res := api.Do(t, method, path, key, body)
	require.Equal(t, http.StatusOK, res.Status, "%s %s: %s", method, path, res.Body)
	return res
}

// EnsurePrompt creates a version of a prompt and returns its version id.
func (api *API) EnsurePrompt(t testing.TB, tenant Tenant, slug, content string) string {
	t.Helper()
	res := api.MustDo(t, "POST", "/v1/tasks/"+slug+"/prompt/versions/ensure", tenant.Key, map[string]any{"content": content})
	return res.Map(t)["id"].(string)
}

// LLMSpan is an SDK-shaped llm span linked to a prompt version.
func LLMSpan(spanID, traceID, sessionID, slug, versionID, input, output string, at time.Time) map[string]any {
	s := map[string]any{
		"id": spanID, "trace_id": traceID, "name": "chat", "kind": "llm",
		"started_at": float64(at.UnixMicro()) / 1e6, "ended_at": float64(at.Add(time.Second).UnixMicro()) / 1e6,
		"status": "ok", "input_data": input, "output_data": output,
		"attributes": map[string]any{
			"provider": "openai", "model": "gpt-4o-mini", "inputTokens": 100, "outputTokens": 20,
			"zeroeval": map[string]any{"task": slug, "prompt_slug": slug, "prompt_version_id": versionID},
		},
	}
	if sessionID != "" {
		s["session_id"] = sessionID
	}
	return s
}
