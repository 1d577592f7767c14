// Package config reads a Plume process's settings from its environment and builds the AWS
// configuration from the SDK's own sources (credentials chain, region, AWS_ENDPOINT_URL*), so
// the same binary runs against AWS, DynamoDB Local, moto or LocalStack without code changes.
package config

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"

	"github.com/plumehq/plume/shared/auth"
)

// Config is what every Plume function and plume-local need.
type Config struct {
	Table        string        // TABLE_NAME: the DynamoDB table (required)
	Bucket       string        // BUCKET_NAME: the S3 bucket
	LogLevel     slog.Level    // LOG_LEVEL: debug, info (default), warn or error
	AuthCacheTTL time.Duration // PLUME_AUTH_CACHE_TTL: how long a resolved key is trusted (default and max 60s; 0 disables)
	// CustomDynamoDBEndpoint is true when AWS_ENDPOINT_URL_DYNAMODB or AWS_ENDPOINT_URL is set.
	CustomDynamoDBEndpoint bool
}

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
	return c, nil
}

// AWS loads the AWS SDK configuration from the environment.
func AWS(ctx context.Context) (aws.Config, error) {
	cfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return aws.Config{}, fmt.Errorf("load AWS config: %w", err)
	}
	return cfg, nil
}
