package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/google/uuid"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/internal/app"
	"github.com/plumehq/plume/internal/stack"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/blob"
	"github.com/plumehq/plume/shared/blob/s3local"
	"github.com/plumehq/plume/shared/config"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/web"
)

// clock is the time the stack runs at: the wall clock less a lag that the loading shrinks as
// it goes, so that the spans' created_at (and the list index's day partitions, and the rollups'
// buckets) spread over the last days as a project's do, and the last span loaded is stored now.
type clock struct{ lag atomic.Int64 }

func (c *clock) now() time.Time { return time.Now().Add(-time.Duration(c.lag.Load())) }

// setLag moves the clock to lag behind the wall clock; it only ever moves forward.
func (c *clock) setLag(lag time.Duration) {
	for {
		old := c.lag.Load()
		if int64(lag) >= old || c.lag.CompareAndSwap(old, int64(lag)) {
			return
		}
	}
}

// plume is the stack under measure: every HTTP function served in-process as plume-local
// serves them, one project and its key, and the table's stream applied in-process.
type plume struct {
	handler http.Handler
	env     *app.Env
	project string
	key     string
	clock   *clock
	s3      *s3Counts
	poller  *ddb.StreamPoller
	closers []func()

	stopPolling func()
}

// startPlume builds the stack over a new table (with its stream) and an embedded S3. DynamoDB
// requests go to the SDK's configured endpoint (ddbtap); the stream is read from streamsURL
// (DynamoDB Local itself: stream reads are free in a deployment and are not priced).
func startPlume(ctx context.Context, getenv func(string) string, streamsURL string, logs io.Writer) (*plume, error) {
	name := "plume-scale-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:12]
	env := func(k string) string {
		switch k {
		case "TABLE_NAME":
			return name
		case "BUCKET_NAME":
			return "plume-scale"
		case "LOG_LEVEL":
			return "warn"
		}
		return getenv(k)
	}
	cfg, err := config.FromEnv(env)
	if err != nil {
		return nil, err
	}
	cfg.PublicURL = "http://plume.scale"
	slog.SetDefault(web.NewLogger(logs, slog.LevelWarn))
	awsCfg, err := config.AWS(ctx)
	if err != nil {
		return nil, err
	}
	if awsCfg.Region == "" {
		awsCfg.Region = "us-east-1"
	}
	creds, err := awsCfg.Credentials.Retrieve(ctx)
	if err != nil {
		return nil, fmt.Errorf("AWS credentials (any values do): %w", err)
	}
	s3srv, err := s3local.Start("127.0.0.1:0", creds.AccessKeyID, creds.SecretAccessKey)
	if err != nil {
		return nil, err
	}
	p := &plume{clock: &clock{}, s3: &s3Counts{}, closers: []func(){func() { _ = s3srv.Close() }}}
	s3Cfg := awsCfg.Copy()
	s3Cfg.BaseEndpoint = aws.String(s3srv.URL())
	s3Cfg.HTTPClient = &countingClient{inner: awshttp.NewBuildableClient(), counts: p.s3}
	blobs := blob.New(blob.NewClient(s3Cfg, true), cfg.Bucket)
	if err := blobs.EnsureBucket(ctx); err != nil {
		p.close()
		return nil, err
	}

	client := dynamodb.NewFromConfig(awsCfg, func(o *dynamodb.Options) {
		o.DisableValidateResponseChecksum = true
		o.APIOptions = append(o.APIOptions, ddbtest.AskCapacity)
	})
	direct := dynamodb.NewFromConfig(awsCfg, func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(streamsURL)
		o.DisableValidateResponseChecksum = true
	})
	if err := infra.CreateTable(ctx, direct, cfg.Table); err != nil {
		p.close()
		return nil, fmt.Errorf("create table %s: %w", cfg.Table, err)
	}
	p.env = app.NewEnv(cfg, app.Clients{DynamoDB: client, Blobs: blobs, Optimizations: &app.LocalQueue{}},
		app.WithClock(p.clock.now))
	p.handler, err = stack.Handler(p.env)
	if err != nil {
		p.close()
		return nil, err
	}
	if err := p.seed(ctx); err != nil {
		p.close()
		return nil, err
	}
	apply, err := p.env.StreamConsumer()
	if err != nil {
		p.close()
		return nil, err
	}
	p.poller = &ddb.StreamPoller{DB: direct, TableName: cfg.Table, Streams: ddb.NewStreamsClient(awsCfg, streamsURL),
		ApplyWindow: apply, Window: time.Minute, Interval: 200 * time.Millisecond, Retry: time.Second}
	return p, nil
}

