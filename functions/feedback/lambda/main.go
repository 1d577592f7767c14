// Command lambda is the feedback area's Lambda function (FeedbackFunction in template.yaml).
package main

import (
	"errors"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/plumehq/plume/functions/feedback"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/blob"
	"github.com/plumehq/plume/shared/config"
	"github.com/plumehq/plume/shared/ddb"
	fb "github.com/plumehq/plume/shared/feedback"
	"github.com/plumehq/plume/shared/lambdahttp"
)

func main() {
	lambdahttp.Main(func(cfg config.Config, awsCfg aws.Config) (http.Handler, error) {
		if cfg.Bucket == "" {
			return nil, errors.New("BUCKET_NAME is not set")
		}
		table := ddb.NewTable(ddb.NewClient(awsCfg, cfg.CustomDynamoDBEndpoint), cfg.Table)
		authn := auth.NewAuthenticator(ddb.NewAuthStore(table), cfg.AuthCacheTTL)
		store := ddb.NewFeedbackStore(table)
		return feedback.NewHandler(feedback.Deps{
			Feedback: fb.NewService(store), Reader: store,
			Links:       fb.NewLinks(ddb.NewLinkStore(table), cfg.FeedbackLinkRate),
			Completions: ddb.NewTraceStore(table), Blobs: blob.New(blob.NewClient(awsCfg, false), cfg.Bucket),
			PublicURL: cfg.PublicURL,
		}, authn), nil
	})
}
