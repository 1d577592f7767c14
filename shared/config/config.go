// Package config reads a Plume process's settings from its environment and builds the AWS
// configuration from the SDK's own sources (credentials chain, region, AWS_ENDPOINT_URL*), so
// the same binary runs against AWS, DynamoDB Local, moto or LocalStack without code changes.
package config

import (
	"fmt"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/ratelimit"
)

// Config is what every Plume function and plume-local need.
type Config struct {
	Table        string        // TABLE_NAME: the DynamoDB table (required)
	Bucket       string        // BUCKET_NAME: the S3 bucket
	LogLevel     slog.Level    // LOG_LEVEL: debug, info (default), warn or error
	AuthCacheTTL time.Duration // PLUME_AUTH_CACHE_TTL: how long a resolved key is trusted (default and max 60s; 0 disables)
	// CustomDynamoDBEndpoint is true when AWS_ENDPOINT_URL_DYNAMODB or AWS_ENDPOINT_URL is set.
	CustomDynamoDBEndpoint bool

	// AttachmentHosts is PLUME_ATTACHMENT_HOSTS, comma-separated: the hosts URL attachments
	// of spans are fetched from ("cdn.example.com", "*.example.com", "127.0.0.1"). Empty (the
	// default): URLs are kept as references and never fetched. See trace.ExtractorConfig.
	AttachmentHosts []string
	// AttachmentMaxBytes is PLUME_ATTACHMENT_MAX_BYTES: the largest attachment stored or
	// uploaded, in bytes (0: the default, trace.DefaultMaxAttachmentBytes, 10 MiB).
	AttachmentMaxBytes int64
	// AttachmentURLTTL is PLUME_ATTACHMENT_URL_TTL: how long presigned attachment URLs last,
	// from 1s to 7 days (0: the default, 15 minutes).
	AttachmentURLTTL time.Duration
	// SpanRetentionDays is PLUME_SPAN_RETENTION_DAYS (the template's SpanRetentionDays): how
	// many days span data is kept, from 0 to 3650 (0, the default: forever). The bucket's
	// lifecycle rules expire span batches and attachments after that many days; the tracing
	// index items in the table expire that long after their last write (ddb.WithRetention).
	SpanRetentionDays int
	// PublicURL is PLUME_PUBLIC_URL: the base URL of feedback-link pages ("" = the base the
	// link was created through).
	PublicURL string
	// FeedbackLinkRate is PLUME_FEEDBACK_LINK_RATE: requests one feedback link serves per
	// minute (0: the default, feedback.DefaultLinkRate).
	FeedbackLinkRate int

	// ProviderSecret is PLUME_PROVIDER_SECRET: the id (name or ARN) of the Secrets Manager
	// secret that holds the model providers' keys ("" = the environment's variables only).
	ProviderSecret string
	// JudgeConcurrency is PLUME_JUDGE_CONCURRENCY: the judge model calls one evaluator runs at
	// a time (0: the default, functions/evaluator.DefaultConcurrency).
	JudgeConcurrency int
	// JudgeProviderConcurrency is PLUME_JUDGE_PROVIDER_CONCURRENCY: of those, the calls to one
	// provider (0: JudgeConcurrency).
	JudgeProviderConcurrency int
	// GatewayLimits are the model gateway's per-project limits: PLUME_GATEWAY_RPM,
	// PLUME_GATEWAY_TPM and PLUME_GATEWAY_DAILY_USD (ratelimit.ConfigFromEnv; unset: none).
	GatewayLimits ratelimit.Config
	// GatewayTrace is PLUME_GATEWAY_TRACE: which gateway calls are recorded as llm spans
	// besides those that ask, "off" (the default, also "") or "all" (gateway.ParseTraceMode),
	// lowercased. Read here so that the areas that report it (settings) need not import the
	// gateway.
	GatewayTrace string
	// GatewayBedrockModels is PLUME_GATEWAY_BEDROCK_MODELS, comma-separated model ids or their
	// ARNs (foundation models, inference profiles): the Bedrock models GET /v1/models lists
	// (Bedrock's ids are not the price table's). Any Bedrock model is served either way.
	GatewayBedrockModels []string
	// GatewayURL is PLUME_GATEWAY_URL: the OpenAI base URL applications send the gateway's
	// calls to (the template's GatewayFunctionUrl + "v1", which streams), reported by GET
	// /projects/{project_id}/gateway; "" when unknown (plume-local: the API's own base + /v1).
	GatewayURL string
	// OptimizationQueueURL is PLUME_OPTIMIZATION_QUEUE_URL: the SQS queue of optimization runs
	// ("" = none: runs cannot start, except in plume-local, which serves its own).
	OptimizationQueueURL string
	// SimulationModels is PLUME_SIMULATION_MODELS, comma-separated: the models every
	// optimization run is simulated with, beside its task model and its own config.models.
	SimulationModels []string
	// Webhooks is how events are delivered to webhooks (PLUME_WEBHOOK_*).
	Webhooks Webhooks
	// EventBusName is PLUME_EVENT_BUS_NAME: the EventBridge bus (a name or an ARN) every event
	// is put on ("" = none: events go to webhooks only). The template sets its EventBusName.
	EventBusName string
}

