package otlp

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/plumehq/plume/shared/trace"
)

var update = flag.Bool("update", false, "rewrite the OTLP/JSON fixtures in testdata")

// The fixtures are the OTLP/JSON form of fixtureTraces:
//
//   - collector_export.json is byte for byte what the Collector's otlp_http exporter sends
//     (ptraceotlp.ExportRequest.MarshalJSON, the same marshaler as ptrace.JSONMarshaler):
//     hex ids, int64 values as strings, enums as numbers.
//   - enum_names_export.json is the other form OTLP/JSON receivers must accept: enums as
//     their names, int64 values as JSON numbers, upper-case hex, indented.
const (
	fixtureCollector = "testdata/collector_export.json"
	fixtureEnumNames = "testdata/enum_names_export.json"
)

// fixtureTraces is a small checkout service trace: an HTTP server span, a GenAI chat call, a
// failed tool call, a database query, and one span that cannot be stored (it ends before it
// starts).
func fixtureTraces(t testing.TB) ptrace.Traces {
	t.Helper()
	at := func(d time.Duration) pcommon.Timestamp { return pcommon.NewTimestampFromTime(testStart.Add(d)) }
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	// Attributes are put in a fixed order: the wire order is the fixtures' order.
	rs.Resource().Attributes().PutStr("service.name", "checkout")
	rs.Resource().Attributes().PutStr("service.version", "1.4.2")
	rs.Resource().Attributes().PutStr("telemetry.sdk.language", "python")
	traceID := traceIDOf(t, "0af7651916cd43dd8448eb211c80319c")
	root := spanIDOf(t, "b7ad6b7169203331")
	newSpan := func(ss ptrace.ScopeSpans, id, parent pcommon.SpanID, name string, kind ptrace.SpanKind,
		start, end time.Duration, attrs map[string]any) ptrace.Span {
		sp := ss.Spans().AppendEmpty()
		sp.SetTraceID(traceID)
		sp.SetSpanID(id)
		sp.SetParentSpanID(parent)
		sp.SetName(name)
		sp.SetKind(kind)
		sp.SetStartTimestamp(at(start))
		sp.SetEndTimestamp(at(end))
		for _, k := range sortedKeys(attrs) {
			require.NoError(t, sp.Attributes().PutEmpty(k).FromRaw(attrs[k]))
		}
		return sp
	}

	http := rs.ScopeSpans().AppendEmpty()
	http.Scope().SetName("opentelemetry.instrumentation.fastapi")
	http.Scope().SetVersion("0.48b0")
	sp := newSpan(http, root, pcommon.SpanID{}, "POST /checkout", ptrace.SpanKindServer, 0, 2*time.Second, map[string]any{
		"http.request.method": "POST", "url.path": "/checkout", "http.response.status_code": 200,
		"zeroeval.session.id": "session-42", "zeroeval.session.name": "Checkout", "user.id": "u-1",
		"tag.tags": `{"env":"prod"}`,
	})
	sp.TraceState().FromRaw("vendor=1")

	genai := rs.ScopeSpans().AppendEmpty()
	genai.Scope().SetName("opentelemetry.instrumentation.openai_v2")
	genai.Scope().SetVersion("2.1b0")
	sp = newSpan(genai, spanIDOf(t, "00f067aa0ba902b7"), root, "chat gpt-4o", ptrace.SpanKindClient,
		100*time.Millisecond, 1200*time.Millisecond, map[string]any{
			"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
			"gen_ai.request.model": "gpt-4o", "gen_ai.response.model": "gpt-4o-2024-08-06",
			"gen_ai.request.temperature": 0.2, "gen_ai.response.finish_reasons": []any{"stop"},
			"gen_ai.usage.input_tokens": 1200, "gen_ai.usage.output_tokens": 300,
			"gen_ai.usage.cache_read.input_tokens": 1024, "gen_ai.usage.reasoning.output_tokens": 128,
			"gen_ai.input.messages":  `[{"role":"user","parts":[{"type":"text","content":"Where is my order?"}]}]`,
			"gen_ai.output.messages": `[{"role":"assistant","parts":[{"type":"text","content":"On its way."}],"finish_reason":"stop"}]`,
			"zeroeval": `{"task":"support","prompt_slug":"support","prompt_version":2,` +
				`"prompt_version_id":"0e6a3f52-8b1d-4c8e-9f00-1234567890ab","content_hash":"9f86d081"}`,
			"zeroeval.session.id": "session-42", "gen_ai.usage.cost": 0.00425,
		})
	sp.Status().SetCode(ptrace.StatusCodeOk)

	sp = newSpan(genai, spanIDOf(t, "1111111111111111"), root, "execute_tool get_order", ptrace.SpanKindInternal,
		1300*time.Millisecond, 1400*time.Millisecond, map[string]any{
			"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_order",
			"code.file.path": "/app/tools.py", "code.line.number": 88,
		})
	sp.Status().SetCode(ptrace.StatusCodeError)
	sp.Status().SetMessage("KeyError: 'order-7'")
	ev := sp.Events().AppendEmpty()
	ev.SetName("exception")
	ev.SetTimestamp(at(1390 * time.Millisecond))
	ev.Attributes().PutStr("exception.type", "KeyError")
	ev.Attributes().PutStr("exception.message", "'order-7'")
	ev.Attributes().PutStr("exception.stacktrace", "Traceback (most recent call last):\n  File \"/app/tools.py\", line 88\nKeyError: 'order-7'")

	db := rs.ScopeSpans().AppendEmpty()
	db.Scope().SetName("opentelemetry.instrumentation.sqlalchemy")
	sp = newSpan(db, spanIDOf(t, "2222222222222222"), root, "SELECT orders", ptrace.SpanKindClient,
		1410*time.Millisecond, 1450*time.Millisecond, map[string]any{
			"db.system.name": "postgresql", "db.query.text": "SELECT * FROM orders WHERE id = $1",
			"db.response.returned_rows": 1, "cache.hit": false, "ratio": 0.5,
			"blob": []byte{0xde, 0xad, 0xbe, 0xef},
		})
	labels := sp.Attributes().PutEmptyMap("labels") // a map in a fixed order
	labels.PutStr("shard", "eu-1")
	require.NoError(t, labels.PutEmptySlice("replicas").FromRaw([]any{int64(1), int64(2)}))
	link := sp.Links().AppendEmpty()
	link.SetTraceID(traceIDOf(t, "5b8efff798038103d269b633813fc60c"))
	link.SetSpanID(spanIDOf(t, "eee19b7ec3c1b174"))

	newSpan(db, spanIDOf(t, "3333333333333333"), root, "time travel", ptrace.SpanKindInternal,
		time.Second, 500*time.Millisecond, nil)
	return td
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := range keys { // insertion sort: tiny maps
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// TestWriteFixtures rewrites the fixtures with -update.
func TestWriteFixtures(t *testing.T) {
	if !*update {
		t.Skip("run with -update to rewrite the fixtures")
	}
	body, err := (&ptrace.JSONMarshaler{}).MarshalTraces(fixtureTraces(t))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(fixtureCollector, body, 0o644))

	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	require.NoError(t, dec.Decode(&doc))
	renamed, err := json.MarshalIndent(enumNames(doc, ""), "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(fixtureEnumNames, append(renamed, '\n'), 0o644))
}

// enumNames rewrites an OTLP/JSON document in its other accepted form (see fixtureEnumNames).
func enumNames(v any, key string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = enumNames(e, k)
		}
		if code, ok := x["code"].(json.Number); ok && key == "status" {
			x["code"] = []string{"STATUS_CODE_UNSET", "STATUS_CODE_OK", "STATUS_CODE_ERROR"}[mustInt(code)]
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = enumNames(e, key)
		}
		return x
	case json.Number:
		if key == "kind" {
			return []string{"SPAN_KIND_UNSPECIFIED", "SPAN_KIND_INTERNAL", "SPAN_KIND_SERVER", "SPAN_KIND_CLIENT",
				"SPAN_KIND_PRODUCER", "SPAN_KIND_CONSUMER"}[mustInt(x)]
		}
	case string:
		switch {
		case strings.HasSuffix(key, "UnixNano") || key == "intValue":
			return json.Number(x)
		case key == "traceId" || key == "spanId" || key == "parentSpanId":
			return strings.ToUpper(x)
		}
	}
	return v
}

