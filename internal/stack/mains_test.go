package stack_test

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/internal/stack"
	"github.com/plumehq/plume/shared/blob/blobtest"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/lambdaemu"
	"github.com/plumehq/plume/shared/lambdaemu/emutest"
	"github.com/plumehq/plume/shared/listindex"
	"github.com/plumehq/plume/shared/rollup"
)

// mainPackages reads the main package of every function from its Makefile target, the one SAM
// builds: "build-PromptsFunction:" followed by "... -o $(ARTIFACTS_DIR)/bootstrap ./functions/prompts/lambda".
func mainPackages(t *testing.T) map[string]string {
	t.Helper()
	makefile, err := os.ReadFile("../../Makefile")
	require.NoError(t, err)
	out := map[string]string{}
	for _, m := range buildTarget.FindAllStringSubmatch(string(makefile), -1) {
		out[m[1]] = "../../" + strings.TrimPrefix(m[2], "./")
	}
	return out
}

var buildTarget = regexp.MustCompile(`(?m)^build-(\w+):\n\t\$\(LAMBDA_BUILD\) -o \$\(ARTIFACTS_DIR\)/bootstrap (\./\S+)$`)

// TestMainsStart builds the real bootstrap of every function of the stack (for this host, from
// the package its Makefile target builds), runs it under the Runtime API emulator against
// DynamoDB Local and the embedded S3, and invokes it with an API Gateway event carrying an
// unknown key: the function must start, reach DynamoDB and answer 401 through its handler.
func TestMainsStart(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	mains := mainPackages(t)
	var pkgs []string
	for _, fn := range stack.Functions {
		pkgs = append(pkgs, mains[fn.Name])
	}
	prebuild(t, pkgs)
	for _, fn := range stack.Functions {
		t.Run(fn.Name, func(t *testing.T) {
			pkg, ok := mains[fn.Name]
			require.True(t, ok, "the Makefile has no build-%s target", fn.Name)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			emu := start(t, ctx, pkg, functionEnv(t, api, "TABLE_NAME="+api.TableName))
			raw, err := emu.Invoke(ctx, eventFor(t, fn.Routes))
			require.NoError(t, err, "%s did not start or failed the invocation", fn.Name)
			var res events.APIGatewayV2HTTPResponse
			require.NoError(t, json.Unmarshal(raw, &res), "response: %s", raw)
			assert.Equal(t, 401, res.StatusCode, "body: %s", res.Body)
		})
	}
}

// workerCases are how each worker of the stack is invoked and what its run must do: event is
// its sample event under events/, the one its schedule sends; seed prepares work for the run
// and returns the check that it was done.
var workerCases = map[string]struct {
	event string
	seed  func(t *testing.T, api *apitest.API) (check func(t *testing.T))
	// answer is what the run answers: null unless set.
	answer string
}{
	"EvaluatorFunction":       {event: "evaluator/object-created.json", seed: func(*testing.T, *apitest.API) func(*testing.T) { return func(*testing.T) {} }},
	"OptimizerWorkerFunction": {event: "optimizer/run-message.json", seed: func(*testing.T, *apitest.API) func(*testing.T) { return func(*testing.T) {} }},
	"RollupFunction":          {event: "rollups/stream-batch.json", seed: checkSampleSpanApplied, answer: `{"state":{}}`},
	"EventsFunction":          {event: "webhooks/stream-batch.json", seed: func(*testing.T, *apitest.API) func(*testing.T) { return func(*testing.T) {} }},
	"WebhookDeliveryFunction": {event: "webhooks/delivery-message.json", seed: func(*testing.T, *apitest.API) func(*testing.T) { return func(*testing.T) {} }},
	"MonitorFunction":         {event: "monitors/scheduled.json", seed: seedMonitor},
}

// TestWorkerMainsStart builds the real bootstrap of every worker of the stack, as its Makefile
// target does, runs it under the Runtime API emulator against DynamoDB Local, and invokes it
// with its sample event: it must start, do its job and answer without an error.
func TestWorkerMainsStart(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	mains := mainPackages(t)
	var pkgs []string
	for _, w := range stack.Workers {
		pkgs = append(pkgs, mains[w.Name])
	}
	prebuild(t, pkgs)
	for _, w := range stack.Workers {
		t.Run(w.Name, func(t *testing.T) {
			pkg, ok := mains[w.Name]
			require.True(t, ok, "the Makefile has no build-%s target", w.Name)
			tc, ok := workerCases[w.Name]
			require.True(t, ok, "workerCases has no event for %s", w.Name)
			event, err := os.ReadFile(filepath.Join("..", "..", "events", tc.event))
			require.NoError(t, err)
			check := tc.seed(t, api)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			emu := start(t, ctx, pkg, functionEnv(t, api, "TABLE_NAME="+api.TableName))
			raw, err := emu.Invoke(ctx, event)
			require.NoError(t, err, "%s did not start or failed the invocation", w.Name)
			assert.Equal(t, cmp.Or(tc.answer, "null"), string(raw))
			check(t)
		})
	}
}

