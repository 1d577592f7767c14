// Package lambdahttp runs a Plume http.Handler as a Lambda function behind API Gateway HTTP
// APIs (payload format 2.0) or a Lambda Function URL, which send the same event shape.
package lambdahttp

import (
	"context"
	"log/slog"
	"net/http"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/plumehq/plume/shared/config"
	"github.com/plumehq/plume/shared/web"
)

// Start serves h for the life of the Lambda execution environment. It does not return.
// Client-visible failures are HTTP answers written by h; the adapter only returns an error to
// the runtime when the event itself cannot be turned into a request.
func Start(h http.Handler) {
	lambda.Start(httpadapter.NewV2(h).ProxyWithContext)
}

// Main is the whole main of a Plume function: it reads the configuration, sets up JSON logging
// and the AWS configuration, builds the handler once (at init, not per request) and serves it.
// Bad configuration is logged and exits with status 1.
func Main(build func(cfg config.Config, awsCfg aws.Config) (http.Handler, error)) {
	cfg, err := config.FromEnv(os.Getenv)
	if err != nil {
		slog.Error("bad configuration", "error", err)
		os.Exit(1)
	}
	slog.SetDefault(web.NewLogger(os.Stdout, cfg.LogLevel))
	awsCfg, err := config.AWS(context.Background())
	if err != nil {
		slog.Error("bad AWS configuration", "error", err)
		os.Exit(1)
	}
	h, err := build(cfg, awsCfg)
	if err != nil {
		slog.Error("cannot start", "error", err)
		os.Exit(1)
	}
	Start(h)
}
