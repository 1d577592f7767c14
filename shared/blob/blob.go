package blob

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/plumehq/plume/shared/errs"
)

// MaxPresignTTL is the longest a presigned URL can be valid for, as S3 allows.
const MaxPresignTTL = 7 * 24 * time.Hour

// maxKeyLen is S3's limit on the UTF-8 length of an object key.
const maxKeyLen = 1024

// MaxPutBytes is the largest object one PUT may write, as S3 allows (5 GiB).
const MaxPutBytes = 5 << 30

// API is the part of the S3 client the store uses.
type API interface {
	PutObject(context.Context, *s3.PutObjectInput, ...func(*s3.Options)) (*s3.PutObjectOutput, error)
	GetObject(context.Context, *s3.GetObjectInput, ...func(*s3.Options)) (*s3.GetObjectOutput, error)
	HeadBucket(context.Context, *s3.HeadBucketInput, ...func(*s3.Options)) (*s3.HeadBucketOutput, error)
	ListObjectsV2(context.Context, *s3.ListObjectsV2Input, ...func(*s3.Options)) (*s3.ListObjectsV2Output, error)
	CreateBucket(context.Context, *s3.CreateBucketInput, ...func(*s3.Options)) (*s3.CreateBucketOutput, error)
	DeleteObjects(context.Context, *s3.DeleteObjectsInput, ...func(*s3.Options)) (*s3.DeleteObjectsOutput, error)
}

var _ API = (*s3.Client)(nil)

// NewClient returns an S3 client for cfg. The endpoint comes only from the SDK's own
// configuration (AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, a profile's endpoint_url or
// cfg.BaseEndpoint). Buckets are addressed by path (http://host/bucket/key) when pathStyle is
// true and also whenever such an endpoint is set, since emulators are reached by IP address or
// a plain host name with no subdomain per bucket; so a caller that cannot tell passes false.
// Against AWS itself, pathStyle false keeps the SDK's virtual-hosted addressing.
func NewClient(cfg aws.Config, pathStyle bool) *s3.Client {
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		// BaseEndpoint is already resolved from cfg and the environment when options run.
		o.UsePathStyle = pathStyle || o.BaseEndpoint != nil
	})
}

// Store reads and writes the objects of one bucket.
type Store struct {
	api     API
	presign *s3.PresignClient
	bucket  string
	region  string
	created atomic.Pointer[func(key string)]
}

// New returns the store of bucket, reached through client.
func New(client *s3.Client, bucket string) *Store {
	return &Store{
		api:     client,
		presign: s3.NewPresignClient(client),
		bucket:  bucket,
		region:  client.Options().Region,
	}
}

// Bucket is the bucket's name.
func (s *Store) Bucket() string { return s.bucket }

// OnCreated makes every successful Put call f with the object's key, after the write, as the
// bucket's Object Created events reach their consumers in a deployment: plume-local runs the
// judge runner on them in-process. f must not block; nil stops the calls.
func (s *Store) OnCreated(f func(key string)) {
	if f == nil {
		s.created.Store(nil)
		return
	}
	s.created.Store(&f)
}

// Put writes body under key, replacing any object there. contentType may be empty, and S3
// then stores binary/octet-stream.
//
// Put returns errs.Invalid for an unusable key and errs.Unavailable when S3 is throttling.
func (s *Store) Put(ctx context.Context, key string, body []byte, contentType string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	in := &s3.PutObjectInput{
		Bucket: &s.bucket,
		Key:    &key,
		// A seekable body: the SDK hashes it before sending, which plain HTTP requires.
		Body:          bytes.NewReader(body),
		ContentLength: aws.Int64(int64(len(body))),
	}
	if contentType != "" {
		in.ContentType = &contentType
	}
	if _, err := s.api.PutObject(ctx, in); err != nil {
		return storageErr(fmt.Sprintf("put object %q", key), err)
	}
	if f := s.created.Load(); f != nil {
		(*f)(key)
	}
	return nil
}

