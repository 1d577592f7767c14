package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"golang.org/x/sync/errgroup"

	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/awsjson"
	"github.com/plumehq/plume/shared/blob"
	"github.com/plumehq/plume/shared/config"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/eventbus"
	"github.com/plumehq/plume/shared/feedback"
	"github.com/plumehq/plume/shared/judge"
	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/llm/pricetable"
	"github.com/plumehq/plume/shared/monitor"
	"github.com/plumehq/plume/shared/pricing"
	"github.com/plumehq/plume/shared/prompt"
	"github.com/plumehq/plume/shared/ratelimit"
	"github.com/plumehq/plume/shared/safefetch"
	"github.com/plumehq/plume/shared/signal"
	"github.com/plumehq/plume/shared/trace"
	"github.com/plumehq/plume/shared/webhook"
)

// Clients are the AWS clients an Env is built on.
type Clients struct {
	// DynamoDB reaches the table named by the configuration.
	DynamoDB ddb.API
	// Blobs is the bucket; nil when the configuration names none (functions that need it
	// then fail to build).
	Blobs *blob.Store
	// Models builds the model client on first use, so that only the functions that call
	// models read the provider keys (ModelsFromEnv); nil when the process calls no model.
	Models func(context.Context) (*llm.Client, error)
	// Optimizations queues optimization runs for the optimizer worker (an SQSQueue in a
	// deployment, a LocalQueue locally); nil: runs cannot start.
	Optimizations Queue
	// Webhooks queues webhook deliveries for the delivery worker (an SQSQueue in a
	// deployment, a LocalQueue locally); nil: events are not delivered.
	Webhooks webhook.Queue
	// WebhookDeadLetter receives the deliveries given up (PLUME_WEBHOOK_DLQ_URL); nil: none.
	WebhookDeadLetter Queue
	// EventBus is the EventBridge bus every event is put on (PLUME_EVENT_BUS_NAME,
	// EventBusFromAWS); nil: events go to webhooks only.
	EventBus *eventbus.Bus
}

// EventBusFromAWS is the bus PLUME_EVENT_BUS_NAME names (cfg.EventBusName), reached with the
// AWS configuration's credentials and endpoint (moto's in plume-local), or nil when it names
// none.
func EventBusFromAWS(cfg config.Config, awsCfg aws.Config) *eventbus.Bus {
	if cfg.EventBusName == "" {
		return nil
	}
	return eventbus.New(eventbus.NewClient(awsCfg), cfg.EventBusName)
}

// ModelsFromEnv builds the model client of a process: the providers' keys and endpoints from
// the variables llm.ConfigFromEnv reads, through getenv, with the values of the Secrets
// Manager secret cfg.ProviderSecret (when set) taking precedence; Bedrock signed with the AWS
// credentials of awsCfg; every call priced from the shipped price table. The secret is read
// once, here: a rotated key reaches new execution environments.
func ModelsFromEnv(ctx context.Context, cfg config.Config, awsCfg aws.Config, getenv func(string) string) (*llm.Client, error) {
	if cfg.ProviderSecret != "" {
		withSecret, err := config.ProviderSecretEnv(ctx, awsjson.New(awsCfg, awsjson.SecretsManager), cfg.ProviderSecret, getenv)
		if err != nil {
			return nil, fmt.Errorf("read the provider keys (PLUME_PROVIDER_SECRET): %w", err)
		}
		getenv = withSecret
	}
	return llm.New(llm.ConfigFromEnv(getenv), llm.Options{
		Pricer:         pricetable.New(pricing.Default()),
		AWSCredentials: awsCfg.Credentials,
	}), nil
}

// ClientsFromAWS builds the clients of a deployed function from the AWS configuration.
func ClientsFromAWS(cfg config.Config, awsCfg aws.Config) Clients {
	c := Clients{DynamoDB: ddb.NewClient(awsCfg, cfg.CustomDynamoDBEndpoint)}
	if cfg.Bucket != "" {
		c.Blobs = blob.New(blob.NewClient(awsCfg, false), cfg.Bucket)
	}
	return c
}