// seed creates the project and an admin key of it.
func (p *plume) seed(ctx context.Context) error {
	store := ddb.NewAuthStore(p.env.Table())
	p.project = uuid.NewString()
	now := time.Now()
	if err := store.CreateProject(ctx, auth.Project{ID: p.project, Name: "scale", CreatedAt: now}); err != nil {
		return err
	}
	secret, key, err := auth.NewKey(auth.KeySpec{ProjectID: p.project, Role: auth.RoleAdmin, Label: "plumescale",
		User: auth.User{ID: "scale", Email: "scale@localhost", Name: "Scale Harness"}}, now.Add(-30*24*time.Hour))
	if err != nil {
		return err
	}
	p.key = secret
	return store.CreateKey(ctx, key)
}

// pollInBackground applies the stream while the loading goes on, as RollupFunction does.
func (p *plume) pollInBackground(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = p.poller.Run(ctx) })
	p.stopPolling = func() {
		cancel()
		wg.Wait()
		p.stopPolling = nil
	}
}

// drain stops the background poller and applies what is left of the stream: then the list
// index and the rollups hold everything stored. It reports each batch applied.
func (p *plume) drain(ctx context.Context, progress func(batches int)) error {
	if p.stopPolling != nil {
		p.stopPolling()
	}
	batches := 0
	// Drained when two polls in a row find nothing new (a shard may answer one empty page
	// before the records that follow it), as apitest.DrainStream decides.
	for idle := 0; idle < 2; {
		busy, err := p.poller.Poll(ctx)
		if err != nil {
			return fmt.Errorf("apply the table's stream: %w", err)
		}
		if idle++; busy {
			idle = 0
			batches++
			if batches%50 == 0 {
				progress(batches)
			}
		}
	}
	return nil
}

func (p *plume) close() {
	if p.stopPolling != nil {
		p.stopPolling()
	}
	for _, c := range p.closers {
		c()
	}
}

// response is an answer of the stack.
type response struct {
	status  int
	header  http.Header
	body    []byte
	elapsed time.Duration
}

// do serves one request in-process, with the project's key unless the header sets another
// Authorization (or a Cookie).
func (p *plume) do(ctx context.Context, method, target string, body []byte, header http.Header) response {
	req := httptest.NewRequestWithContext(ctx, method, target, bytes.NewReader(body))
	for k, v := range header {
		req.Header[k] = v
	}
	if req.Header.Get("Authorization") == "" && req.Header.Get("Cookie") == "" {
		req.Header.Set("Authorization", "Bearer "+p.key)
	}
	if body != nil && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	start := time.Now()
	p.handler.ServeHTTP(rec, req)
	return response{status: rec.Code, header: rec.Header(), body: rec.Body.Bytes(), elapsed: time.Since(start)}
}

// s3Counts counts S3 requests by what S3 bills: PUT, COPY, POST and LIST at one price, GET and
// the others at another; DELETE is free.
type s3Counts struct{ writes, reads atomic.Int64 }

type s3Snapshot struct {
	Writes int64 `json:"put_post_list"`
	Reads  int64 `json:"get_head"`
}

func (c *s3Counts) snapshot() s3Snapshot {
	return s3Snapshot{Writes: c.writes.Load(), Reads: c.reads.Load()}
}

func (s s3Snapshot) since(before s3Snapshot) s3Snapshot {
	return s3Snapshot{Writes: s.Writes - before.Writes, Reads: s.Reads - before.Reads}
}

// countingClient counts the S3 client's requests.
type countingClient struct {
	inner  aws.HTTPClient
	counts *s3Counts
}

func (c *countingClient) Do(r *http.Request) (*http.Response, error) {
	switch {
	case r.Method == http.MethodPut || r.Method == http.MethodPost:
		c.counts.writes.Add(1)
	case r.Method == http.MethodGet && (r.URL.Query().Has("list-type") || strings.Count(strings.Trim(r.URL.Path, "/"), "/") == 0):
		c.counts.writes.Add(1) // a LIST is billed as a PUT
	case r.Method == http.MethodGet || r.Method == http.MethodHead:
		c.counts.reads.Add(1)
	}
	return c.inner.Do(r)
}