func mustInt(n json.Number) int {
	i, err := n.Int64()
	if err != nil {
		panic(err)
	}
	return int(i)
}

// The OTLP/JSON fixtures decode and map exactly as the protobuf form of the same trace.
func TestFixturesMapLikeProtobuf(t *testing.T) {
	pb, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(fixtureTraces(t))
	require.NoError(t, err)
	td, err := Decode(pb, "application/x-protobuf")
	require.NoError(t, err)
	want, wantRejected, wantReasons := Map(td, testProject, testNow)
	require.Len(t, want, 4)
	require.Equal(t, 1, wantRejected)
	require.Equal(t, []string{"span 3333333333333333: end_time_unix_nano: 2025-06-01T11:59:00.623457Z is before " +
		"start_time_unix_nano 2025-06-01T11:59:01.123457Z"}, wantReasons)

	for _, name := range []string{fixtureCollector, fixtureEnumNames} {
		t.Run(filepath.Base(name), func(t *testing.T) {
			body, err := os.ReadFile(name)
			require.NoError(t, err)
			td, err := Decode(body, "application/json; charset=utf-8")
			require.NoError(t, err)
			got, rejected, reasons := Map(td, testProject, testNow)
			assert.Equal(t, wantRejected, rejected)
			assert.Equal(t, wantReasons, reasons)
			require.Len(t, got, len(want))
			for i := range got {
				checkSpan(t, got[i], testNow)
				assert.Equal(t, string(want[i].AppendJSON(nil)), string(got[i].AppendJSON(nil)))
				assert.Equal(t, want[i], got[i])
			}
		})
	}
}