// Webhooks configures the delivery of events to webhooks.
type Webhooks struct {
	// AllowedHosts is PLUME_WEBHOOK_ALLOWED_HOSTS, comma-separated: non-public hosts webhooks
	// may post to ("127.0.0.1" in plume-local's tests). Any public host is allowed; loopback,
	// private and metadata addresses only when listed here (safefetch.Config.AnyPublicHost).
	AllowedHosts []string
	// QueueURL is PLUME_WEBHOOK_QUEUE_URL: the SQS queue of deliveries ("" = none: events are
	// not delivered, except in plume-local, which serves its own).
	QueueURL string
	// DeadLetterURL is PLUME_WEBHOOK_DLQ_URL: the SQS queue of deliveries given up ("" = the
	// give-up is only logged and kept in the delivery log).
	DeadLetterURL string
	// RetryBase is PLUME_WEBHOOK_RETRY_BASE, the wait after a delivery's first failed attempt
	// (doubled after each, at most 15 minutes), and RetryWindow PLUME_WEBHOOK_RETRY_WINDOW, how
	// long a delivery is retried (0: the defaults, webhook.DefaultRetry: 30s and 24h).
	RetryBase, RetryWindow time.Duration
}

// webhooksFromEnv reads the PLUME_WEBHOOK_* variables.
func webhooksFromEnv(getenv func(string) string) (Webhooks, error) {
	w := Webhooks{QueueURL: strings.TrimSpace(getenv("PLUME_WEBHOOK_QUEUE_URL")), DeadLetterURL: strings.TrimSpace(getenv("PLUME_WEBHOOK_DLQ_URL"))}
	for h := range strings.SplitSeq(getenv("PLUME_WEBHOOK_ALLOWED_HOSTS"), ",") {
		if h = strings.TrimSpace(h); h != "" {
			w.AllowedHosts = append(w.AllowedHosts, h)
		}
	}
	for _, v := range []struct {
		name string
		dst  *time.Duration
	}{{"PLUME_WEBHOOK_RETRY_BASE", &w.RetryBase}, {"PLUME_WEBHOOK_RETRY_WINDOW", &w.RetryWindow}} {
		if s := getenv(v.name); s != "" {
			d, err := time.ParseDuration(s)
			if err != nil || d <= 0 || d > 7*24*time.Hour {
				return Webhooks{}, fmt.Errorf("%s %q: want a positive duration such as 30s, at most 168h", v.name, s)
			}
			*v.dst = d
		}
	}
	return w, nil
}

// maxJudgeConcurrency caps the PLUME_JUDGE_*CONCURRENCY variables.
const maxJudgeConcurrency = 256

// maxAttachmentBytes caps PLUME_ATTACHMENT_MAX_BYTES: an attachment is held in memory.
const maxAttachmentBytes = 1 << 30

// maxSpanRetentionDays caps PLUME_SPAN_RETENTION_DAYS: ten years.
const maxSpanRetentionDays = 3650

// maxAttachmentURLTTL is the longest life S3 allows a presigned URL.
const maxAttachmentURLTTL = 7 * 24 * time.Hour

