// Package apitest runs the whole Plume REST API in-process for end-to-end tests: every function
// of internal/stack/restapi, built by the composition root (internal/app) and mounted as
// plume-local mounts it, over a fresh DynamoDB Local table and an embedded SigV4-checking S3,
// with two projects (A and B) to test tenancy between. The MCP tool server, a client of this
// API, is not mounted (client's own tests use this package, and the tool server imports
// client); its tests mount it beside API.Handler, and stack.Handler(API.Env) is the whole stack.
package apitest

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/functions/optimizer"
	"github.com/plumehq/plume/internal/app"
	"github.com/plumehq/plume/internal/faultproxy"
	"github.com/plumehq/plume/internal/stack/restapi"
	"github.com/plumehq/plume/internal/testlog"
	"github.com/plumehq/plume/internal/webtest"
	"github.com/plumehq/plume/shared/asyncinvoke"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/blob"
	"github.com/plumehq/plume/shared/blob/blobtest"
	"github.com/plumehq/plume/shared/config"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/eventbus"
	"github.com/plumehq/plume/shared/llm"
)

// API is the running API.
type API struct {
	Handler http.Handler
	// Env is what the API was built from: its stores and services, for checks beside the API.
	Env   *app.Env
	Table *ddb.Table
	// TableName and S3URL are where the API's data is, for real Lambda bootstraps run
	// beside it.
	TableName string
	S3URL     string
	Blobs     *blob.Store
	DDB       *ddbtest.Counter
	S3        *blobtest.Counter
	Auth      *ddb.AuthStore
	A, B      Tenant
	// DDBFaults and S3Faults are the fault proxies the API's DynamoDB and S3 clients send
	// through when Options.Faults is set, nil otherwise. Their rules, counts and logs start
	// empty: setting the tenants up goes through them, then New resets them.
	DDBFaults, S3Faults *faultproxy.Proxy
	// Optimizations is the in-process queue of optimization runs, served by the optimizer
	// worker when Options.Models is set.
	Optimizations *app.LocalQueue
	// Webhooks is the in-process queue of webhook deliveries, served by the deliverer
	// (app.Env.Deliverer): DrainStream fans the stream's events out to it.
	Webhooks *app.LocalQueue
	// StreamDDB and StreamS3 count the requests of the change stream's consumer
	// (app.Env.StreamConsumer: the aggregates, the rollups, the list index, the feedback index,
	// the signals' join), which runs beside the API (consumer): DDB and S3 count the API's own.
	StreamDDB *ddbtest.Counter
	StreamS3  *blobtest.Counter

	events   *ddb.StreamPoller
	consumer *consumer
}

// Tenant is a project and a key of it.
type Tenant = webtest.Tenant

// Options change the API under test.
type Options struct {
	// LinkRate is the feedback links' requests per minute (0: the default).
	LinkRate int
	// Config changes the configuration the API is built from (attachment hosts, limits ...).
	Config func(*config.Config)
	// Clock, when set, is the time the Env's services read (app.WithClock): the tracing
	// service, feedback links, the gateway's limits.
	Clock func() time.Time
	// Faults puts a fault proxy (internal/faultproxy) between the API and DynamoDB Local, and
	// another between the API and S3 (API.DDBFaults, API.S3Faults). Their clients make at most
	// two attempts (faultAttempts) a millisecond apart, so that a fault on every request fails
	// a request at once, with the SDK's usual choice of what to retry. Every store of API.Env
	// goes through the proxies, so a test removes its rules (Reset) before it reads back.
	Faults bool
	// Models is the model client of the Env (app.Clients.Models): the judge runner's. Nil
	// leaves the Env without one.
	Models *llm.Client
	// Optimizer, when set, changes the in-process optimizer worker (which runs only with
	// Models) before it serves the runs' queue.
	Optimizer func(*optimizer.Worker)
	// EventBus is the EventBridge bus the events are put on (app.Clients.EventBus); nil: none.
	EventBus *eventbus.Bus
}

