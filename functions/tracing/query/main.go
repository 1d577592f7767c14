// Command query is the tracing area's reading Lambda function (TracingQueryFunction in
// template.yaml): GET /spans, /traces, /sessions and /spans/{id}/attachments.
package main

import (
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/plumehq/plume/functions/tracing"
	"github.com/plumehq/plume/shared/config"
	"github.com/plumehq/plume/shared/lambdahttp"
	"github.com/plumehq/plume/shared/trace"
)

func main() {
	lambdahttp.Main(func(cfg config.Config, awsCfg aws.Config) (http.Handler, error) {
		env, err := tracing.NewEnv(cfg, awsCfg)
		if err != nil {
			return nil, err
		}
		return tracing.NewQueryHandler(trace.NewQueries(env.Traces, env.Blobs), env.Authn, env.URLs), nil
	})
}