// checkSampleSpanApplied checks that the span of the sample stream event (events/rollups) was
// counted in its project's rollups and is in its list index.
func checkSampleSpanApplied(t *testing.T, srv *apitest.API) func(t *testing.T) {
	return func(t *testing.T) {
		ctx := context.Background()
		at := time.UnixMicro(1764644400000000).UTC()
		m, err := rollup.Metrics(ctx, srv.Env.Rollups(), "events-sample",
			api.MetricsQuery{From: at.Truncate(time.Hour), To: at.Truncate(time.Hour).Add(time.Hour), Bucket: api.BucketHour})
		require.NoError(t, err)
		assert.Equal(t, int64(1), m.Totals.Spans)
		assert.Equal(t, int64(1), m.Totals.LLMCalls)
		assert.InDelta(t, 0.0021, m.Totals.Cost, 1e-12)

		index, err := srv.Env.ListIndex()
		require.NoError(t, err)
		parts, err := index.Partitions(ctx, "events-sample", listindex.Spans, at.Truncate(24*time.Hour), at.Add(24*time.Hour))
		require.NoError(t, err)
		require.Len(t, parts, 1)
		runs, err := index.OpenRuns(ctx, parts[0])
		require.NoError(t, err)
		it := listindex.Scan(runs, listindex.ValueRange(listindex.DimKind, listindex.String("llm")), false)
		require.True(t, it.Next(ctx), "the span is listed among llm spans: %v", it.Err())
		key, err := listindex.Parse(it.Key())
		require.NoError(t, err)
		assert.Equal(t, "0b9c4e1a-6f3d-4a2e-9c1b-7d8e5f4a3b2c", key.ID)
		assert.False(t, it.Next(ctx))
	}
}

// TestMainCannotStart: a function whose configuration is incomplete exits at init, and the
// emulator reports it, so a main that cannot start fails its test.
func TestMainCannotStart(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	mains := mainPackages(t)
	tests := []struct {
		function string
		env      []string
	}{
		{"PromptsFunction", nil}, // no TABLE_NAME
		{"TracingIngestFunction", []string{"TABLE_NAME=" + api.TableName, "BUCKET_NAME="}},
		{"MonitorFunction", nil}, // a worker: no TABLE_NAME either
	}
	for _, tt := range tests {
		t.Run(tt.function, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			emu := start(t, ctx, mains[tt.function], functionEnv(t, api, tt.env...))
			_, err := emu.Invoke(ctx, eventFor(t, []string{"GET /healthz"}))
			require.Error(t, err)
			assert.True(t, errors.Is(err, lambdaemu.ErrExited), "error: %v", err)
		})
	}
}

// binaries are the bootstraps built by this test binary, by package: each is built once.
var binaries struct {
	sync.Mutex
	dir   string
	built map[string]string
}

// prebuild builds the bootstraps of pkgs two at a time, ahead of the tests that start them.
func prebuild(t *testing.T, pkgs []string) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for _, pkg := range pkgs {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			bootstrap(t, pkg)
		})
	}
	wg.Wait()
}

// bootstrap builds the main package pkg for this host as the Makefile builds it for Lambda, once
// per test binary, and returns the executable's path.
func bootstrap(t *testing.T, pkg string) string {
	binaries.Lock()
	if binaries.built == nil {
		binaries.dir, binaries.built = testDir, map[string]string{}
	}
	bin, ok := binaries.built[pkg]
	binaries.Unlock()
	if ok {
		return bin
	}
	bin = filepath.Join(binaries.dir, strings.ReplaceAll(strings.Trim(pkg, "./"), "/", "_"))
	require.NoError(t, emutest.Build(pkg, bin))
	binaries.Lock()
	binaries.built[pkg] = bin
	binaries.Unlock()
	return bin
}

// start runs the bootstrap of pkg under the emulator with env until the test ends.
func start(t *testing.T, ctx context.Context, pkg string, env []string) *lambdaemu.Emulator {
	t.Helper()
	emu, err := lambdaemu.Start(ctx, lambdaemu.Config{Binary: bootstrap(t, pkg), Env: env, Stdout: t.Output(), Stderr: t.Output()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = emu.Close() })
	return emu
}