// FromEnv reads the configuration through getenv.
func FromEnv(getenv func(string) string) (Config, error) {
	c := Config{
		Table:                  getenv("TABLE_NAME"),
		Bucket:                 getenv("BUCKET_NAME"),
		AuthCacheTTL:           auth.MaxCacheTTL,
		CustomDynamoDBEndpoint: getenv("AWS_ENDPOINT_URL_DYNAMODB") != "" || getenv("AWS_ENDPOINT_URL") != "",
	}
	if c.Table == "" {
		return Config{}, fmt.Errorf("TABLE_NAME is not set")
	}
	if v := getenv("LOG_LEVEL"); v != "" {
		if err := c.LogLevel.UnmarshalText([]byte(v)); err != nil {
			return Config{}, fmt.Errorf("LOG_LEVEL %q: %w", v, err)
		}
	}
	if v := getenv("PLUME_AUTH_CACHE_TTL"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 || d > auth.MaxCacheTTL {
			return Config{}, fmt.Errorf("PLUME_AUTH_CACHE_TTL %q: want a duration from 0s to %s", v, auth.MaxCacheTTL)
		}
		c.AuthCacheTTL = d
	}
	for h := range strings.SplitSeq(getenv("PLUME_ATTACHMENT_HOSTS"), ",") {
		if h = strings.TrimSpace(h); h != "" {
			c.AttachmentHosts = append(c.AttachmentHosts, h)
		}
	}
	if v := getenv("PLUME_ATTACHMENT_MAX_BYTES"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 || n > maxAttachmentBytes {
			return Config{}, fmt.Errorf("PLUME_ATTACHMENT_MAX_BYTES %q: want a number of bytes from 1 to %d", v, maxAttachmentBytes)
		}
		c.AttachmentMaxBytes = n
	}
	if v := getenv("PLUME_ATTACHMENT_URL_TTL"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < time.Second || d > maxAttachmentURLTTL {
			return Config{}, fmt.Errorf("PLUME_ATTACHMENT_URL_TTL %q: want a duration from 1s to %s", v, maxAttachmentURLTTL)
		}
		c.AttachmentURLTTL = d
	}
	if v := getenv("PLUME_SPAN_RETENTION_DAYS"); v != "" {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 || n > maxSpanRetentionDays {
			return Config{}, fmt.Errorf("PLUME_SPAN_RETENTION_DAYS %q: want a number of days from 0 (keep forever) to %d", v, maxSpanRetentionDays)
		}
		c.SpanRetentionDays = n
	}
	if v := getenv("PLUME_PUBLIC_URL"); v != "" {
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || (u.Path != "" && u.Path != "/") {
			return Config{}, fmt.Errorf("PLUME_PUBLIC_URL %q: want a base URL such as https://feedback.example.com", v)
		}
		c.PublicURL = strings.TrimSuffix(v, "/")
	}
	if v := getenv("PLUME_FEEDBACK_LINK_RATE"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100_000 {
			return Config{}, fmt.Errorf("PLUME_FEEDBACK_LINK_RATE %q: want requests per minute from 1 to 100000", v)
		}
		c.FeedbackLinkRate = n
	}
	limits, err := ratelimit.ConfigFromEnv(getenv)
	if err != nil {
		return Config{}, err
	}
	c.GatewayLimits = limits
	switch c.GatewayTrace = strings.ToLower(strings.TrimSpace(getenv("PLUME_GATEWAY_TRACE"))); c.GatewayTrace {
	case "", "off", "all":
	default:
		return Config{}, fmt.Errorf("PLUME_GATEWAY_TRACE %q: want off or all", getenv("PLUME_GATEWAY_TRACE"))
	}
	if v := strings.TrimSpace(getenv("PLUME_GATEWAY_URL")); v != "" {
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return Config{}, fmt.Errorf("PLUME_GATEWAY_URL %q: want a base URL such as https://gateway.example.com/v1", v)
		}
		c.GatewayURL = strings.TrimSuffix(v, "/")
	}
	for m := range strings.SplitSeq(getenv("PLUME_GATEWAY_BEDROCK_MODELS"), ",") {
		// An ARN's model id follows its resource type: ...:foundation-model/<id>.
		if _, id, isARN := strings.Cut(strings.TrimSpace(m), "-model/"); isARN {
			m = id
		} else if _, id, isARN := strings.Cut(strings.TrimSpace(m), ":inference-profile/"); isARN {
			m = id
		}
		if m = strings.TrimSpace(m); m != "" {
			c.GatewayBedrockModels = append(c.GatewayBedrockModels, m)
		}
	}
	c.ProviderSecret = strings.TrimSpace(getenv("PLUME_PROVIDER_SECRET"))
	c.OptimizationQueueURL = strings.TrimSpace(getenv("PLUME_OPTIMIZATION_QUEUE_URL"))
	for m := range strings.SplitSeq(getenv("PLUME_SIMULATION_MODELS"), ",") {
		if m = strings.TrimSpace(m); m != "" {
			c.SimulationModels = append(c.SimulationModels, m)
		}
	}
	for _, v := range []struct {
		name string
		dst  *int
	}{{"PLUME_JUDGE_CONCURRENCY", &c.JudgeConcurrency}, {"PLUME_JUDGE_PROVIDER_CONCURRENCY", &c.JudgeProviderConcurrency}} {
		if s := getenv(v.name); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil || n < 1 || n > maxJudgeConcurrency {
				return Config{}, fmt.Errorf("%s %q: want a number of calls from 1 to %d", v.name, s, maxJudgeConcurrency)
			}
			*v.dst = n
		}
	}
	c.EventBusName = strings.TrimSpace(getenv("PLUME_EVENT_BUS_NAME"))
	if c.Webhooks, err = webhooksFromEnv(getenv); err != nil {
		return Config{}, err
	}
	return c, nil
}

// SpanRetention is SpanRetentionDays as a duration (0: keep forever).
func (c Config) SpanRetention() time.Duration {
	return time.Duration(c.SpanRetentionDays) * 24 * time.Hour
}
