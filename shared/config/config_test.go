package config

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/ratelimit"
)

func TestFromEnv(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want Config
		err  string
	}{
		{"defaults", map[string]string{"TABLE_NAME": "t"}, Config{Table: "t", AuthCacheTTL: 60 * time.Second}, ""},
		{"everything", map[string]string{"TABLE_NAME": "t", "BUCKET_NAME": "b", "LOG_LEVEL": "debug", "PLUME_AUTH_CACHE_TTL": "5s", "AWS_ENDPOINT_URL_DYNAMODB": "http://x"},
			Config{Table: "t", Bucket: "b", LogLevel: slog.LevelDebug, AuthCacheTTL: 5 * time.Second, CustomDynamoDBEndpoint: true}, ""},
		{"cache off", map[string]string{"TABLE_NAME": "t", "PLUME_AUTH_CACHE_TTL": "0s"}, Config{Table: "t"}, ""},
		{"generic endpoint", map[string]string{"TABLE_NAME": "t", "AWS_ENDPOINT_URL": "http://x"}, Config{Table: "t", AuthCacheTTL: time.Minute, CustomDynamoDBEndpoint: true}, ""},
		{"no table", map[string]string{}, Config{}, "TABLE_NAME"},
		{"bad level", map[string]string{"TABLE_NAME": "t", "LOG_LEVEL": "loud"}, Config{}, "LOG_LEVEL"},
		{"cache above the bound", map[string]string{"TABLE_NAME": "t", "PLUME_AUTH_CACHE_TTL": "2m"}, Config{}, "PLUME_AUTH_CACHE_TTL"},
		{"cache not a duration", map[string]string{"TABLE_NAME": "t", "PLUME_AUTH_CACHE_TTL": "60"}, Config{}, "PLUME_AUTH_CACHE_TTL"},
		{"attachments", map[string]string{"TABLE_NAME": "t", "PLUME_ATTACHMENT_HOSTS": " cdn.example.com, *.example.org ,,", "PLUME_ATTACHMENT_MAX_BYTES": "2048", "PLUME_ATTACHMENT_URL_TTL": "5m"},
			Config{Table: "t", AuthCacheTTL: time.Minute, AttachmentHosts: []string{"cdn.example.com", "*.example.org"}, AttachmentMaxBytes: 2048, AttachmentURLTTL: 5 * time.Minute}, ""},
		{"attachment size zero", map[string]string{"TABLE_NAME": "t", "PLUME_ATTACHMENT_MAX_BYTES": "0"}, Config{}, "PLUME_ATTACHMENT_MAX_BYTES"},
		{"attachment size not a number", map[string]string{"TABLE_NAME": "t", "PLUME_ATTACHMENT_MAX_BYTES": "10MB"}, Config{}, "PLUME_ATTACHMENT_MAX_BYTES"},
		{"attachment URL TTL too long", map[string]string{"TABLE_NAME": "t", "PLUME_ATTACHMENT_URL_TTL": "200h"}, Config{}, "PLUME_ATTACHMENT_URL_TTL"},
		{"attachment URL TTL below a second", map[string]string{"TABLE_NAME": "t", "PLUME_ATTACHMENT_URL_TTL": "500ms"}, Config{}, "PLUME_ATTACHMENT_URL_TTL"},
		{"judges", map[string]string{"TABLE_NAME": "t", "PLUME_PROVIDER_SECRET": " plume/providers ", "PLUME_JUDGE_CONCURRENCY": "16", "PLUME_JUDGE_PROVIDER_CONCURRENCY": "4"},
			Config{Table: "t", AuthCacheTTL: time.Minute, ProviderSecret: "plume/providers", JudgeConcurrency: 16, JudgeProviderConcurrency: 4}, ""},
		{"gateway limits", map[string]string{"TABLE_NAME": "t", "PLUME_GATEWAY_RPM": "60", "PLUME_GATEWAY_TPM": "100000", "PLUME_GATEWAY_DAILY_USD": "12.50"},
			Config{Table: "t", AuthCacheTTL: time.Minute, GatewayLimits: ratelimit.Config{RequestsPerMinute: 60, TokensPerMinute: 100_000, DailyUSD: 12.5}}, ""},
		{"gateway Bedrock models", map[string]string{"TABLE_NAME": "t", "PLUME_GATEWAY_BEDROCK_MODELS": " anthropic.claude-3-5-haiku-20241022-v1:0 ,arn:aws:bedrock:us-east-1::foundation-model/amazon.nova-lite-v1:0,arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.anthropic.claude-sonnet-4-5-20250929-v1:0,"},
			Config{Table: "t", AuthCacheTTL: time.Minute, GatewayBedrockModels: []string{"anthropic.claude-3-5-haiku-20241022-v1:0", "amazon.nova-lite-v1:0", "us.anthropic.claude-sonnet-4-5-20250929-v1:0"}}, ""},
		{"gateway URL", map[string]string{"TABLE_NAME": "t", "PLUME_GATEWAY_URL": " https://abc.lambda-url.us-east-1.on.aws/v1/ "},
			Config{Table: "t", AuthCacheTTL: time.Minute, GatewayURL: "https://abc.lambda-url.us-east-1.on.aws/v1"}, ""},
		{"gateway URL without a scheme", map[string]string{"TABLE_NAME": "t", "PLUME_GATEWAY_URL": "abc.lambda-url.us-east-1.on.aws/v1"}, Config{}, "PLUME_GATEWAY_URL"},
		{"gateway URL with a query", map[string]string{"TABLE_NAME": "t", "PLUME_GATEWAY_URL": "https://gw.example.com/v1?x=1"}, Config{}, "PLUME_GATEWAY_URL"},
		{"gateway trace", map[string]string{"TABLE_NAME": "t", "PLUME_GATEWAY_TRACE": " All "}, Config{Table: "t", AuthCacheTTL: time.Minute, GatewayTrace: "all"}, ""},
		{"gateway trace unknown", map[string]string{"TABLE_NAME": "t", "PLUME_GATEWAY_TRACE": "sometimes"}, Config{}, "PLUME_GATEWAY_TRACE"},
		{"gateway limit not a number", map[string]string{"TABLE_NAME": "t", "PLUME_GATEWAY_RPM": "sixty"}, Config{}, "PLUME_GATEWAY_RPM"},
		{"judge concurrency zero", map[string]string{"TABLE_NAME": "t", "PLUME_JUDGE_CONCURRENCY": "0"}, Config{}, "PLUME_JUDGE_CONCURRENCY"},
		{"span retention", map[string]string{"TABLE_NAME": "t", "PLUME_SPAN_RETENTION_DAYS": "90"}, Config{Table: "t", AuthCacheTTL: time.Minute, SpanRetentionDays: 90}, ""},
		{"span retention off", map[string]string{"TABLE_NAME": "t", "PLUME_SPAN_RETENTION_DAYS": "0"}, Config{Table: "t", AuthCacheTTL: time.Minute}, ""},
		{"span retention at the bound", map[string]string{"TABLE_NAME": "t", "PLUME_SPAN_RETENTION_DAYS": "3650"}, Config{Table: "t", AuthCacheTTL: time.Minute, SpanRetentionDays: 3650}, ""},
		{"span retention above the bound", map[string]string{"TABLE_NAME": "t", "PLUME_SPAN_RETENTION_DAYS": "3651"}, Config{}, "PLUME_SPAN_RETENTION_DAYS"},
		{"span retention negative", map[string]string{"TABLE_NAME": "t", "PLUME_SPAN_RETENTION_DAYS": "-1"}, Config{}, "PLUME_SPAN_RETENTION_DAYS"},
		{"span retention not a number", map[string]string{"TABLE_NAME": "t", "PLUME_SPAN_RETENTION_DAYS": "30d"}, Config{}, "PLUME_SPAN_RETENTION_DAYS"},
		{"provider concurrency too high", map[string]string{"TABLE_NAME": "t", "PLUME_JUDGE_PROVIDER_CONCURRENCY": "1000"}, Config{}, "PLUME_JUDGE_PROVIDER_CONCURRENCY"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := FromEnv(func(k string) string { return tt.env[k] })
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			tt.want.GatewayLimits.MaxStaleness = ratelimit.DefaultMaxStaleness
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestSpanRetention(t *testing.T) {
	assert.Equal(t, time.Duration(0), Config{}.SpanRetention())
	assert.Equal(t, 30*24*time.Hour, Config{SpanRetentionDays: 30}.SpanRetention())
}
