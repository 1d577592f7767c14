// Package blobtest gives tests a real S3 API: the embedded gofakes3 server with SigV4 checks
// (shared/blob/s3local), a fresh bucket, and a count of the requests each operation sends.
package blobtest

import (
	"context"
	"os"
	"strconv"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/plumehq/plume/shared/blob"
	"github.com/plumehq/plume/shared/blob/s3local"
)

// SecretKey is the secret of the embedded server's credentials.
const SecretKey = "plumetestsecret"

// AccessKey is the access key id of the test process: the embedded server's, and DynamoDB
// Local's (ddbtest.Client, and the binaries tests start). Alphanumeric, as DynamoDB Local
// refuses other ids. It is the process's own because DynamoDB Local, started without
// -sharedDb as make test starts it, keeps a database per access key: the tables and change
// streams of one test process never slow another's (DynamoDB Local keeps every stream record
// it served, and a stream table's writes slow as one database's records pile up).
var AccessKey = "plumetest" + strconv.Itoa(os.Getpid())

// New starts an embedded S3 server for t, creates a bucket and returns the store, the request
// counter and the server's URL.
func New(t testing.TB) (*blob.Store, *Counter, string) {
	t.Helper()
	srv, err := s3local.Start("127.0.0.1:0", AccessKey, SecretKey)
	if err != nil {
		t.Fatalf("start embedded S3: %v", err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	counter := &Counter{counts: map[string]int{}}
	store := StoreAt(srv.URL(), counter)
	if err := store.EnsureBucket(context.Background()); err != nil {
		t.Fatalf("create bucket: %v", err)
	}
	counter.Reset()
	return store, counter, srv.URL()
}

// Bucket is the bucket New creates.
const Bucket = "plume-test"

// StoreAt returns a store of New's bucket reached at endpoint: the URL New returned, or that of
// a proxy in front of it (internal/faultproxy). Its requests are counted in counter (nil: not
// counted); opts change its AWS configuration (a retryer ...).
func StoreAt(endpoint string, counter *Counter, opts ...func(*aws.Config)) *blob.Store {
	cfg := aws.Config{
		Region:       "us-east-1",
		Credentials:  credentials.NewStaticCredentialsProvider(AccessKey, SecretKey, ""),
		BaseEndpoint: aws.String(endpoint),
	}
	if counter != nil {
		cfg.APIOptions = []func(*middleware.Stack) error{counter.middleware}
	}
	for _, o := range opts {
		o(&cfg)
	}
	return blob.New(blob.NewClient(cfg, true), Bucket)
}

// Counter counts S3 requests by operation (PutObject, GetObject ...), one per attempt, and
// the bytes of their answers' bodies (Content-Length).
type Counter struct {
	mu     sync.Mutex
	counts map[string]int
	bytes  map[string]int64
}

func (c *Counter) middleware(s *middleware.Stack) error {
	return s.Deserialize.Add(middleware.DeserializeMiddlewareFunc("plumeCount",
		func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
			op := awsmiddleware.GetOperationName(ctx)
			c.mu.Lock()
			c.counts[op]++
			c.mu.Unlock()
			out, md, err := next.HandleDeserialize(ctx, in)
			if res, ok := out.RawResponse.(*smithyhttp.Response); ok && res.ContentLength > 0 {
				c.mu.Lock()
				if c.bytes == nil {
					c.bytes = map[string]int64{}
				}
				c.bytes[op] += res.ContentLength
				c.mu.Unlock()
			}
			return out, md, err
		}), middleware.After)
}

// Count returns the requests of one operation since the last Reset.
func (c *Counter) Count(op string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts[op]
}

// Bytes returns the bytes the answers of one operation carried since the last Reset.
func (c *Counter) Bytes(op string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes[op]
}

// Reset forgets every count.
func (c *Counter) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.counts)
	clear(c.bytes)
}
