package tracing

import (
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/blob"
	"github.com/plumehq/plume/shared/config"
	"github.com/plumehq/plume/shared/ddb"
)

// Env is what both tracing functions are built from: the table, the bucket, authentication and
// the attachment URL settings.
type Env struct {
	Table  *ddb.Table
	Blobs  *blob.Store
	Authn  *auth.Authenticator
	URLs   AttachmentURLs
	Traces *ddb.TraceStore
}

// NewEnv builds the Env of a tracing function from its configuration. The bucket is required.
func NewEnv(cfg config.Config, awsCfg aws.Config) (Env, error) {
	if cfg.Bucket == "" {
		return Env{}, errors.New("BUCKET_NAME is not set")
	}
	table := ddb.NewTable(ddb.NewClient(awsCfg, cfg.CustomDynamoDBEndpoint), cfg.Table)
	blobs := blob.New(blob.NewClient(awsCfg, false), cfg.Bucket)
	return Env{
		Table: table, Blobs: blobs, Traces: ddb.NewTraceStore(table),
		Authn: auth.NewAuthenticator(ddb.NewAuthStore(table), cfg.AuthCacheTTL),
		URLs:  AttachmentURLs{Presigner: blobs, TTL: cfg.AttachmentURLTTL, MaxBytes: cfg.AttachmentMaxBytes},
	}, nil
}