// Env is what every function is built from: the configuration, the clients and the stores and
// services made of them. What holds state or a cache (the authenticator's key cache, the
// pricer's price cache, the tracing service with its attachment fetcher, the feedback links'
// count of unknown tokens) is built once, on first use, and shared by every area that asks:
// plume-local serves all areas with one of each, as a warm Lambda instance serves its own.
// Stateless services are cheap values, made per call.
type Env struct {
	Config config.Config

	table         *ddb.Table
	blobs         *blob.Store
	models        func(context.Context) (*llm.Client, error)
	optimizations Queue
	webhooks      webhook.Queue
	webhookDLQ    Queue
	eventBus      *eventbus.Bus
	now           func() time.Time

	authn        lazy[*auth.Authenticator]
	traces       lazy[*ddb.TraceStore]
	rollups      lazy[*ddb.RollupStore]
	listIndex    lazy[*ddb.ListIndexStore]
	prices       lazy[*ddb.PriceStore]
	pricer       lazy[*pricing.Pricer]
	traceService lazy[*trace.Service]
	judges       lazy[*ddb.JudgeStore]
	feedback     lazy[*ddb.FeedbackStore]
	links        lazy[*feedback.Links]
	modelClient  lazy[*llm.Client]
	limits       lazy[*ratelimit.Limiter]
}

// Option changes how an Env builds its services.
type Option func(*Env)

// WithClock makes time-dependent services read the time from now (tests).
func WithClock(now func() time.Time) Option { return func(e *Env) { e.now = now } }

// NewEnv returns the Env of cfg over c.
func NewEnv(cfg config.Config, c Clients, opts ...Option) *Env {
	e := &Env{Config: cfg, table: ddb.NewTable(c.DynamoDB, cfg.Table), blobs: c.Blobs, models: c.Models, optimizations: c.Optimizations,
		webhooks: c.Webhooks, webhookDLQ: c.WebhookDeadLetter, eventBus: c.EventBus}
	for _, o := range opts {
		o(e)
	}
	return e
}

// errNoBucket is the error of every function that needs the bucket when none is configured.
var errNoBucket = errors.New("BUCKET_NAME is not set")

// errNoModels is the error of every function that calls models in a process built without
// them.
var errNoModels = errors.New("this process has no model client")

// Now is the Env's clock: the one given WithClock, else time.Now.
func (e *Env) Now() time.Time {
	if e.now != nil {
		return e.now()
	}
	return time.Now()
}

// Table is the DynamoDB table.
func (e *Env) Table() *ddb.Table { return e.table }

// Blobs is the bucket, or an error when the configuration names none.
func (e *Env) Blobs() (*blob.Store, error) {
	if e.blobs == nil {
		return nil, errNoBucket
	}
	return e.blobs, nil
}

// Authn authenticates API keys, with the configured cache lifetime.
func (e *Env) Authn() *auth.Authenticator {
	return e.authn.get(func() *auth.Authenticator {
		return auth.NewAuthenticator(ddb.NewAuthStore(e.table), e.Config.AuthCacheTTL)
	})
}

// Prompts is the prompt registry.
func (e *Env) Prompts() *prompt.Service {
	store := ddb.NewPromptStore(e.table)
	return prompt.NewService(store).WithSplits(ddb.NewPromptChoices(store, e.Signals()), e.now)
}

// Prices stores the projects' own model prices.
func (e *Env) Prices() *ddb.PriceStore {
	return e.prices.get(func() *ddb.PriceStore { return ddb.NewPriceStore(e.table) })
}

// PriceTable is the shipped price table.
func (e *Env) PriceTable() *pricing.Table { return pricing.Default() }

// GatewayLimits enforces the gateway's per-project limits (Config.GatewayLimits), counted in
// the table; nil when no limit is set.
func (e *Env) GatewayLimits() *ratelimit.Limiter {
	return e.limits.get(func() *ratelimit.Limiter {
		l := e.Config.GatewayLimits
		if l.RequestsPerMinute == 0 && l.TokensPerMinute == 0 && l.DailyUSD == 0 {
			return nil
		}
		return ratelimit.New(ddb.NewRateLimitStore(e.table), l, e.now)
	})
}

// Pricer prices llm spans: a project's own price first, then the shipped table.
func (e *Env) Pricer() *pricing.Pricer {
	return e.pricer.get(func() *pricing.Pricer {
		return pricing.NewPricer(e.PriceTable()).WithOverrides(e.Prices())
	})
}

// Traces is the span, trace and session index; its items expire Config.SpanRetentionDays after
// their last write (none when 0), as the bucket's span objects do.
func (e *Env) Traces() *ddb.TraceStore {
	return e.traces.get(func() *ddb.TraceStore {
		return ddb.NewTraceStore(e.table, ddb.WithRetention(e.Config.SpanRetention()))
	})
}

// Aggregates applies the table's change stream to the trace and session aggregates (span,
// error and trace counts, cost, extent, root, members): part of StreamConsumer.
func (e *Env) Aggregates() *ddb.AggregateStore { return ddb.NewAggregateStore(e.Traces()) }

