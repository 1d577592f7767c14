package otlp_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/plumehq/plume/internal/apitest"
	otlpmap "github.com/plumehq/plume/shared/otlp"
)

// exportOf returns an export of n minimal spans spread over traces traces (a new trace every
// n/traces spans), and the OTLP ids of the traces.
func exportOf(n, traces int) (ptrace.Traces, []pcommon.TraceID) {
	td := ptrace.NewTraces()
	ss := td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty()
	start := time.Now().Add(-time.Minute)
	var ids []pcommon.TraceID
	perTrace := max(1, n/traces)
	for i := range n {
		if i%perTrace == 0 {
			ids = append(ids, pcommon.TraceID(uuid.New()))
		}
		sp := ss.Spans().AppendEmpty()
		sp.SetTraceID(ids[len(ids)-1])
		sp.SetSpanID(pcommon.SpanID{0xb7, 0xad, 1, 2, 3, byte(i >> 16), byte(i >> 8), byte(i)})
		sp.SetName("step")
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(time.Second)))
	}
	return td, ids
}

// encodeExport returns td in the encoding of contentType.
func encodeExport(t *testing.T, td ptrace.Traces, contentType string) []byte {
	t.Helper()
	var (
		body []byte
		err  error
	)
	if contentType == otlpmap.ContentTypeProtobuf {
		body, err = (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	} else {
		body, err = (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	}
	require.NoError(t, err)
	return body
}

// postExport sends an export to POST /v1/traces of h and returns the recorded answer.
func postExport(t *testing.T, h http.Handler, key, contentType string, body []byte) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest("POST", "/v1/traces", bytes.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Authorization", "Bearer "+key)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// postGzipExport sends an export to POST /v1/traces of h gzipped and returns the recorded answer.
func postGzipExport(t *testing.T, h http.Handler, key, contentType string, body []byte) *httptest.ResponseRecorder {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, err := zw.Write(body)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	t.Logf("%d bytes gzipped to %d", len(body), buf.Len())
	req := httptest.NewRequest("POST", "/v1/traces", &buf)
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Content-Encoding", "gzip")
	req.Header.Set("Authorization", "Bearer "+key)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// exportOfSize returns exportOf(n, traces) encoded as contentType in exactly size bytes: each
// span carries a "payload" attribute of repetitive text sized to fill the body, which gzips
// about a hundredfold (as the 298 KB export of issue 25 that inflated to 30 MB).
func exportOfSize(t *testing.T, contentType string, n, traces, size int) ([]byte, []pcommon.TraceID) {
	t.Helper()
	td, ids := exportOf(n, traces)
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	text := strings.Repeat("The quick brown fox jumps over the lazy dog. ", (size/n+n)/45+1)
	lengths := make([]int, n)
	var body []byte
	for range 8 { // the sizes of length prefixes settle in two or three rounds
		for i, l := range lengths {
			spans.At(i).Attributes().PutStr("payload", text[:l])
		}
		body = encodeExport(t, td, contentType)
		diff := size - len(body)
		if diff == 0 {
			break
		}
		for i := range lengths {
			lengths[i] += diff / n
		}
		lengths[n-1] += diff % n
	}
	require.Len(t, body, size)
	return body, ids
}

// requireStatus checks that res is an OTLP error answer: a google.rpc.Status in the encoding of
// contentType, of code INVALID_ARGUMENT (not worth retrying), without Retry-After. It returns
// the Status's message.
func requireStatus(t *testing.T, res *httptest.ResponseRecorder, contentType string) string {
	t.Helper()
	assert.Equal(t, contentType, res.Header().Get("Content-Type"))
	var st status.Status
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	if contentType == otlpmap.ContentTypeProtobuf {
		require.NoError(t, proto.Unmarshal(raw, &st), "an error is a google.rpc.Status")
	} else {
		require.NoError(t, protojson.Unmarshal(raw, &st), "an error is a google.rpc.Status")
	}
	assert.EqualValues(t, 3, st.Code, "INVALID_ARGUMENT: not worth retrying")
	assert.Empty(t, res.Header().Get("Retry-After"))
	return st.Message
}

// writes counts the DynamoDB requests that write.
func writes(api *apitest.API) int {
	n := 0
	for _, op := range []string{"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"} {
		n += api.DDB.Counts()[op]
	}
	return n
}

// TestOTLPSpanLimit: an export of exactly MaxSpansPerExport spans is stored whole; one more
// span and the export is refused with 413 and a google.rpc.Status naming the limit, in the
// request's encoding, and nothing is written, in protobuf and in OTLP/JSON.
func TestOTLPSpanLimit(t *testing.T) {
	tests := []struct {
		contentType string
		spans       int
		status      int
	}{
		{otlpmap.ContentTypeProtobuf, otlpmap.MaxSpansPerExport, http.StatusOK},
		{otlpmap.ContentTypeProtobuf, otlpmap.MaxSpansPerExport + 1, http.StatusRequestEntityTooLarge},
		{otlpmap.ContentTypeJSON, otlpmap.MaxSpansPerExport, http.StatusOK},
		{otlpmap.ContentTypeJSON, otlpmap.MaxSpansPerExport + 1, http.StatusRequestEntityTooLarge},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %d spans", tt.contentType, tt.spans), func(t *testing.T) {
			api := apitest.New(t, apitest.Options{})
			td, traceIDs := exportOf(tt.spans, 1)
			body := encodeExport(t, td, tt.contentType)
			api.DDB.Reset()
			api.S3.Reset()

			res := postExport(t, api.Handler, api.A.Key, tt.contentType, body)
			require.Equal(t, tt.status, res.Code, res.Body.String())
			assert.Equal(t, tt.contentType, res.Header().Get("Content-Type"))
			traceID := otlpmap.TraceID(traceIDs[0])

			if tt.status == http.StatusOK {
				resp := ptraceotlp.NewExportResponse()
				if tt.contentType == otlpmap.ContentTypeProtobuf {
					require.NoError(t, resp.UnmarshalProto(res.Body.Bytes()))
				} else {
					require.NoError(t, resp.UnmarshalJSON(res.Body.Bytes()))
				}
				assert.Zero(t, resp.PartialSuccess().RejectedSpans(), resp.PartialSuccess().ErrorMessage())
				got := api.MustDo(t, "GET", "/traces?id="+traceID, api.A.Key, nil)
				var traces []map[string]any
				require.NoError(t, json.Unmarshal(got.Body, &traces))
				require.Len(t, traces, 1)
				assert.EqualValues(t, otlpmap.MaxSpansPerExport, traces[0]["span_count"])
				return
			}

			msg := requireStatus(t, res, tt.contentType)
			assert.Contains(t, msg, fmt.Sprintf("at most %d spans per request", otlpmap.MaxSpansPerExport))
			assert.Zero(t, writes(api), "nothing written: %s", api.DDB)
			assert.Zero(t, api.S3.Count("PutObject"), "nothing written to S3")
			assert.JSONEq(t, "[]", string(api.MustDo(t, "GET", "/traces?id="+traceID, api.A.Key, nil).Body), "no trace stored")
		})
	}
}

// TestOTLPAtTheLimits sends the largest export Plume accepts (MaxSpansPerExport spans in
// MaxExportBytes bytes, gzipped as the Collector's otlphttp exporter sends it) through the
// handler against DynamoDB Local, as one trace and as a trace per span (the costliest shape:
// ingestion costs about six DynamoDB requests per trace), and checks what it costs: a number of
// DynamoDB requests bounded by the traces and spans of the export, and one S3 object. Requests,
// not time: the test must hold on any machine; the time it takes is what the limits are chosen
// for (otlpmap.MaxSpansPerExport, MaxExportBytes).
//
// Sent uncompressed, the same export does not reach the function in a deployment: a protobuf
// body travels base64-encoded in Lambda's event, which holds at most 6 MB, so API Gateway (or
// the Function URL) refuses one past lambdahttp.MaxBinaryBody with its own 413.
func TestOTLPAtTheLimits(t *testing.T) {
	tests := []struct {
		name   string
		traces int
	}{
		{"one trace", 1},
		{"a trace per span", otlpmap.MaxSpansPerExport},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := apitest.New(t, apitest.Options{})
			body, _ := exportOfSize(t, otlpmap.ContentTypeProtobuf, otlpmap.MaxSpansPerExport, tt.traces, otlpmap.MaxExportBytes)
			api.DDB.Reset()
			api.S3.Reset()

			if tt.traces == 1 {
				refused := postExport(t, api.Handler, api.A.Key, otlpmap.ContentTypeProtobuf, body)
				require.Equal(t, http.StatusRequestEntityTooLarge, refused.Code, "uncompressed: past Lambda's event")
				assert.JSONEq(t, `{"message":"Request Entity Too Large"}`, refused.Body.String(), "API Gateway's answer")
				require.Zero(t, api.DDB.Total(), "the function never ran")
			}

			res := postGzipExport(t, api.Handler, api.A.Key, otlpmap.ContentTypeProtobuf, body)
			require.Equal(t, http.StatusOK, res.Code, res.Body.String())
			resp := ptraceotlp.NewExportResponse()
			require.NoError(t, resp.UnmarshalProto(res.Body.Bytes()))
			assert.Zero(t, resp.PartialSuccess().RejectedSpans(), resp.PartialSuccess().ErrorMessage())

			requests := api.DDB.Total()
			// A summary put per span, and a few per request (key, prices): linear in the export,
			// bounded by the limit. The aggregates are the change stream consumer's.
			spans := otlpmap.MaxSpansPerExport
			bound := spans + 10
			t.Logf("%d spans in %d traces (%d bytes): %d DynamoDB requests (%s), S3 %d PUT", otlpmap.MaxSpansPerExport, tt.traces, len(body), requests, api.DDB, api.S3.Count("PutObject"))
			assert.LessOrEqual(t, requests, bound, "DynamoDB requests: %s", api.DDB)
			assert.Equal(t, 1, api.S3.Count("PutObject"), "one S3 object per export")
			assert.Zero(t, api.S3.Count("GetObject"))
		})
	}
}

