package main

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/plumehq/plume/functions/evaluator"
	"github.com/plumehq/plume/functions/optimizer"
	"github.com/plumehq/plume/internal/app"
	"github.com/plumehq/plume/shared/asyncinvoke"
	"github.com/plumehq/plume/shared/awsjson"
	"github.com/plumehq/plume/shared/blob"
	"github.com/plumehq/plume/shared/config"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/deadletter"
	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/llm/fakemodel"
)

// localModels is the model client of plume-local: the real providers when any is configured
// (a provider's key or base URL, Bedrock's endpoint, or PLUME_PROVIDER_SECRET), else the fake
// model server started here, in-process, so that judges run with simulated verdicts and
// nothing leaves the machine. simulated is the fake server's URL ("" for real providers);
// stop stops it.
func localModels(ctx context.Context, cfg config.Config, awsCfg aws.Config, env func(string) string) (client *llm.Client, simulated string, stop func(), err error) {
	if cfg.ProviderSecret != "" || providersConfigured(env) || env("PLUME_FAKE_MODELS") == "0" {
		client, err := app.ModelsFromEnv(ctx, cfg, awsCfg, env)
		return client, "", func() {}, err
	}
	ln, err := net.Listen("tcp", orDefault(env("PLUME_FAKE_MODEL_ADDR"), "127.0.0.1:0"))
	if err != nil {
		return nil, "", nil, fmt.Errorf("start the fake model server (PLUME_FAKE_MODEL_ADDR): %w", err)
	}
	srv := &http.Server{Handler: fakemodel.New(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	url := "http://" + ln.Addr().String()
	fake := func(k string) string {
		switch k {
		case "OPENAI_BASE_URL":
			return url + "/v1"
		case "ANTHROPIC_BASE_URL":
			return url
		case "OPENAI_API_KEY", "ANTHROPIC_API_KEY":
			return "sk-plume-local-fake"
		}
		return env(k)
	}
	client, err = app.ModelsFromEnv(ctx, cfg, awsCfg, fake)
	return client, url, func() { _ = srv.Close() }, err
}

// providersConfigured reports whether the environment names any model provider.
func providersConfigured(env func(string) string) bool {
	for _, name := range llm.EnvNames() {
		if name != "PLUME_JUDGE_MODEL" && env(name) != "" && !strings.HasPrefix(name, "AWS_") {
			return true
		}
	}
	return env("AWS_ENDPOINT_URL_BEDROCK_RUNTIME") != ""
}

// judges runs the judge runner on the bucket's new span batches and backfill requests,
// in-process, as EventBridge and Lambda run EvaluatorFunction: each stored object becomes an
// Object Created event, invoked asynchronously, retried twice (after PLUME_EVALUATOR_RETRY_DELAY
// and twice that; Lambda waits 1 and 2 minutes) and then sent to the dead-letter queue
// PLUME_EVALUATION_DLQ_URL (an SQS queue URL; without one, the give-up is logged). The
// returned function stops taking events and waits for those in progress.
func judges(ctx context.Context, plume *app.Env, blobs *blob.Store, awsCfg aws.Config, env func(string) string) (func(), error) {
	runner, err := evaluator.FromEnv(ctx, plume)
	if err != nil {
		return nil, err
	}
	delay, err := time.ParseDuration(orDefault(env("PLUME_EVALUATOR_RETRY_DELAY"), "1m"))
	if err != nil || delay <= 0 {
		return nil, fmt.Errorf("PLUME_EVALUATOR_RETRY_DELAY %q: want a positive duration such as 1m", env("PLUME_EVALUATOR_RETRY_DELAY"))
	}
	cfg := asyncinvoke.Config{
		Retries:     2,
		Delay:       func(attempt int) time.Duration { return time.Duration(attempt) * delay },
		Concurrency: max(plume.Config.JudgeConcurrency, 2),
		FunctionArn: "arn:aws:lambda:local:000000000000:function:EvaluatorFunction",
	}
	if url := env("PLUME_EVALUATION_DLQ_URL"); url != "" {
		q := deadletter.New(awsjson.New(awsCfg, awsjson.SQS), url)
		cfg.OnFailure = q.Send
	}
	inv := asyncinvoke.New(runner.Handle, cfg)
	blobs.OnCreated(func(key string) {
		if !strings.HasPrefix(key, "spans/") && !strings.HasPrefix(key, "backfills/") && !strings.HasPrefix(key, "experiment-judges/") {
			return
		}
		payload, err := evaluator.ObjectEvent(blobs.Bucket(), key, time.Now())
		if err != nil {
			slog.Error("plume-local: object event not sent", "key", key, "error", err)
			return
		}
		inv.Invoke(payload)
	})
	return func() {
		blobs.OnCreated(nil)
		closeCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := inv.Close(closeCtx); err != nil {
			slog.Warn("plume-local: judge runs still in progress at exit", "error", err)
		}
	}, nil
}

// optimizations serves the queue of optimization runs in-process with the optimizer worker, as
// OptimizerWorkerFunction serves its SQS queue in a deployment (a failed run message is retried
// twice, after Lambda's delays), and resumes the runs whose worker is gone every interval, as
// the worker's schedule does. The returned function waits for the runs in progress.
func optimizations(ctx context.Context, plume *app.Env, runs *app.LocalQueue, interval time.Duration) (func(), error) {
	w, err := optimizer.WorkerFromEnv(ctx, plume)
	if err != nil {
		return nil, err
	}
	runs.Serve(w.Handle, asyncinvoke.Config{Retries: 2, Concurrency: 2,
		FunctionArn: "arn:aws:lambda:local:000000000000:function:OptimizerWorkerFunction"})
	resumeCtx, stopResumes := context.WithCancel(ctx)
	var resumes sync.WaitGroup
	resumes.Go(func() {
		every(resumeCtx, interval, func(ctx context.Context, _ []byte) error { return w.ResumeStale(ctx) })
	})
	return func() {
		stopResumes()
		resumes.Wait()
		closeCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := runs.Close(closeCtx); err != nil {
			slog.Warn("plume-local: optimization runs still in progress at exit", "error", err)
		}
	}, nil
}

// rollups applies the table's change stream to the trace and session aggregates, the metrics'
// rollups and the list index in-process (app.Env.StreamConsumer), as RollupFunction's event
// source mapping does in a deployment: every shard in order, half a second apart when idle, a
// failed batch read again after a second, in tumbling windows of a minute at most that also
// end when the shard has nothing new (so the metrics follow the writes within a second here).
// DynamoDB Local serves the Streams API on its own endpoint (AWS_ENDPOINT_URL_DYNAMODB), which
// AWS_ENDPOINT_URL_DYNAMODB_STREAMS overrides. The returned function stops polling and waits
// for the batch in progress.
func rollups(ctx context.Context, plume *app.Env, db ddb.TableDescriber, awsCfg aws.Config, env func(string) string) (func(), error) {
	apply, err := plume.StreamConsumer()
	if err != nil {
		return nil, err
	}
	return pollStream(ctx, plume, db, awsCfg, env, ddb.StreamPoller{ApplyWindow: apply, Window: time.Minute}), nil
}

// pollStream polls the table's change stream in the background, applying each batch with
// consumer's Apply (or ApplyWindow, in its windows), and returns the function that stops it.
func pollStream(ctx context.Context, plume *app.Env, db ddb.TableDescriber, awsCfg aws.Config, env func(string) string,
	consumer ddb.StreamPoller) func() {
	endpoint := cmp.Or(env("AWS_ENDPOINT_URL_DYNAMODB_STREAMS"), env("AWS_ENDPOINT_URL_DYNAMODB"), env("AWS_ENDPOINT_URL"))
	p := &ddb.StreamPoller{DB: db, TableName: plume.Config.Table, Streams: ddb.NewStreamsClient(awsCfg, endpoint),
		Apply: consumer.Apply, ApplyWindow: consumer.ApplyWindow, Window: consumer.Window, Interval: 500 * time.Millisecond, Retry: time.Second}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = p.Run(ctx) })
	return func() {
		cancel()
		wg.Wait()
	}
}

