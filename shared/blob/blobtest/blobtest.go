// Package blobtest gives tests a real S3 API: the embedded gofakes3 server with SigV4 checks
// (shared/blob/s3local), a fresh bucket, and a count of the requests each operation sends.
package blobtest

import (
	"context"
	"hash/fnv"
	"os"
	"slices"
	"strconv"
	"strings"
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

// AccessKey is the access key id of the test process's S3 clients (the embedded server takes
// it, and each test's own, AccessKeyFor). Alphanumeric, as DynamoDB Local refuses other ids.
var AccessKey = "plumetest" + strconv.Itoa(os.Getpid())

// AccessKeyFor is the access key id of t's DynamoDB Local database (ddbtest.Client, and the
// binaries t starts, whose one key also signs for the embedded S3): one per top-level test of
// the process. DynamoDB Local, started without -sharedDb as make test starts it, keeps a
// database per access key, and every stream record it served in it: a stream table's writes
// slow as one database's records pile up (20 ms a put early in a package's run, over 100 ms
// minutes later), so no test pays for the records of the tests before it.
func AccessKeyFor(t testing.TB) string {
	top, _, _ := strings.Cut(t.Name(), "/")
	h := fnv.New32a()
	_, _ = h.Write([]byte(top))
	return AccessKey + "t" + strconv.FormatUint(uint64(h.Sum32()), 36)
}

// New starts an embedded S3 server for t, creates a bucket and returns the store, the request
// counter and the server's URL.
func New(t testing.TB) (*blob.Store, *Counter, string) {
	t.Helper()
	srv, err := s3local.StartKeys("127.0.0.1:0", map[string]string{AccessKey: SecretKey, AccessKeyFor(t): SecretKey})
	if err != nil {
		t.Fatalf("start embedded S3: %v", err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	counter := &Counter{}
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
// the bytes of their answers' bodies (Content-Length). The zero Counter counts from nothing.
type Counter struct {
	mu     sync.Mutex
	counts map[string]int
	bytes  map[string]int64
	keys   map[string][]string // op -> the object keys of its requests, in order
}

func (c *Counter) middleware(s *middleware.Stack) error {
	return s.Deserialize.Add(middleware.DeserializeMiddlewareFunc("plumeCount",
		func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
			op := awsmiddleware.GetOperationName(ctx)
			c.mu.Lock()
			if c.counts == nil {
				c.counts, c.keys = map[string]int{}, map[string][]string{}
			}
			c.counts[op]++
			if req, ok := in.Request.(*smithyhttp.Request); ok {
				// Path-style: /<bucket>/<key>.
				if _, k, ok := strings.Cut(strings.TrimPrefix(req.URL.Path, "/"), "/"); ok {
					c.keys[op] = append(c.keys[op], k)
				}
			}
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

// Keys returns the object keys of the requests of one operation since the last Reset, in order.
func (c *Counter) Keys(op string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.keys[op])
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
	clear(c.keys)
}
