package otlp_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkresource "go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	oteltrace "go.opentelemetry.io/otel/trace"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/config"
	otlpmap "github.com/plumehq/plume/shared/otlp"
	"github.com/plumehq/plume/shared/trace"
)

type stack struct {
	srv     *httptest.Server
	key     string
	project string
}

// newStack serves the whole API, built by the composition root as plume-local builds it, over
// a fresh table and S3: exports go to the OTLP function, reads to the tracing query function.
func newStack(t *testing.T) *stack {
	t.Helper()
	api := apitest.New(t, apitest.Options{Config: func(c *config.Config) { c.AttachmentURLTTL = time.Minute }})
	st := &stack{project: api.A.ProjectID, key: api.A.Key}
	st.srv = httptest.NewServer(api.Handler)
	t.Cleanup(st.srv.Close)
	return st
}

func (st *stack) spans(t *testing.T, query string) []map[string]any {
	t.Helper()
	req, _ := http.NewRequest("GET", st.srv.URL+"/spans?"+query, nil)
	req.Header.Set("Authorization", "Bearer "+st.key)
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	require.Equal(t, http.StatusOK, res.StatusCode)
	var out []map[string]any
	require.NoError(t, json.NewDecoder(res.Body).Decode(&out))
	return out
}

// TestOpenTelemetrySDKExport exports through the real OpenTelemetry Go SDK (otlptracehttp,
// protobuf, gzip) and reads the spans back through GET /spans.
func TestOpenTelemetrySDKExport(t *testing.T) {
	st := newStack(t)
	ctx := context.Background()
	u, _ := url.Parse(st.srv.URL)
	exp, err := otlptracehttp.New(ctx,
		otlptracehttp.WithEndpoint(u.Host), otlptracehttp.WithInsecure(),
		otlptracehttp.WithCompression(otlptracehttp.GzipCompression),
		otlptracehttp.WithHeaders(map[string]string{"Authorization": "Bearer " + st.key}),
	)
	require.NoError(t, err)
	res := sdkresource.NewSchemaless(attribute.String("service.name", "support-bot"))
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithResource(res))
	tracer := tp.Tracer("plume-test")

	rootCtx, root := tracer.Start(ctx, "handle_request", oteltrace.WithAttributes(attribute.String("session.id", "conv-42")))
	_, llm := tracer.Start(rootCtx, "chat gpt-4o-mini", oteltrace.WithAttributes(
		attribute.String("gen_ai.operation.name", "chat"),
		attribute.String("gen_ai.provider.name", "openai"),
		attribute.String("gen_ai.request.model", "gpt-4o-mini"),
		attribute.Int("gen_ai.usage.input_tokens", 1000),
		attribute.Int("gen_ai.usage.output_tokens", 200),
	))
	llm.End()
	root.End()
	require.NoError(t, tp.Shutdown(ctx))

	traceID := otlpmap.TraceID([16]byte(root.SpanContext().TraceID()))
	spans := st.spans(t, "trace_id="+traceID)
	require.Len(t, spans, 2)
	byName := map[string]map[string]any{}
	for _, sp := range spans {
		byName[sp["name"].(string)] = sp
	}
	rootID := otlpmap.SpanID([8]byte(root.SpanContext().SpanID()))
	assert.Equal(t, rootID, byName["handle_request"]["id"])
	assert.True(t, strings.HasSuffix(rootID, "-0000-000000000000"), "span ids are the 8 bytes followed by zeros")
	got := byName["chat gpt-4o-mini"]
	require.NotNil(t, got)
	assert.Equal(t, rootID, got["parent_span_id"])
	assert.Equal(t, "llm", got["kind"])
	assert.Equal(t, "price_table", got["cost_source"])
	assert.InDelta(t, (1000*0.15+200*0.60)/1e6, got["cost"], 1e-12)
	assert.Equal(t, trace.SessionIDOf("conv-42"), byName["handle_request"]["session_id"])
}

// incompressible returns n bytes that gzip cannot shrink.
func incompressible(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.NewChaCha8([32]byte{}).Read(b)
	return b
}