// MinuteStart returns a clock (Options.Clock) that runs as the wall clock does from the start
// of the next minute: a test of a per-minute limit has a whole minute before its count rolls
// over, however slow the machine.
func MinuteStart() func() time.Time {
	start := time.Now()
	base := start.Truncate(time.Minute).Add(time.Minute)
	return func() time.Time { return base.Add(time.Since(start)) }
}

// faultAttempts is how many times the faulted clients send a request: once, and one retry.
const faultAttempts = 2

// fastRetryer retries as the SDK's standard retryer does (the same errors), but at most
// faultAttempts attempts, after a millisecond, and without the retry quota that a run of
// injected faults would exhaust (and then answer the quota's error instead of the fault's).
func fastRetryer() aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.MaxAttempts = faultAttempts
		o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return time.Millisecond, nil })
		o.RateLimiter = ratelimit.None
	})
}

// New starts the API for t: every function of the REST API, built by the composition root as
// plume-local and the deployed functions build them. What the API logs goes to t's output
// (internal/testlog): shown when t fails, not when it passes.
func New(t testing.TB, o Options) *API {
	t.Helper()
	testlog.Capture(t)
	client, counter, name := ddbtest.NewStreamTable(t)
	blobs, s3Counter, s3URL := blobtest.New(t)
	var ddbFaults, s3Faults *faultproxy.Proxy
	if o.Faults {
		ddbFaults = faultproxy.New(t, ddbtest.Endpoint(t))
		client = dynamodb.New(client.Options(), func(do *dynamodb.Options) {
			do.BaseEndpoint = aws.String(ddbFaults.URL())
			do.RetryMaxAttempts = 0 // the retryer's own
			do.Retryer = fastRetryer()
		})
		s3Faults = faultproxy.New(t, s3URL)
		blobs = blobtest.StoreAt(s3Faults.URL(), s3Counter, func(c *aws.Config) { c.Retryer = fastRetryer })
	}
	cfg := config.Config{Table: name, AuthCacheTTL: auth.MaxCacheTTL, FeedbackLinkRate: o.LinkRate}
	if o.Config != nil {
		o.Config(&cfg)
	}
	var opts []app.Option
	if o.Clock != nil {
		opts = append(opts, app.WithClock(o.Clock))
	}
	queue, hooks := &app.LocalQueue{}, &app.LocalQueue{}
	clients := app.Clients{DynamoDB: client, Blobs: blobs, Optimizations: queue, Webhooks: hooks, EventBus: o.EventBus}
	if o.Models != nil {
		clients.Models = func(context.Context) (*llm.Client, error) { return o.Models, nil }
	}
	env := app.NewEnv(cfg, clients, opts...)
	if o.Models != nil {
		// The optimizer worker serves the runs' queue in-process, as plume-local's does.
		w, err := optimizer.WorkerFromEnv(context.Background(), env)
		require.NoError(t, err)
		if o.Optimizer != nil {
			o.Optimizer(w)
		}
		queue.Serve(w.Handle, asyncinvoke.Config{Retries: 2, Delay: func(int) time.Duration { return 10 * time.Millisecond }})
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_ = queue.Close(ctx)
		})
	}
	serveWebhooks(t, env, hooks)
	authStore := ddb.NewAuthStore(env.Table())
	api := &API{Env: env, Optimizations: queue, Webhooks: hooks, Table: env.Table(), TableName: name, S3URL: s3URL, Blobs: blobs, DDB: counter, S3: s3Counter, Auth: authStore,
		DDBFaults: ddbFaults, S3Faults: s3Faults}
	api.A, api.B = webtest.NewTenant(t, authStore), webtest.NewTenant(t, authStore)
	h, err := restapi.Handler(env)
	require.NoError(t, err)
	// The stream's consumer, as RollupFunction runs it: an Env of its own, over clients of its
	// own (counted apart, never faulted).
	api.StreamDDB, api.StreamS3 = &ddbtest.Counter{}, &blobtest.Counter{}
	consumerEnv := app.NewEnv(cfg, app.Clients{DynamoDB: ddbtest.Client(t, api.StreamDDB), Blobs: blobtest.StoreAt(s3URL, api.StreamS3)}, opts...)
	apply, err := consumerEnv.StreamConsumer()
	require.NoError(t, err)
	consumer := api.poller(t, nil)
	consumer.ApplyWindow = apply // each drain ends its windows: a shard that has nothing new ends its window
	api.consumer = newConsumer(t, consumer)
	api.Handler = api.consumer.before(h)
	counter.Reset()
	if o.Faults {
		ddbFaults.Reset()
		s3Faults.Reset()
	}
	return api
}

