// Command lambda is the OTLP area's Lambda function (OTLPFunction in template.yaml), reached
// through its Function URL and through the HTTP API.
package main

import (
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/plumehq/plume/functions/otlp"
	"github.com/plumehq/plume/functions/tracing"
	"github.com/plumehq/plume/shared/config"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/lambdahttp"
	"github.com/plumehq/plume/shared/pricing"
	"github.com/plumehq/plume/shared/trace"
)

func main() {
	lambdahttp.Main(func(cfg config.Config, awsCfg aws.Config) (http.Handler, error) {
		env, err := tracing.NewEnv(cfg, awsCfg)
		if err != nil {
			return nil, err
		}
		pricer := pricing.NewPricer(pricing.Default()).WithOverrides(ddb.NewPriceStore(env.Table))
		return otlp.NewHandler(trace.NewService(env.Traces, env.Blobs, pricer), env.Authn), nil
	})
}