// Get reads the whole object under key.
//
// Get returns errs.NotFound when there is no such object, errs.Invalid for an unusable key and
// errs.Unavailable when S3 is throttling.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	out, err := s.api.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		return nil, getErr(key, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, fmt.Errorf("read object %q: %w", key, err)
	}
	return data, nil
}

// Open reads the object under key as a stream, for objects too large to hold twice (an
// uploaded dataset is read once, a line at a time). The caller closes it.
//
// Open returns errs.NotFound when there is no such object, errs.Invalid for an unusable key
// and errs.Unavailable when S3 is throttling.
func (s *Store) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	out, err := s.api.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: &key})
	if err != nil {
		return nil, getErr(key, err)
	}
	return out.Body, nil
}

// GetRange reads length bytes of the object under key, starting at byte offset, with one
// ranged GET (HTTP Range: bytes=offset-(offset+length-1)). It returns exactly length bytes or
// an error: a range that runs past the end of the object is an error, not a short read.
//
// GetRange returns errs.NotFound when there is no such object, errs.Invalid for an unusable key
// or range, including one that starts past the end of the object, and errs.Unavailable when
// S3 is throttling.
func (s *Store) GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	if offset < 0 || length <= 0 || length > math.MaxInt64-offset {
		return nil, errs.Invalid("byte range at offset %d with length %d is not valid", offset, length)
	}
	last := offset + length - 1
	rng := fmt.Sprintf("bytes=%d-%d", offset, last)
	out, err := s.api.GetObject(ctx, &s3.GetObjectInput{Bucket: &s.bucket, Key: &key, Range: &rng})
	if err != nil {
		var api smithy.APIError
		if errors.As(err, &api) && api.ErrorCode() == "InvalidRange" {
			return nil, fmt.Errorf("get object %q %s: %w: %w", key, rng,
				errs.Invalid("bytes %d-%d are past the end of the object", offset, last), err)
		}
		return nil, getErr(key, err)
	}
	defer out.Body.Close()
	// A server that ignores Range answers with the whole object: read no more than needed to
	// tell.
	data, err := io.ReadAll(io.LimitReader(out.Body, length+1))
	if err != nil {
		return nil, fmt.Errorf("read object %q %s: %w", key, rng, err)
	}
	if int64(len(data)) != length {
		return nil, fmt.Errorf("read object %q %s: got %d bytes, want %d", key, rng, len(data), length)
	}
	return data, nil
}

// PresignGet returns a URL that lets anyone holding it GET the object under key for ttl, which
// must be from one second to MaxPresignTTL (S3 counts whole seconds). No request is sent:
// the URL is signed locally whether or not the object exists.
//
// PresignGet returns errs.Invalid for an unusable key or ttl.
func (s *Store) PresignGet(ctx context.Context, key string, ttl time.Duration) (string, error) {
	return s.PresignGetAs(ctx, key, ttl, Response{})
}

// Response names headers that S3 answers a presigned GET with in place of the object's own:
// S3's response-content-type and response-content-disposition parameters. They are in the
// URL's query, which the signature covers, so a holder of the URL can neither change nor drop
// them (S3 answers 403). An empty field leaves the object's own header.
//
// No parameter sets any other header: S3 cannot answer X-Content-Type-Options (nosniff) to a
// presigned GET.
type Response struct {
	ContentType        string
	ContentDisposition string
}

// PresignGetAs is PresignGet with the answer's Content-Type and Content-Disposition set by r.
func (s *Store) PresignGetAs(ctx context.Context, key string, ttl time.Duration, r Response) (string, error) {
	if err := checkPresign(key, ttl); err != nil {
		return "", err
	}
	in := &s3.GetObjectInput{Bucket: &s.bucket, Key: &key}
	if r.ContentType != "" {
		in.ResponseContentType = &r.ContentType
	}
	if r.ContentDisposition != "" {
		in.ResponseContentDisposition = &r.ContentDisposition
	}
	req, err := s.presign.PresignGetObject(ctx, in, s3.WithPresignExpires(ttl))
	if err != nil {
		return "", fmt.Errorf("presign get of %q: %w", key, err)
	}
	return req.URL, nil
}

