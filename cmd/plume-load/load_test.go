package main

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

func TestCheckTarget(t *testing.T) {
	tests := []struct {
		name        string
		url         string
		allowRemote bool
		wantErr     string
	}{
		{name: "IPv4 loopback", url: "http://127.0.0.1:8080"},
		{name: "other 127/8 address", url: "http://127.1.2.3:8080"},
		{name: "IPv6 loopback", url: "http://[::1]:8080"},
		{name: "localhost", url: "https://localhost"},
		{name: "remote host", url: "https://api.example.com", wantErr: "not a loopback address"},
		{name: "private address", url: "http://10.0.0.5:8080", wantErr: "not a loopback address"},
		{name: "remote host allowed", url: "https://api.example.com", allowRemote: true},
		{name: "not http", url: "ftp://127.0.0.1", wantErr: "not an http(s) URL"},
		{name: "no scheme", url: "127.0.0.1:8080", wantErr: "first path segment"},
		{name: "no host", url: "http:///spans", wantErr: "not an http(s) URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkTarget(tt.url, tt.allowRemote)
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
}

func TestParseOptions(t *testing.T) {
	env := map[string]string{"PLUME_API_URL": "http://127.0.0.1:8080/", "PLUME_API_KEY": "plm_x"}
	tests := []struct {
		name      string
		args      []string
		wantErr   string
		wantBatch int
		wantShape string
	}{
		{name: "spans defaults", args: nil, wantBatch: 20, wantShape: "python"},
		{name: "spans of 100 are typescript", args: []string{"-batch", "100"}, wantBatch: 100, wantShape: "typescript"},
		{name: "otlp default batch", args: []string{"-scenario", "otlp"}, wantBatch: 100, wantShape: "typescript"},
		{name: "unbounded", args: []string{"-duration", "0"}, wantErr: "must be bounded"},
		{name: "bounded by count", args: []string{"-duration", "0", "-requests", "10"}, wantBatch: 20, wantShape: "python"},
		{name: "unknown scenario", args: []string{"-scenario", "feedback"}, wantErr: "-scenario"},
		{name: "remote target", args: []string{"-url", "http://10.1.1.1"}, wantErr: "not a loopback"},
		{name: "remote pprof", args: []string{"-pprof-url", "http://10.1.1.1:6060"}, wantErr: "-pprof-url"},
		{name: "batch over the server's limit", args: []string{"-batch", "1001"}, wantErr: "-batch"},
		{name: "bad watch", args: []string{"-watch", "x"}, wantErr: "name=pid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o, err := parseOptions(tt.args, func(k string) string { return env[k] }, &strings.Builder{})
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				assert.Equal(t, exitUsage, exitCode(err))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, "http://127.0.0.1:8080", o.baseURL)
			assert.Equal(t, tt.wantBatch, o.batch)
			assert.Equal(t, tt.wantShape, o.shape)
			assert.NotZero(t, o.seed)
		})
	}
}

func TestPercentile(t *testing.T) {
	samples := make([]time.Duration, 100)
	for i := range samples {
		samples[i] = time.Duration(100-i) * time.Millisecond // 100 ms down to 1 ms
	}
	sorted := sortedCopy(samples)
	tests := []struct {
		p    float64
		want time.Duration
	}{
		{50, 50 * time.Millisecond},
		{95, 95 * time.Millisecond},
		{99, 99 * time.Millisecond},
		{100, 100 * time.Millisecond},
		{0, time.Millisecond},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, percentile(sorted, tt.p), "p%v", tt.p)
	}
	assert.Zero(t, percentile(nil, 50))
	assert.Equal(t, 7*time.Millisecond, percentile([]time.Duration{7 * time.Millisecond}, 99))
}

// TestSpanBatches checks the generated batches against what the server accepts: the body
// limit of POST /spans (1 MiB), the SDK shapes, children before parents, and sizes of a few KB.
func TestSpanBatches(t *testing.T) {
	tests := []struct {
		batch int
		shape string
	}{{20, "python"}, {100, "typescript"}, {1, "python"}}
	for _, tt := range tests {
		t.Run(tt.shape, func(t *testing.T) {
			s := &spansScenario{batch: tt.batch, shape: tt.shape}
			w := &worker{rng: rand.New(rand.NewPCG(1, 2))}
			r := s.next(w)
			assert.Less(t, len(r.body), 1<<20)
			var spans []map[string]any
			require.NoError(t, json.Unmarshal(r.body, &spans))
			require.Len(t, spans, tt.batch)
			assert.Equal(t, tt.batch, r.spans)
			seen := map[any]bool{}
			for _, sp := range spans {
				if p := sp["parent_span_id"]; p != nil {
					assert.False(t, seen[p], "a parent came before its child")
				}
				seen[sp["id"]] = true
				in := sp["input_data"].(string)
				assert.Greater(t, len(in), 500)
				assert.Less(t, len(in), 6000)
				switch tt.shape {
				case "python":
					assert.IsType(t, float64(0), sp["started_at"])
				case "typescript":
					assert.IsType(t, "", sp["started_at"])
					assert.Contains(t, sp, "session_name")
				}
			}
			root := spans[len(spans)-1]
			assert.Nil(t, root["parent_span_id"])
		})
	}
}

func TestOTLPExport(t *testing.T) {
	s := &otlpScenario{batch: 100}
	r := s.next(&worker{rng: rand.New(rand.NewPCG(1, 2))})
	var req collectortrace.ExportTraceServiceRequest
	require.NoError(t, proto.Unmarshal(r.body, &req))
	spans := req.ResourceSpans[0].ScopeSpans[0].Spans
	require.Len(t, spans, 100)
	assert.Equal(t, "application/x-protobuf", r.contentType)
	for _, sp := range spans {
		assert.Len(t, sp.TraceId, 16)
		assert.Len(t, sp.SpanId, 8)
	}
	assert.Empty(t, spans[len(spans)-1].ParentSpanId, "the root comes last")
}

func TestCategorize(t *testing.T) {
	traces := `File: plume-local
Type: cpu
-----------+-------------------------------------------------------
      20ms   crypto/sha256.block
             github.com/aws/aws-sdk-go-v2/aws/signer/v4.(*Signer).SignHTTP
             github.com/aws/aws-sdk-go-v2/service/dynamodb.(*Client).PutItem
-----------+-------------------------------------------------------
      10ms   runtime.scanobject
             runtime.gcBgMarkWorker
-----------+-------------------------------------------------------
     1.5s   encoding/json.(*decodeState).object
             github.com/plumehq/plume/functions/tracing.(*server).ingest
-----------+-------------------------------------------------------
      10ms   somewhere.else
-----------+-------------------------------------------------------
`
	shares, total, err := categorize(strings.NewReader(traces))
	require.NoError(t, err)
	assert.Equal(t, 1540*time.Millisecond, total)
	assert.Equal(t, 20*time.Millisecond, shares["AWS SigV4 signing (DynamoDB and S3 calls)"])
	assert.Equal(t, 10*time.Millisecond, shares["Go GC (background marking, assists, sweeping)"])
	assert.Equal(t, 1500*time.Millisecond, shares["JSON (request decode, response encode)"])
	assert.Equal(t, 10*time.Millisecond, shares["other"])
}
