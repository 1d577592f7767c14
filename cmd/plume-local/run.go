package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/google/uuid"

	"github.com/plumehq/plume/functions/monitors"
	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/internal/app"
	"github.com/plumehq/plume/internal/stack"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/blob"
	"github.com/plumehq/plume/shared/blob/s3local"
	"github.com/plumehq/plume/shared/config"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/web"
)

// Defaults of the local stack; each can be overridden by its environment variable.
var localDefaults = map[string]string{
	"PLUME_ADDR":  "127.0.0.1:8080",
	"TABLE_NAME":  "plume",
	"BUCKET_NAME": "plume-local",
	"AWS_REGION":  "us-east-1",
	// As OptimizerWorkerFunction's ResumeRuns schedule in template.yaml.
	"PLUME_RESUME_INTERVAL": "15m",
	// As MonitorSchedule's default in template.yaml.
	"PLUME_MONITOR_INTERVAL": "1m",
}

// served are the functions plume-local serves: the whole stack's (stack.Functions), each behind
// API Gateway's and Lambda's limits as in a deployment (app.MountDeployed: a request whose
// event is over 6 MB is API Gateway's 413, an answer over Lambda's response payload its 500),
// so that what a deployment could not answer fails here too. A variable so that a test can
// serve one more function through the same front door.
var served = stack.Functions

// run starts the local stack and serves until ctx ends. Ready is announced on stdout.
func run(ctx context.Context, getenv func(string) string, stdout, stderr io.Writer) error {
	env := func(k string) string {
		if v := getenv(k); v != "" {
			return v
		}
		return localDefaults[k]
	}
	cfg, err := config.FromEnv(env)
	if err != nil {
		return err
	}
	resumeInterval, err := time.ParseDuration(env("PLUME_RESUME_INTERVAL"))
	if err != nil || resumeInterval <= 0 {
		return fmt.Errorf("PLUME_RESUME_INTERVAL %q: want a positive duration such as 15m", env("PLUME_RESUME_INTERVAL"))
	}
	monitorInterval, err := time.ParseDuration(env("PLUME_MONITOR_INTERVAL"))
	if err != nil || monitorInterval <= 0 {
		return fmt.Errorf("PLUME_MONITOR_INTERVAL %q: want a positive duration such as 1m", env("PLUME_MONITOR_INTERVAL"))
	}
	slog.SetDefault(web.NewLogger(stderr, cfg.LogLevel))
	if addr := env("PLUME_PPROF_ADDR"); addr != "" {
		closePprof, err := startPprof(addr)
		if err != nil {
			return err
		}
		defer closePprof()
	}

	awsCfg, err := config.AWS(ctx)
	if err != nil {
		return err
	}
	if awsCfg.Region == "" {
		awsCfg.Region = env("AWS_REGION")
	}

	s3Endpoint, closeS3, err := startS3(ctx, awsCfg, env)
	if err != nil {
		return err
	}
	defer closeS3()
	s3Cfg := awsCfg.Copy()
	if s3Endpoint != "" {
		s3Cfg.BaseEndpoint = aws.String(s3Endpoint)
	}
	blobs := blob.New(blob.NewClient(s3Cfg, true), cfg.Bucket)
	if err := blobs.EnsureBucket(ctx); err != nil {
		return fmt.Errorf("create bucket %s: %w", cfg.Bucket, err)
	}

	ln, err := net.Listen("tcp", env("PLUME_ADDR"))
	if err != nil {
		return fmt.Errorf("listen on %s (set PLUME_ADDR to use another address): %w", env("PLUME_ADDR"), err)
	}
	defer ln.Close() // Serve closes it; this is for the returns before Serve
	base := "http://" + ln.Addr().String()
	if cfg.PublicURL == "" {
		// Feedback-link URLs are built from configuration, never from a request's Host
		// (functions/feedback linkURL): plume-local's public address is its own.
		cfg.PublicURL = base
	}
	if cfg.GatewayURL == "" {
		// The gateway is served here too, streaming natively (no API Gateway buffers it).
		cfg.GatewayURL = base + "/v1"
	}

	client := ddb.NewClient(awsCfg, cfg.CustomDynamoDBEndpoint)
	if err := infra.CreateTable(ctx, client, cfg.Table); err != nil {
		return err
	}
	models, simulated, stopModels, err := localModels(ctx, cfg, awsCfg, env)
	if err != nil {
		return err
	}
	defer stopModels()
	runs, hooks := &app.LocalQueue{}, &app.LocalQueue{}
	plume := app.NewEnv(cfg, app.Clients{DynamoDB: client, Blobs: blobs, Optimizations: runs,
		Models: func(context.Context) (*llm.Client, error) { return models, nil }, Webhooks: hooks,
		EventBus: app.EventBusFromAWS(cfg, awsCfg)})
	dev, err := seed(ctx, ddb.NewAuthStore(plume.Table()), getenv, time.Now())
	if err != nil {
		return fmt.Errorf("seed dev project: %w", err)
	}
	handler, err := app.MountDeployed(plume, served)
	if err != nil {
		return err
	}
	evaluateMonitors, err := monitors.EvaluateFunction.Build(plume)
	if err != nil {
		return err
	}
	stopJudges, err := judges(ctx, plume, blobs, awsCfg, env)
	if err != nil {
		return err
	}
	defer stopJudges()
	stopOptimizer, err := optimizations(ctx, plume, runs, resumeInterval)
	if err != nil {
		return err
	}
	defer stopOptimizer()
	stopStream, err := rollups(ctx, plume, client, awsCfg, env)
	if err != nil {
		return err
	}
	defer stopStream()
	stopWebhooks, err := webhooks(ctx, plume, hooks, client, awsCfg, env)
	if err != nil {
		return err
	}
	defer stopWebhooks()
	monitorCtx, stopMonitors := context.WithCancel(ctx)
	var monitoring sync.WaitGroup
	monitoring.Go(func() { every(monitorCtx, monitorInterval, evaluateMonitors) })
	defer func() {
		stopMonitors()
		monitoring.Wait()
	}()

	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	printBanner(stdout, base, dev, cfg, s3Endpoint, resumeInterval, judgesLine(models, simulated), getenv)

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("shutdown: %w", err)
	}
	fmt.Fprintln(stdout, "plume-local stopped")
	return nil
}