// PresignPut returns a URL that lets anyone holding it PUT an object of exactly size bytes
// under key for ttl, which must be from one second to MaxPresignTTL.
//
// The length is signed (Content-Length is in X-Amz-SignedHeaders): S3 recomputes the
// signature from the Content-Length the upload sends, so an upload of any other length fails
// with 403 SignatureDoesNotMatch and writes nothing; one without Content-Length (chunked) is
// refused too (S3 answers 411 MissingContentLength, s3local 403). That is the only bound a
// presigned PUT can carry (S3 takes up to 5 GiB otherwise), so size is required. When
// contentType is not empty it is signed too: the upload must send exactly that Content-Type.
// The URL can be used again until it expires, always for exactly size bytes.
//
// PresignPut returns errs.Invalid for an unusable key, ttl, or a size that is not from 1 to
// MaxPutBytes.
func (s *Store) PresignPut(ctx context.Context, key, contentType string, size int64, ttl time.Duration) (string, error) {
	if err := checkPresign(key, ttl); err != nil {
		return "", err
	}
	if size < 1 || size > MaxPutBytes {
		// The SDK signs Content-Length only when it is positive: 0 would be an unbounded URL.
		return "", errs.Invalid("presigned upload size %d is not from 1 to %d bytes", size, int64(MaxPutBytes))
	}
	in := &s3.PutObjectInput{Bucket: &s.bucket, Key: &key, ContentLength: &size}
	if contentType != "" {
		in.ContentType = &contentType
	}
	req, err := s.presign.PresignPutObject(ctx, in, s3.WithPresignExpires(ttl))
	if err != nil {
		return "", fmt.Errorf("presign put of %q: %w", key, err)
	}
	return req.URL, nil
}

// Sizes returns the size in bytes of every object whose key starts with prefix, by key. It
// sends one ListObjectsV2 request per 1,000 objects, where a HeadObject per key would send
// one per object; a key with no object is simply absent from the map.
//
// Sizes needs s3:ListBucket on the bucket (a policy can restrict it to the prefix with an
// s3:prefix condition). It returns errs.Invalid for an empty or unusable prefix, so that no
// caller lists the whole bucket by mistake, and errs.Unavailable when S3 is throttling.
func (s *Store) Sizes(ctx context.Context, prefix string) (map[string]int64, error) {
	if err := checkKey(prefix); err != nil {
		return nil, err
	}
	out := map[string]int64{}
	pages := s3.NewListObjectsV2Paginator(s.api, &s3.ListObjectsV2Input{Bucket: &s.bucket, Prefix: &prefix})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, storageErr(fmt.Sprintf("list objects under %q", prefix), err)
		}
		for _, o := range page.Contents {
			if o.Key != nil {
				out[*o.Key] = aws.ToInt64(o.Size)
			}
		}
	}
	return out, nil
}

// MaxDeleteKeys is the most keys one Delete takes (S3 DeleteObjects' limit).
const MaxDeleteKeys = 1000

// Delete deletes the objects under keys (up to MaxDeleteKeys) with one DeleteObjects request;
// a key with no object is no error. S3 does not charge for deletions.
//
// Delete needs s3:DeleteObject on the keys. It returns errs.Invalid for an unusable key or too
// many keys and errs.Unavailable when S3 is throttling.
func (s *Store) Delete(ctx context.Context, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	if len(keys) > MaxDeleteKeys {
		return errs.Invalid("%d keys to delete, more than the %d of one request", len(keys), MaxDeleteKeys)
	}
	ids := make([]types.ObjectIdentifier, len(keys))
	for i, k := range keys {
		if err := checkKey(k); err != nil {
			return err
		}
		ids[i] = types.ObjectIdentifier{Key: aws.String(k)}
	}
	out, err := s.api.DeleteObjects(ctx, &s3.DeleteObjectsInput{
		Bucket: &s.bucket, Delete: &types.Delete{Objects: ids, Quiet: aws.Bool(true)},
	})
	if err != nil {
		return storageErr(fmt.Sprintf("delete %d objects", len(keys)), err)
	}
	if len(out.Errors) > 0 {
		e := out.Errors[0]
		return fmt.Errorf("delete %d objects: %d failed, the first %q: %s %s", len(keys), len(out.Errors),
			aws.ToString(e.Key), aws.ToString(e.Code), aws.ToString(e.Message))
	}
	return nil
}