// What the fixture trace maps to, span by span.
func TestFixtureMapping(t *testing.T) {
	body, err := os.ReadFile(fixtureCollector)
	require.NoError(t, err)
	td, err := Decode(body, "application/json")
	require.NoError(t, err)
	spans, _, _ := Map(td, testProject, testNow)
	require.Len(t, spans, 4)
	const traceID = "0af76519-16cd-43dd-8448-eb211c80319c"
	rootID := "b7ad6b71-6920-3331-0000-000000000000"
	session := trace.SessionIDOf("session-42")

	root, chat, tool, db := spans[0], spans[1], spans[2], spans[3]
	for _, s := range spans {
		assert.Equal(t, traceID, s.TraceID)
	}
	assert.Equal(t, rootID, root.ID)
	assert.Nil(t, root.ParentSpanID)
	assert.Equal(t, "http", root.Kind)
	assert.Equal(t, &session, root.SessionID)
	assert.Equal(t, map[string]string{"user_id": "u-1", "env": "prod"}, root.Tags.Map())

	assert.Equal(t, "00f067aa-0ba9-02b7-0000-000000000000", chat.ID)
	assert.Equal(t, &rootID, chat.ParentSpanID)
	assert.Equal(t, "llm", chat.Kind)
	assert.Equal(t, ptr("ok"), chat.Status)
	assert.Equal(t, &trace.LLMUsage{Provider: "openai", Model: "gpt-4o-2024-08-06", InputTokens: 1200, OutputTokens: 300,
		CachedInputTokens: 1024, ReasoningTokens: 128}, chat.LLM)
	assert.Equal(t, ptr(0.00425), chat.Cost)
	assert.Equal(t, ptr(1100.0), chat.DurationMS)
	assert.Equal(t, &trace.PromptLink{Task: "support", PromptSlug: "support", PromptVersion: 2,
		PromptVersionID: "0e6a3f52-8b1d-4c8e-9f00-1234567890ab", ContentHash: "9f86d081"}, chat.Link)

	assert.Equal(t, "tool", tool.Kind)
	assert.True(t, tool.HasError())
	assert.Equal(t, ptr("KeyError"), tool.ErrorCode)
	assert.Equal(t, ptr("'order-7'"), tool.ErrorMessage)
	assert.Equal(t, ptr("/app/tools.py"), tool.CodeFilepath)
	assert.Equal(t, ptr(88), tool.CodeLineno)
	assert.Nil(t, tool.LLM)

	assert.Equal(t, "database", db.Kind)
	assert.JSONEq(t, `{"blob":"3q2+7w==","cache.hit":false,"db.query.text":"SELECT * FROM orders WHERE id = $1",`+
		`"db.response.returned_rows":1,"db.system.name":"postgresql","labels":{"replicas":[1,2],"shard":"eu-1"},"ratio":0.5,`+
		`"resource":{"service.name":"checkout","service.version":"1.4.2","telemetry.sdk.language":"python"},`+
		`"scope":{"name":"opentelemetry.instrumentation.sqlalchemy"}}`, string(db.Attributes))
}