// DrainStream applies every change of the table's stream so far as the stream's consumers do
// in a deployment and in plume-local: to the aggregates, the rollups and the indexes
// (app.Env.StreamConsumer, as RollupFunction does; the API does so itself before a request that
// follows a write), and to the events' fan-out to the webhooks (app.Env.EventConsumer, as
// EventsFunction does), which only DrainStream applies.
func (api *API) DrainStream(t testing.TB) {
	t.Helper()
	api.consumer.apply(true)
	if api.events == nil {
		events, err := api.Env.EventConsumer()
		require.NoError(t, err)
		api.events = api.poller(t, events)
	}
	drain(t, api.events)
}

// ReplayEvents applies the whole stream, from its oldest record, to the events' fan-out
// again, as Lambda does when it retries batches: what was fanned out already must not be
// delivered twice, nor with another id.
func (api *API) ReplayEvents(t testing.TB) {
	t.Helper()
	events, err := api.Env.EventConsumer()
	require.NoError(t, err)
	drain(t, api.poller(t, events))
}

// ReplayTolerating applies the whole stream, from its oldest record, with apply
// (Env.StreamConsumer or Env.EventConsumer) as Lambda does when a batch fails: the failed batch
// is read again, after failed is called (nil: nothing), until the stream is drained. It returns
// how many batches failed, for the crash tests that inject the failures.
func (api *API) ReplayTolerating(t testing.TB, apply func(context.Context, string, []ddb.StreamRecord) error, failed func()) int {
	t.Helper()
	p := api.poller(t, apply)
	failures := 0
	for idle, polls := 0, 0; idle < 2; polls++ {
		require.Less(t, polls, 200, "the stream drains")
		busy, err := p.Poll(context.Background())
		if err != nil {
			failures++
			if failed != nil {
				failed()
			}
			continue
		}
		if idle++; busy {
			idle = 0
		}
	}
	return failures
}

// poller is a poller of the table's stream, from its oldest record, applying apply.
func (api *API) poller(t testing.TB, apply func(context.Context, string, []ddb.StreamRecord) error) *ddb.StreamPoller {
	o := ddbtest.Client(t, nil).Options()
	streams := ddb.NewStreamsClient(aws.Config{Region: o.Region, Credentials: o.Credentials}, ddbtest.Endpoint(t))
	return &ddb.StreamPoller{DB: ddbtest.Client(t, nil), TableName: api.TableName, Streams: streams, Apply: apply}
}

// drain applies everything p's stream holds so far (ddb.StreamPoller.Drain).
func drain(t testing.TB, p *ddb.StreamPoller) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	require.NoError(t, p.Drain(ctx), "apply the table's stream")
}

// serveWebhooks serves the webhook deliveries' queue with the deliverer, in-process, as
// plume-local's does; a failed message (storage unreachable) is retried twice.
func serveWebhooks(t testing.TB, env *app.Env, q *app.LocalQueue) {
	d, err := env.Deliverer()
	require.NoError(t, err)
	q.Serve(d.Handle, asyncinvoke.Config{Retries: 2, Concurrency: 2, Delay: func(int) time.Duration { return 10 * time.Millisecond }})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = q.Close(ctx)
	})
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
