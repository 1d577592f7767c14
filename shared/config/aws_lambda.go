//go:build lambda.norpc

package config

import (
	"context"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// AWS is the AWS SDK configuration of a Lambda function, read from the environment Lambda
// gives it (AWSFromEnv). A bootstrap so links none of the SDK's default chain (shared config
// files, SSO, STS, IMDS): about 1.5 MB less of every bootstrap and no file read at start.
func AWS(ctx context.Context) (aws.Config, error) {
	return AWSFromEnv(ctx, os.Getenv)
}
