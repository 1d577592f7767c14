// Command ingest is the tracing area's writing Lambda function (TracingIngestFunction in
// template.yaml): POST /spans, /traces, /sessions and /spans/{id}/attachments.
package main

import (
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"

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
		extractor, err := trace.NewExtractor(env.Blobs, trace.ExtractorConfig{Hosts: cfg.AttachmentHosts, MaxBytes: cfg.AttachmentMaxBytes})
		if err != nil {
			return nil, err
		}
		pricer := pricing.NewPricer(pricing.Default()).WithOverrides(ddb.NewPriceStore(env.Table))
		svc := trace.NewService(env.Traces, env.Blobs, pricer, trace.WithExtractor(extractor))
		return tracing.NewIngestHandler(svc, env.Authn, env.URLs), nil
	})
}