// Rollups are the metrics' counters per time bucket (GET /projects/{project_id}/metrics,
// RollupFunction); they expire with the spans they count.
func (e *Env) Rollups() *ddb.RollupStore {
	return e.rollups.get(func() *ddb.RollupStore { return ddb.NewRollupStore(e.table, e.Config.SpanRetention()) })
}

// ListIndex is the list index of spans, traces and sessions (shared/listindex): RollupFunction
// keeps it from the table's change stream, the lists read it. Its partitions expire with the
// spans they index.
func (e *Env) ListIndex() (*ddb.ListIndexStore, error) {
	return e.listIndex.getErr(func() (*ddb.ListIndexStore, error) {
		blobs, err := e.Blobs()
		if err != nil {
			return nil, err
		}
		return ddb.NewListIndexStore(e.table, blobs, ddb.ListIndexConfig{Retention: e.Config.SpanRetention(), Now: e.now}), nil
	})
}

// StreamConsumerFilter is RollupFunction's stream filter (template.yaml, held equal by infra's
// tests): span summaries, traces and sessions (the trace and session aggregates, the rollups
// and the list index), evaluations and feedback (the feedback index and the derived signals),
// and entities' signal records (a span's first A/B choice, ddb.SignalJoin); a span summary's
// A/B choices (its ab_choices) are joined from the same SPAN records.
var StreamConsumerFilter = ddb.StreamFilter{Keys: []string{"SPAN", "TRACE", "SESSION", "ENTITY"}, Prefixes: []string{"EVAL#", "FB#"}}

// EventConsumerFilter is EventsFunction's stream filter (template.yaml, held equal by infra's
// tests): the items ddb.EventsOf raises events for: judges, optimization runs, prompt tags and
// versions, dataset versions (V# too), monitors; and the deletion of a monitor while alerting
// (monitor.resolved).
var EventConsumerFilter = ddb.StreamFilter{Keys: []string{"JUDGE", "RUN"}, Prefixes: []string{"TAG#", "V#", "MON#"},
	Removals: []ddb.StreamRemoval{{Prefix: "MON#", Attr: "st", Value: "alerting"}}}

// StreamConsumer applies a batch of the table's change stream (one shard's records, in order,
// within the shard's tumbling window) to what is kept from it: the trace and session
// aggregates, the list index, the feedback index and the derived signals of spans in A/B tests
// (ddb.SignalJoin) at once, and the rollups at the window's end (ddb.RollupStore.ApplyWindow:
// their sums are the window's state, which it answers), each adding every record once whatever
// is delivered again. It applies the records StreamConsumerFilter passes, as Lambda hands
// RollupFunction; RollupFunction, plume-local's stream poller and the tests' DrainStream all
// apply the stream through it.
func (e *Env) StreamConsumer() (ddb.WindowApply, error) {
	index, err := e.ListIndex()
	if err != nil {
		return nil, err
	}
	aggregates, rollups, feedbackIndex := e.Aggregates(), e.Rollups(), e.FeedbackStore()
	join := ddb.NewSignalJoin(e.table, e.Signals())
	return func(ctx context.Context, shard string, records []ddb.StreamRecord, w ddb.StreamWindow) (map[string]string, error) {
		records = StreamConsumerFilter.Pass(records)
		var state map[string]string
		g, ctx := errgroup.WithContext(ctx)
		g.Go(func() (err error) {
			state, err = rollups.ApplyWindow(ctx, shard, records, w)
			return err
		})
		if len(records) > 0 {
			g.Go(func() error { return aggregates.Apply(ctx, shard, records) })
			g.Go(func() error { return index.Apply(ctx, shard, records) })
			g.Go(func() error { return feedbackIndex.Apply(ctx, shard, records) })
			g.Go(func() error { return join.Apply(ctx, shard, records) })
		}
		if err := g.Wait(); err != nil {
			return nil, err
		}
		return state, nil
	}, nil
}

// ApplyEach is a stream consumer with windows (StreamConsumer) applied as one without: each
// batch a window of its own.
func ApplyEach(apply ddb.WindowApply) func(context.Context, string, []ddb.StreamRecord) error {
	return func(ctx context.Context, shard string, records []ddb.StreamRecord) error {
		_, err := apply(ctx, shard, records, ddb.StreamWindow{Final: true})
		return err
	}
}