// every runs job each interval until ctx ends, as an EventBridge schedule invokes a worker in
// a deployment (MonitorFunction's, OptimizerWorkerFunction's ResumeRuns); the job logs its own
// outcome.
func every(ctx context.Context, interval time.Duration, job app.Job) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			_ = job(ctx, nil)
		}
	}
}

// startS3 starts the embedded S3 server unless the SDK's configuration names an S3 endpoint.
// It returns the endpoint to use ("" for the SDK's own) and a function that stops the server.
func startS3(ctx context.Context, awsCfg aws.Config, env func(string) string) (string, func(), error) {
	if env("AWS_ENDPOINT_URL_S3") != "" || env("AWS_ENDPOINT_URL") != "" {
		return "", func() {}, nil
	}
	creds, err := awsCfg.Credentials.Retrieve(ctx)
	if err != nil {
		return "", nil, fmt.Errorf("AWS credentials for the embedded S3 (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, any values): %w", err)
	}
	srv, err := s3local.Start(orDefault(env("PLUME_S3_ADDR"), "127.0.0.1:0"), creds.AccessKeyID, creds.SecretAccessKey)
	if err != nil {
		return "", nil, fmt.Errorf("start embedded S3: %w", err)
	}
	return srv.URL(), func() { _ = srv.Close() }, nil
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// devProject is the seeded project and key.
type devProject struct {
	ProjectID string
	Key       string
}

// seed creates the dev project and key, honouring PLUME_DEV_PROJECT_ID and PLUME_DEV_API_KEY
// (random otherwise). Both may already exist (a persistent emulator): that is fine as long as
// the key belongs to the project.
func seed(ctx context.Context, store *ddb.AuthStore, getenv func(string) string, now time.Time) (devProject, error) {
	projectID := getenv("PLUME_DEV_PROJECT_ID")
	if projectID == "" {
		projectID = uuid.NewString()
	}
	if err := auth.ValidateProjectID(projectID); err != nil {
		return devProject{}, fmt.Errorf("PLUME_DEV_PROJECT_ID: %w", err)
	}
	err := store.CreateProject(ctx, auth.Project{ID: projectID, Name: "dev", CreatedAt: now.UTC()})
	if err != nil && !errs.Is(err, errs.CodeConflict) {
		return devProject{}, err
	}
	secret, key, err := auth.NewKey(auth.KeySpec{
		ProjectID: projectID, Secret: getenv("PLUME_DEV_API_KEY"), Label: "plume-local dev key",
		User: auth.User{ID: "dev", Email: "dev@localhost", Name: "Local Developer"},
	}, now)
	if err != nil {
		return devProject{}, fmt.Errorf("PLUME_DEV_API_KEY: %w", err)
	}
	err = store.CreateKey(ctx, key)
	if errs.Is(err, errs.CodeConflict) {
		existing, ferr := store.KeyByHash(ctx, key.Hash)
		if ferr != nil {
			return devProject{}, ferr
		}
		if existing.ProjectID != projectID {
			return devProject{}, fmt.Errorf("PLUME_DEV_API_KEY is already a key of project %s, not %s", existing.ProjectID, projectID)
		}
		err = nil
	}
	if err != nil {
		return devProject{}, err
	}
	return devProject{ProjectID: projectID, Key: secret}, nil
}

// judgesLine says which models judge, and loudly when the verdicts are simulated.
func judgesLine(models *llm.Client, simulated string) string {
	if simulated != "" {
		return "SIMULATED verdicts: no model provider is configured, so judges call the fake model\n" +
			"               server at " + simulated + " (set OPENAI_API_KEY, ANTHROPIC_API_KEY or\n" +
			"               AWS_ENDPOINT_URL_BEDROCK_RUNTIME to judge with real models)"
	}
	return "default model " + models.JudgeModel() + " (PLUME_JUDGE_MODEL)"
}

func printBanner(w io.Writer, base string, dev devProject, cfg config.Config, s3Endpoint string, resumeInterval time.Duration, judges string, getenv func(string) string) {
	s3 := "the SDK's configured endpoint"
	if s3Endpoint != "" {
		s3 = "embedded at " + s3Endpoint + " (SigV4 checked)"
	}
	dynamo := orDefault(getenv("AWS_ENDPOINT_URL_DYNAMODB"), orDefault(getenv("AWS_ENDPOINT_URL"), "AWS"))
	fmt.Fprintf(w, `
Plume is running at %[1]s
  project id : %[2]s
  API key    : %[3]s
  DynamoDB   : %[4]s (table %[5]s)
  S3         : %[6]s (bucket %[7]s)
  Optimizer  : stale runs resumed every %[8]s (PLUME_RESUME_INTERVAL)
  Metrics    : %[1]s/projects/<project>/metrics (rollups kept from the table's stream, in-process)
  Judges     : %[9]s
  Dashboard  : %[1]s/ui/ (sign in with the API key)
  MCP        : %[1]s/mcp (tool server for coding agents, Streamable HTTP, same key)
  Gateway    : %[1]s/v1/chat/completions (OpenAI-compatible, any configured provider, same key)

Open the dashboard in a browser and paste the API key into its sign-in page (the key is the
dev project's admin key; its Settings page issues more):
  %[1]s/ui/

Point the SDKs at it:
  export ZEROEVAL_API_URL=%[1]s ZEROEVAL_BASE_URL=%[1]s ZEROEVAL_API_KEY=%[3]s

Point the plume CLI at it (make cli builds bin/plume):
  bin/plume auth set --api-base-url %[1]s --project-id %[2]s --api-key %[3]s

Add it to a coding agent (any MCP client: http transport, this URL and header):
  claude mcp add --transport http plume %[1]s/mcp --header 'Authorization: Bearer %[3]s'

Try:
  curl -s %[1]s/v1/tasks/support-bot/prompt/versions/ensure \
    -H 'Authorization: Bearer %[3]s' -H 'Content-Type: application/json' \
    -d '{"content": "You are a helpful support agent for {{product}}."}'
  curl -s '%[1]s/v1/prompts/support-bot?tag=latest' -H 'Authorization: Bearer %[3]s'

Ctrl-C stops everything.
`, base, dev.ProjectID, dev.Key, dynamo, cfg.Table, s3, cfg.Bucket, resumeInterval, judges)
}