func TestOTLPErrors(t *testing.T) {
	st := newStack(t)
	gzipped := func(b []byte) []byte {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write(b)
		_ = zw.Close()
		return buf.Bytes()
	}
	// gateway marks the requests refused before the function runs, in a deployment as here: a
	// body whose event would pass Lambda's 6 MB (a protobuf or gzip body travels base64-encoded
	// in it) is API Gateway's 413, with its own body. TestOTLPBodyLimit covers the function's
	// own bound (MaxExportBytes once gunzipped), with bodies the event carries.
	tests := []struct {
		name, path, contentType, encoding, key string
		body                                   []byte
		status                                 int
		gateway                                bool
	}{
		{"wrong content type", "/v1/traces", "text/plain", "", st.key, []byte("x"), 415, false},
		{"no key", "/v1/traces", "application/x-protobuf", "", "", nil, 401, false},
		{"bad key", "/v1/traces", "application/json", "", "plm_nope_nope_nope_nope", []byte("{}"), 401, false},
		{"malformed protobuf", "/v1/traces", "application/x-protobuf", "", st.key, []byte{0xff, 0xff, 0xff}, 400, false},
		{"malformed JSON", "/v1/traces", "application/json", "", st.key, []byte(`{"resourceSpans": [`), 400, false},
		{"truncated gzip", "/v1/traces", "application/json", "gzip", st.key, gzipped([]byte(`{}`))[:10], 400, false},
		{"unknown encoding", "/v1/traces", "application/json", "br", st.key, []byte(`{}`), 415, false},
		{"oversized", "/v1/traces", "application/x-protobuf", "", st.key, make([]byte, otlpmap.MaxExportBytes+1), 413, true},
		{"oversized gzip", "/v1/traces", "application/x-protobuf", "gzip", st.key, gzipped(incompressible(otlpmap.MaxExportBytes + 1)), 413, true},
		{"inflates past the limit", "/v1/traces", "application/x-protobuf", "gzip", st.key, gzipped(make([]byte, otlpmap.MaxExportBytes+1)), 413, false},
		{"empty export", "/v1/traces", "application/json", "", st.key, []byte(`{}`), 200, false},
		{"metrics discarded", "/v1/metrics", "application/json", "", st.key, []byte(`{"resourceMetrics":[]}`), 200, false},
		{"logs discarded", "/v1/logs", "application/x-protobuf", "", st.key, nil, 200, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", st.srv.URL+tt.path, bytes.NewReader(tt.body))
			req.Header.Set("Content-Type", tt.contentType)
			if tt.encoding != "" {
				req.Header.Set("Content-Encoding", tt.encoding)
			}
			if tt.key != "" {
				req.Header.Set("Authorization", "Bearer "+tt.key)
			}
			res, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer res.Body.Close()
			assert.Equal(t, tt.status, res.StatusCode)
			if tt.gateway {
				body, err := io.ReadAll(res.Body)
				require.NoError(t, err)
				assert.JSONEq(t, `{"message":"Request Entity Too Large"}`, string(body), "API Gateway's answer")
				return
			}
			if tt.status != 200 && tt.contentType == "application/x-protobuf" {
				var buf bytes.Buffer
				_, _ = buf.ReadFrom(res.Body)
				var s status.Status
				assert.NoError(t, proto.Unmarshal(buf.Bytes(), &s), "errors are a google.rpc.Status")
				assert.NotEmpty(t, s.Message)
			}
		})
	}
	assert.Empty(t, st.spans(t, ""), "nothing was stored")
}

// TestOTLPUnauthenticatedChallenge: a 401 names the scheme to use, as the JSON API's do
// (issue 11: OTLP 401s had no WWW-Authenticate).
func TestOTLPUnauthenticatedChallenge(t *testing.T) {
	st := newStack(t)
	for _, key := range []string{"", "plm_nope_nope_nope_nope"} {
		req, _ := http.NewRequest("POST", st.srv.URL+"/v1/traces", bytes.NewReader([]byte("{}")))
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = res.Body.Close()
		assert.Equal(t, http.StatusUnauthorized, res.StatusCode)
		assert.Equal(t, `Bearer realm="plume"`, res.Header.Get("WWW-Authenticate"), "key %q", key)
	}
}