// startDeployed is start with the invocation deadline the function has when deployed (its
// Timeout in template.yaml), for tests whose invocations do real work: the emulator's default
// deadline would cut them on a slow machine where a deployment would not.
func startDeployed(t *testing.T, ctx context.Context, logicalID string, env []string) *lambdaemu.Emulator {
	t.Helper()
	emu, err := lambdaemu.Start(ctx, lambdaemu.Config{Binary: bootstrap(t, mainPackages(t)[logicalID]), Env: env,
		Timeout: deployedTimeout(t, logicalID), Stdout: t.Output(), Stderr: t.Output()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = emu.Close() })
	return emu
}

// deployedTimeout is the Timeout template.yaml gives logicalID (its own, else the Globals').
func deployedTimeout(t *testing.T, logicalID string) time.Duration {
	t.Helper()
	raw, err := os.ReadFile("../../template.yaml")
	require.NoError(t, err)
	type function struct {
		Timeout int `yaml:"Timeout"`
	}
	var tpl struct {
		Globals struct {
			Function function `yaml:"Function"`
		} `yaml:"Globals"`
		Resources map[string]struct {
			Properties function `yaml:"Properties"`
		} `yaml:"Resources"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &tpl))
	res, ok := tpl.Resources[logicalID]
	require.True(t, ok, "template.yaml has no %s", logicalID)
	seconds := cmp.Or(res.Properties.Timeout, tpl.Globals.Function.Timeout)
	require.Positive(t, seconds, "%s has no Timeout", logicalID)
	return time.Duration(seconds) * time.Second
}

// testDir holds the bootstraps; TestMain removes it.
var testDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "plume-mains-")
	if err != nil {
		panic(err)
	}
	testDir = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// functionEnv is a function's environment against the test's DynamoDB Local and S3, plus extra.
func functionEnv(t *testing.T, api *apitest.API, extra ...string) []string {
	env := []string{
		"BUCKET_NAME=plume-test",
		"AWS_ENDPOINT_URL_DYNAMODB=" + ddbtest.Endpoint(t), "AWS_ENDPOINT_URL_S3=" + api.S3URL,
		"AWS_ACCESS_KEY_ID=" + blobtest.AccessKeyFor(t), "AWS_SECRET_ACCESS_KEY=" + blobtest.SecretKey, "AWS_REGION=us-east-1",
		// OptimizerFunction needs its queue; no test here starts a run.
		"PLUME_OPTIMIZATION_QUEUE_URL=http://127.0.0.1:9/000000000000/unused",
		// The webhook workers need theirs; the sample events queue nothing.
		"PLUME_WEBHOOK_QUEUE_URL=http://127.0.0.1:9/000000000000/unused",
	}
	return append(env, extra...)
}

// eventFor is an API Gateway HTTP API event for the first authenticated route key of routes,
// its wildcards filled in, with a key that does not exist.
func eventFor(t *testing.T, routes []string) []byte {
	t.Helper()
	routeKey := routes[0]
	for _, r := range routes {
		if r != "GET /healthz" && r != "GET /openapi.json" { // the open routes
			routeKey = r
			break
		}
	}
	method, path, _ := strings.Cut(routeKey, " ")
	if method == "ANY" {
		method = "GET"
	}
	path = wildcard.ReplaceAllString(path, "x")
	ev := events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: routeKey, RawPath: path,
		Headers: map[string]string{"authorization": "Bearer plm_NoSuchKey000000000000000000000000000000", "content-type": "application/json"},
		Body:    "{}",
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RequestID: "mains-test", Stage: "$default", RouteKey: routeKey,
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: path, Protocol: "HTTP/1.1"},
		},
	}
	raw, err := json.Marshal(ev)
	require.NoError(t, err)
	return raw
}

// seedMonitor creates a monitor of a project without spans that is ok with none (cost below
// a dollar, no minimum of samples) and checks that the run evaluated it: no_data to ok.
func seedMonitor(t *testing.T, srv *apitest.API) func(t *testing.T) {
	var m api.Monitor
	srv.MustDo(t, "POST", "/projects/"+srv.A.ProjectID+"/monitors", srv.A.Key, map[string]any{
		"name": "spend", "metric": "cost", "window": "5m", "comparison": "gt", "threshold": 1, "min_samples": 0,
	}).Decode(t, &m)
	require.Equal(t, api.MonitorNoData, m.State)
	return func(t *testing.T) {
		srv.MustDo(t, "GET", "/projects/"+srv.A.ProjectID+"/monitors/"+m.ID, srv.A.Key, nil).Decode(t, &m)
		assert.Equal(t, api.MonitorOK, m.State, "the run evaluated the monitor")
		require.Len(t, m.History, 1)
		assert.Equal(t, api.MonitorNoData, m.History[0].From)
	}
}