// EnsureBucket creates the bucket unless it exists and is reachable with the store's
// credentials. It is safe to call concurrently and repeatedly. It is meant for local runs and
// tests; deployments get their bucket from the SAM template.
func (s *Store) EnsureBucket(ctx context.Context) error {
	exists, err := s.bucketExists(ctx)
	if err != nil || exists {
		return err
	}
	in := &s3.CreateBucketInput{Bucket: &s.bucket}
	if s.region != "" && s.region != "us-east-1" {
		// Outside us-east-1, S3 requires the region in the request body.
		in.CreateBucketConfiguration = &types.CreateBucketConfiguration{
			LocationConstraint: types.BucketLocationConstraint(s.region),
		}
	}
	_, err = s.api.CreateBucket(ctx, in)
	var owned *types.BucketAlreadyOwnedByYou
	var taken *types.BucketAlreadyExists
	switch {
	case err == nil, errors.As(err, &owned):
		return nil
	case errors.As(err, &taken):
		// Emulators (gofakes3, moto) answer this for a bucket of their one owner, and AWS for
		// a bucket another account owns. It is ours only if we can reach it.
		exists, herr := s.bucketExists(ctx)
		if herr == nil && exists {
			return nil
		}
		return fmt.Errorf("create bucket %q: %w", s.bucket, err)
	}
	return storageErr(fmt.Sprintf("create bucket %q", s.bucket), err)
}

// bucketExists reports whether the bucket exists and is reachable. A bucket of another
// account is an error (403), not a missing one.
func (s *Store) bucketExists(ctx context.Context) (bool, error) {
	_, err := s.api.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &s.bucket})
	var nf *types.NotFound
	switch {
	case err == nil:
		return true, nil
	case errors.As(err, &nf):
		return false, nil
	}
	return false, storageErr(fmt.Sprintf("head bucket %q", s.bucket), err)
}

// checkKey refuses keys S3 cannot store or that would address another path.
func checkKey(key string) error {
	switch {
	case key == "":
		return errs.Invalid("object key is empty")
	case strings.HasPrefix(key, "/"):
		return errs.Invalid("object key %q starts with \"/\"", key)
	case len(key) > maxKeyLen:
		return errs.Invalid("object key is longer than %d bytes", maxKeyLen)
	case !utf8.ValidString(key):
		return errs.Invalid("object key is not valid UTF-8")
	}
	return nil
}

func checkPresign(key string, ttl time.Duration) error {
	if err := checkKey(key); err != nil {
		return err
	}
	if ttl < time.Second || ttl > MaxPresignTTL {
		return errs.Invalid("presigned URL lifetime %s is not from 1s to %s", ttl, MaxPresignTTL)
	}
	return nil
}

// getErr wraps a GetObject failure: a missing object is errs.NotFound.
func getErr(key string, err error) error {
	var nsk *types.NoSuchKey
	if errors.As(err, &nsk) {
		return fmt.Errorf("get object %q: %w: %w", key, errs.NotFound("object not found"), err)
	}
	return storageErr(fmt.Sprintf("get object %q", key), err)
}

// storageErr wraps an S3 failure. Throttling that outlasted the SDK's own retries becomes
// errs.Unavailable (503 with Retry-After); anything else stays internal.
func storageErr(op string, err error) error {
	var api smithy.APIError
	if errors.As(err, &api) {
		switch api.ErrorCode() {
		case "SlowDown", "ServiceUnavailable":
			return fmt.Errorf("%s: %w: %w", op, errs.Unavailable("storage is throttling requests; retry shortly"), err)
		}
	}
	return fmt.Errorf("%s: %w", op, err)
}
