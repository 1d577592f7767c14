// Command ingest is the tracing area's writing Lambda function (TracingIngestFunction in
// template.yaml): POST /spans, /traces, /sessions and /spans/{span_id}/attachments.
package main

import (
	"errors"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/plumehq/plume/functions/tracing"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/blob"
	"github.com/plumehq/plume/shared/config"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/lambdahttp"
	"github.com/plumehq/plume/shared/pricing"
	"github.com/plumehq/plume/shared/trace"
)

func main() {
	lambdahttp.Main(func(cfg config.Config, awsCfg aws.Config) (http.Handler, error) {
		if cfg.Bucket == "" {
			return nil, errors.New("BUCKET_NAME is not set")
		}
		table := ddb.NewTable(ddb.NewClient(awsCfg, cfg.CustomDynamoDBEndpoint), cfg.Table)
		blobs := blob.New(blob.NewClient(awsCfg, false), cfg.Bucket)
		authn := auth.NewAuthenticator(ddb.NewAuthStore(table), cfg.AuthCacheTTL)
		extractor, err := trace.NewExtractor(blobs, trace.ExtractorConfig{Hosts: cfg.AttachmentHosts, MaxBytes: cfg.AttachmentMaxBytes})
		if err != nil {
			return nil, err
		}
		svc := trace.NewService(ddb.NewTraceStore(table), blobs, pricing.NewPricer(pricing.Default()).WithOverrides(ddb.NewPriceStore(table)), trace.WithExtractor(extractor))
		urls := tracing.AttachmentURLs{Presigner: blobs, TTL: cfg.AttachmentURLTTL, MaxBytes: cfg.AttachmentMaxBytes}
		return tracing.NewIngestHandler(svc, authn, urls), nil
	})
}