// TraceService ingests spans, traces and sessions (POST /spans and OTLP): priced, with
// attachments extracted from the configured hosts into the bucket.
func (e *Env) TraceService() (*trace.Service, error) {
	return e.traceService.getErr(func() (*trace.Service, error) {
		blobs, err := e.Blobs()
		if err != nil {
			return nil, err
		}
		extractor, err := trace.NewExtractor(blobs, trace.ExtractorConfig{Hosts: e.Config.AttachmentHosts, MaxBytes: e.Config.AttachmentMaxBytes})
		if err != nil {
			return nil, err
		}
		opts := []trace.Option{trace.WithExtractor(extractor)}
		if e.now != nil {
			opts = append(opts, trace.WithClock(e.now))
		}
		return trace.NewService(e.Traces(), blobs, e.Pricer(), opts...), nil
	})
}

// TraceQueries reads spans, traces and sessions: the lists from the list index where it holds
// them (trace.Queries' coverage), else by walking the time index.
func (e *Env) TraceQueries() (*trace.Queries, error) {
	blobs, err := e.Blobs()
	if err != nil {
		return nil, err
	}
	candidates := trace.WithCandidates(e.Traces().Candidates())
	index, err := e.ListIndex()
	if err != nil {
		return nil, err
	}
	return trace.NewQueries(e.Traces(), blobs, trace.WithIndex(index), candidates), nil
}

// JudgeStore stores judges and their evaluations.
func (e *Env) JudgeStore() *ddb.JudgeStore {
	return e.judges.get(func() *ddb.JudgeStore { return ddb.NewJudgeStore(e.table) })
}

// Judges is the judge service.
func (e *Env) Judges() *judge.Service { return judge.NewService(e.JudgeStore(), e.FeedbackStore()) }

// FeedbackStore stores human feedback and reads it back with evaluations: from the feedback
// index that StreamConsumer keeps.
func (e *Env) FeedbackStore() *ddb.FeedbackStore {
	return e.feedback.get(func() *ddb.FeedbackStore { return ddb.NewFeedbackStore(e.table).Indexed() })
}

// Feedback is the feedback service.
func (e *Env) Feedback() *feedback.Service { return feedback.NewService(e.FeedbackStore()) }

// FeedbackLinks issues and serves feedback links, at the configured rate per link; it counts
// unknown tokens per client, so it is shared.
func (e *Env) FeedbackLinks() *feedback.Links {
	return e.links.get(func() *feedback.Links {
		return feedback.NewLinks(ddb.NewLinkStore(e.table), e.Config.FeedbackLinkRate, e.now)
	})
}

// Signals records business signals and A/B choices and reports on the tests; the entities'
// records expire with the spans they join (Config.SpanRetentionDays).
func (e *Env) Signals() *signal.Service {
	return signal.NewService(ddb.NewSignalStore(e.table, e.Config.SpanRetention()), e.now)
}

// SignalRecords reads the entities' signal records (span, trace and session answers show their
// signals).
func (e *Env) SignalRecords() *ddb.SignalStore {
	return ddb.NewSignalStore(e.table, e.Config.SpanRetention())
}

// Models is the model client (Clients.Models), built once.
func (e *Env) Models(ctx context.Context) (*llm.Client, error) {
	return e.modelClient.getErr(func() (*llm.Client, error) {
		if e.models == nil {
			return nil, errNoModels
		}
		return e.models(ctx)
	})
}

// Optimizations stores optimization runs, their receipts and their cached model calls.
func (e *Env) Optimizations() *ddb.OptimizationStore { return ddb.NewOptimizationStore(e.table) }

// OptimizationExamples reads the examples of optimization runs: completions, their feedback
// and evaluations, and the spans' records in the bucket.
func (e *Env) OptimizationExamples() (*ddb.ExampleStore, error) {
	blobs, err := e.Blobs()
	if err != nil {
		return nil, err
	}
	return ddb.NewExampleStore(e.table, blobs), nil
}

// OptimizationQueue is the queue of optimization runs, or an error when the process has none.
func (e *Env) OptimizationQueue() (Queue, error) {
	if e.optimizations == nil {
		return nil, errors.New("PLUME_OPTIMIZATION_QUEUE_URL is not set")
	}
	return e.optimizations, nil
}

// Claims are the judge claims of the evaluator.
func (e *Env) Claims() *ddb.ClaimStore { return ddb.NewClaimStore(e.table) }

// WebhookStore keeps webhooks and their delivery logs.
func (e *Env) WebhookStore() *ddb.WebhookStore { return ddb.NewWebhookStore(e.table) }

// EventLog is the projects' event logs (shared/eventlog).
func (e *Env) EventLog() *ddb.EventLogStore { return ddb.NewEventLogStore(e.table) }

// WebhookQueue is the queue of webhook deliveries, or an error when the process has none.
func (e *Env) WebhookQueue() (webhook.Queue, error) {
	if e.webhooks == nil {
		return nil, errors.New("PLUME_WEBHOOK_QUEUE_URL is not set")
	}
	return e.webhooks, nil
}