// TestOTLPBodyLimit: an export of exactly MaxExportBytes bytes once gunzipped is stored whole;
// one byte more, or the 30 MB that a small gzip body inflated to in issue 25 (298 KB there,
// about 100 KB here; accepted then, under a 32 MB cap), and the export is refused with 413 and a google.rpc.Status naming the
// limit, in the request's encoding, and nothing is written; in protobuf and in OTLP/JSON, every
// export of MaxSpansPerExport spans, so that only its bytes decide.
func TestOTLPBodyLimit(t *testing.T) {
	tests := []struct {
		contentType string
		size        int
		status      int
	}{
		{otlpmap.ContentTypeProtobuf, otlpmap.MaxExportBytes, http.StatusOK},
		{otlpmap.ContentTypeProtobuf, otlpmap.MaxExportBytes + 1, http.StatusRequestEntityTooLarge},
		{otlpmap.ContentTypeProtobuf, 30 << 20, http.StatusRequestEntityTooLarge},
		{otlpmap.ContentTypeJSON, otlpmap.MaxExportBytes, http.StatusOK},
		{otlpmap.ContentTypeJSON, otlpmap.MaxExportBytes + 1, http.StatusRequestEntityTooLarge},
		{otlpmap.ContentTypeJSON, 30 << 20, http.StatusRequestEntityTooLarge},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %d bytes", tt.contentType, tt.size), func(t *testing.T) {
			api := apitest.New(t, apitest.Options{})
			body, traceIDs := exportOfSize(t, tt.contentType, otlpmap.MaxSpansPerExport, 1, tt.size)
			traceID := otlpmap.TraceID(traceIDs[0])
			api.DDB.Reset()
			api.S3.Reset()

			res := postGzipExport(t, api.Handler, api.A.Key, tt.contentType, body)
			require.Equal(t, tt.status, res.Code, res.Body.String())
			if tt.status == http.StatusOK {
				assert.Equal(t, tt.contentType, res.Header().Get("Content-Type"))
				got := api.MustDo(t, "GET", "/traces?id="+traceID, api.A.Key, nil)
				var traces []map[string]any
				require.NoError(t, json.Unmarshal(got.Body, &traces))
				require.Len(t, traces, 1)
				assert.EqualValues(t, otlpmap.MaxSpansPerExport, traces[0]["span_count"], "every span stored")
				return
			}
			msg := requireStatus(t, res, tt.contentType)
			assert.Contains(t, msg, fmt.Sprintf("at most %d bytes per request", otlpmap.MaxExportBytes))
			assert.Zero(t, writes(api), "nothing written: %s", api.DDB)
			assert.Zero(t, api.S3.Count("PutObject"), "nothing written to S3")
			assert.JSONEq(t, "[]", string(api.MustDo(t, "GET", "/traces?id="+traceID, api.A.Key, nil).Body), "no trace stored")
		})
	}
}
