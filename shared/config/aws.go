//go:build !lambda.norpc

package config

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
)

// AWS loads the AWS SDK configuration from the environment, shared config files and profiles
// (the SDK's whole default chain: SSO, assumed roles, IMDS), as plume-local, the CLI and the
// tests need. A Lambda build reads only what Lambda gives it (AWSFromEnv; aws_lambda.go). The
// SDK logs through slog's default logger (see sdkLogger), so its debug lines appear only at
// LOG_LEVEL=debug.
func AWS(ctx context.Context) (aws.Config, error) {
	cfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithLogger(sdkLogger{}))
	if err != nil {
		return aws.Config{}, fmt.Errorf("load AWS config: %w", err)
	}
	return cfg, nil
}