// Webhooks manages the projects' webhooks; without a delivery queue, redeliveries are
// refused (errs.Unavailable).
func (e *Env) Webhooks() *webhook.Service {
	return webhook.NewService(e.WebhookStore(), e.webhooks, e.now)
}

// EventConsumer fans the events of a batch of the table's change stream (ddb.EventsOf) out to
// the webhooks subscribed to them (webhook.Fanout) and, at the same time, logs them in their
// projects' event logs (EventLog) and puts them on the EventBridge bus when there is one
// (Clients.EventBus). Any failing fails the batch, which is applied again: the fan-out and the
// log write nothing twice, and the events put again keep their ids. It reads the records
// EventConsumerFilter passes, as Lambda hands EventsFunction; EventsFunction, plume-local's
// poller and the tests' DrainStream apply the stream through it.
func (e *Env) EventConsumer() (func(ctx context.Context, shard string, records []ddb.StreamRecord) error, error) {
	q, err := e.WebhookQueue()
	if err != nil {
		return nil, err
	}
	store, log := e.WebhookStore(), e.EventLog()
	return func(ctx context.Context, _ string, records []ddb.StreamRecord) error {
		events, err := ddb.EventsOf(EventConsumerFilter.Pass(records))
		if err != nil || len(events) == 0 {
			return err
		}
		g, ctx := errgroup.WithContext(ctx)
		g.Go(func() error { return webhook.Fanout(ctx, store, q, events, e.Now().UTC()) })
		g.Go(func() error { return log.Append(ctx, events) })
		if e.eventBus != nil {
			g.Go(func() error { return e.eventBus.Put(ctx, events) })
		}
		return g.Wait()
	}, nil
}

// Deliverer attempts queued webhook deliveries through the SSRF-guarded fetcher (any public
// host, and the non-public ones of PLUME_WEBHOOK_ALLOWED_HOSTS); those given up go to the
// dead-letter queue (Clients.WebhookDeadLetter) when there is one.
func (e *Env) Deliverer() (*webhook.Deliverer, error) {
	q, err := e.WebhookQueue()
	if err != nil {
		return nil, err
	}
	fetcher, err := safefetch.New(safefetch.Config{AnyPublicHost: true, Hosts: e.Config.Webhooks.AllowedHosts,
		Timeout: 10 * time.Second, MaxBytes: 64 << 10, UserAgent: "Plume-Webhooks/1"})
	if err != nil {
		return nil, fmt.Errorf("PLUME_WEBHOOK_ALLOWED_HOSTS: %w", err)
	}
	retry := webhook.DefaultRetry
	retry.Base = cmp.Or(e.Config.Webhooks.RetryBase, retry.Base)
	retry.Window = cmp.Or(e.Config.Webhooks.RetryWindow, retry.Window)
	d := &webhook.Deliverer{Store: e.WebhookStore(), Queue: q, Poster: fetcher, Retry: retry, Now: e.Now}
	if e.webhookDLQ != nil {
		d.DeadLetter = e.webhookDLQ.Send
	}
	return d, nil
}

// lazy is a value built once, on first use.
type lazy[T any] struct {
	once sync.Once
	v    T
	err  error
}

func (l *lazy[T]) get(build func() T) T {
	l.once.Do(func() { l.v = build() })
	return l.v
}

func (l *lazy[T]) getErr(build func() (T, error)) (T, error) {
	l.once.Do(func() { l.v, l.err = build() })
	return l.v, l.err
}

// MonitorStore keeps the projects' monitors with their states.
func (e *Env) MonitorStore() *ddb.MonitorStore { return ddb.NewMonitorStore(e.table) }

// Monitors manages the projects' monitors; their notify lists are checked against the
// project's webhooks.
func (e *Env) Monitors() *monitor.Service {
	return monitor.NewService(e.MonitorStore(), e.WebhookStore(), e.now)
}

// MonitorEvaluator evaluates every project's monitors from the rollups (MonitorFunction's
// job, plume-local's every PLUME_MONITOR_INTERVAL); gateway_spend ones from the counters of
// the gateway's daily cap, no_data when no cap is set.
func (e *Env) MonitorEvaluator() *monitor.Evaluator {
	ev := &monitor.Evaluator{Store: e.MonitorStore(), Rollups: e.Rollups(), Now: e.Now}
	if l := e.GatewayLimits(); l != nil {
		ev.Spend = l // gateway_spend: the daily cap's counters (no_data without a cap)
	}
	return ev
}
