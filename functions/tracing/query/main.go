// Command query is the tracing area's reading Lambda function (TracingQueryFunction in
// template.yaml): GET /spans, /traces, /sessions and /spans/{span_id}/attachments.
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
		urls := tracing.AttachmentURLs{Presigner: blobs, TTL: cfg.AttachmentURLTTL}
		return tracing.NewQueryHandler(trace.NewQueries(ddb.NewTraceStore(table), blobs), authn, urls), nil
	})
}