// webhooks raises the events from the table's change stream and delivers them, in-process, as
// EventsFunction (its own poller of the stream) and WebhookDeliveryFunction (the deliveries'
// queue, hooks) do in a deployment; the deliverer retries a failed attempt itself, with
// backoff (PLUME_WEBHOOK_RETRY_BASE, PLUME_WEBHOOK_RETRY_WINDOW), and posts to non-public
// hosts only when PLUME_WEBHOOK_ALLOWED_HOSTS lists them. The returned function stops both.
func webhooks(ctx context.Context, plume *app.Env, hooks *app.LocalQueue, db ddb.TableDescriber, awsCfg aws.Config, env func(string) string) (func(), error) {
	d, err := plume.Deliverer()
	if err != nil {
		return nil, err
	}
	hooks.Serve(d.Handle, asyncinvoke.Config{Retries: 2, Concurrency: 4,
		FunctionArn: "arn:aws:lambda:local:000000000000:function:WebhookDeliveryFunction"})
	apply, err := plume.EventConsumer()
	if err != nil {
		return nil, err
	}
	stopPoller := pollStream(ctx, plume, db, awsCfg, env, ddb.StreamPoller{Apply: apply})
	return func() {
		stopPoller()
		closeCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := hooks.Close(closeCtx); err != nil {
			slog.Warn("plume-local: webhook deliveries still in progress at exit", "error", err)
		}
	}, nil
}
