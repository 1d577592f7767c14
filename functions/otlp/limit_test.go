package otlp_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
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

			var st status.Status
			raw, err := io.ReadAll(res.Body)
			require.NoError(t, err)
			if tt.contentType == otlpmap.ContentTypeProtobuf {
				require.NoError(t, proto.Unmarshal(raw, &st), "a 413 is a google.rpc.Status")
			} else {
				require.NoError(t, protojson.Unmarshal(raw, &st), "a 413 is a google.rpc.Status")
			}
			assert.EqualValues(t, 3, st.Code, "INVALID_ARGUMENT: not worth retrying")
			assert.Contains(t, st.Message, fmt.Sprintf("at most %d spans per request", otlpmap.MaxSpansPerExport))
			assert.Empty(t, res.Header().Get("Retry-After"))
			assert.Zero(t, writes(api), "nothing written: %s", api.DDB)
			assert.Zero(t, api.S3.Count("PutObject"), "nothing written to S3")
			assert.JSONEq(t, "[]", string(api.MustDo(t, "GET", "/traces?id="+traceID, api.A.Key, nil).Body), "no trace stored")
		})
	}
}

// TestOTLPAtTheLimits sends the largest export Plume accepts (MaxSpansPerExport spans) through
// the handler against DynamoDB Local, as one trace and as a trace per span (the costliest
// shape: ingestion costs about six DynamoDB requests per trace), and checks what it costs: a
// number of DynamoDB requests bounded by the traces and spans of the export, and one S3
// object. Requests, not time: the test must hold on any machine; the time it takes is what
// the limit is chosen for (otlpmap.MaxSpansPerExport).
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
			td, _ := exportOf(otlpmap.MaxSpansPerExport, tt.traces)
			body := encodeExport(t, td, otlpmap.ContentTypeProtobuf)
			api.DDB.Reset()
			api.S3.Reset()

			res := postExport(t, api.Handler, api.A.Key, otlpmap.ContentTypeProtobuf, body)
			require.Equal(t, http.StatusOK, res.Code, res.Body.String())
			resp := ptraceotlp.NewExportResponse()
			require.NoError(t, resp.UnmarshalProto(res.Body.Bytes()))
			assert.Zero(t, resp.PartialSuccess().RejectedSpans(), resp.PartialSuccess().ErrorMessage())

			requests := api.DDB.Total()
			// A summary put per span; per trace its pending delta, its span list, and its heal
			// (a Query, a BatchGetItem per 100 of its spans, one transaction); reads per 100
			// spans, and a few per request (key, prices, index days, retries of contended
			// transactions): linear in the export, bounded by the limit.
			spans := otlpmap.MaxSpansPerExport
			bound := spans + 6*tt.traces + spans/50 + 50
			t.Logf("%d spans in %d traces (%d bytes): %d DynamoDB requests (%s), S3 %d PUT", otlpmap.MaxSpansPerExport, tt.traces, len(body), requests, api.DDB, api.S3.Count("PutObject"))
			assert.LessOrEqual(t, requests, bound, "DynamoDB requests: %s", api.DDB)
			assert.Equal(t, 1, api.S3.Count("PutObject"), "one S3 object per export")
			assert.Zero(t, api.S3.Count("GetObject"))
		})
	}
}
