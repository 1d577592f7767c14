package otlp

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// benchTraces returns an export of n spans as instrumented services send them: traces of ten
// spans (an HTTP server root, three GenAI chat calls with messages and usage, two database
// queries, two outgoing HTTP calls, a tool call and an internal span) under one resource with
// the attributes an SDK sets.
func benchTraces(tb testing.TB, n int) ptrace.Traces {
	tb.Helper()
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	require.NoError(tb, rs.Resource().Attributes().FromRaw(map[string]any{
		"service.name": "checkout", "service.version": "1.4.2", "deployment.environment.name": "production",
		"telemetry.sdk.name": "opentelemetry", "telemetry.sdk.language": "python", "telemetry.sdk.version": "1.27.0",
		"host.name": "ip-10-0-12-34", "process.pid": int64(4242),
	}))
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("opentelemetry.instrumentation.openai_v2")
	ss.Scope().SetVersion("2.1b0")
	message := strings.Repeat("Where is my order? It was due on Tuesday. ", 8)
	for i := 0; i < n; i++ {
		sp := ss.Spans().AppendEmpty()
		t := i / 10
		sp.SetTraceID(pcommon.TraceID{0x0a, 0xf7, 0x65, 0x19, byte(t >> 8), byte(t), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
		sp.SetSpanID(pcommon.SpanID{0xb7, 0xad, byte(i >> 8), byte(i), 1, 2, 3, 4})
		if i%10 != 0 {
			root := t * 10
			sp.SetParentSpanID(pcommon.SpanID{0xb7, 0xad, byte(root >> 8), byte(root), 1, 2, 3, 4})
		}
		start := testStart.Add(time.Duration(i) * time.Millisecond)
		sp.SetStartTimestamp(pcommon.NewTimestampFromTime(start))
		sp.SetEndTimestamp(pcommon.NewTimestampFromTime(start.Add(250 * time.Millisecond)))
		a := sp.Attributes()
		switch i % 10 {
		case 0:
			sp.SetName("POST /checkout")
			sp.SetKind(ptrace.SpanKindServer)
			a.PutStr("http.request.method", "POST")
			a.PutStr("url.path", "/checkout")
			a.PutStr("url.scheme", "https")
			a.PutInt("http.response.status_code", 200)
			a.PutStr("server.address", "api.example.com")
			a.PutStr("user_agent.original", "python-requests/2.32.3")
			a.PutStr("zeroeval.session.id", fmt.Sprintf("session-%d", t))
			a.PutStr("user.id", "u-1")
		case 1, 2, 3:
			sp.SetName("chat gpt-4o")
			sp.SetKind(ptrace.SpanKindClient)
			sp.Status().SetCode(ptrace.StatusCodeOk)
			a.PutStr("gen_ai.operation.name", "chat")
			a.PutStr("gen_ai.provider.name", "openai")
			a.PutStr("gen_ai.request.model", "gpt-4o")
			a.PutStr("gen_ai.response.model", "gpt-4o-2024-08-06")
			a.PutStr("gen_ai.response.id", "chatcmpl-AbCdEfGh1234567890")
			a.PutDouble("gen_ai.request.temperature", 0.2)
			a.PutInt("gen_ai.request.max_tokens", 512)
			a.PutEmptySlice("gen_ai.response.finish_reasons").AppendEmpty().SetStr("stop")
			a.PutInt("gen_ai.usage.input_tokens", 1200)
			a.PutInt("gen_ai.usage.output_tokens", 300)
			a.PutInt("gen_ai.usage.cache_read.input_tokens", 1024)
			a.PutStr("gen_ai.input.messages", `[{"role":"user","parts":[{"type":"text","content":"`+message+`"}]}]`)
			a.PutStr("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":"On its way."}],"finish_reason":"stop"}]`)
			a.PutStr("zeroeval.session.id", fmt.Sprintf("session-%d", t))
		case 4, 5:
			sp.SetName("SELECT orders")
			sp.SetKind(ptrace.SpanKindClient)
			a.PutStr("db.system.name", "postgresql")
			a.PutStr("db.namespace", "shop")
			a.PutStr("db.operation.name", "SELECT")
			a.PutStr("db.query.text", "SELECT id, status, eta FROM orders WHERE customer_id = $1 AND id = $2")
			a.PutStr("server.address", "db.internal")
			a.PutInt("server.port", 5432)
		case 6, 7:
			sp.SetName("GET")
			sp.SetKind(ptrace.SpanKindClient)
			a.PutStr("http.request.method", "GET")
			a.PutStr("url.full", "https://carrier.example.com/v1/shipments/1Z999AA10123456784")
			a.PutInt("http.response.status_code", 200)
			a.PutStr("server.address", "carrier.example.com")
			a.PutStr("network.protocol.version", "1.1")
		case 8:
			sp.SetName("execute_tool get_order")
			a.PutStr("gen_ai.operation.name", "execute_tool")
			a.PutStr("gen_ai.tool.name", "get_order")
			a.PutStr("gen_ai.tool.call.id", "call_VSPygqKTWdrhaFErNvMV18Yl")
			a.PutStr("code.function.name", "tools.get_order")
		case 9:
			sp.SetName("render_receipt")
			a.PutStr("code.function.name", "receipts.render")
			a.PutStr("code.file.path", "/app/receipts.py")
			a.PutInt("code.line.number", 42)
		}
	}
	return td
}

// BenchmarkDecodeMap measures Decode + Map per span of a 1,000-span export, in protobuf and in
// OTLP/JSON, beside the Collector's own pdata unmarshal of the same payload (what an OTLP
// receiver does before any processing), Decode alone and Map alone. Compare ns/span:
//
//	go test -run '^$' -bench DecodeMap -count 10 ./shared/otlp/ | benchstat -
func BenchmarkDecodeMap(b *testing.B) {
	const spans = 1000
	td := benchTraces(b, spans)
	pb, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	require.NoError(b, err)
	js, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
	require.NoError(b, err)

	perSpan := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*spans), "ns/span")
	}
	mapAll := func(b *testing.B, x *Export) {
		if got, rejected, _ := Map(x, testProject, testNow); len(got) != spans || rejected != 0 {
			b.Fatalf("mapped %d, rejected %d", len(got), rejected)
		}
	}
	for _, enc := range []struct {
		name, contentType string
		body              []byte
		unmarshal         func([]byte) (ptrace.Traces, error)
	}{
		{"protobuf", ContentTypeProtobuf, pb, (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces},
		{"json", ContentTypeJSON, js, (&ptrace.JSONUnmarshaler{}).UnmarshalTraces},
	} {
		b.Run(enc.name+"/pdata", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(enc.body)))
			for b.Loop() {
				if _, err := enc.unmarshal(enc.body); err != nil {
					b.Fatal(err)
				}
			}
			perSpan(b)
		})
		b.Run(enc.name+"/decode+map", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(enc.body)))
			for b.Loop() {
				x, err := Decode(enc.body, enc.contentType)
				if err != nil {
					b.Fatal(err)
				}
				mapAll(b, x)
			}
			perSpan(b)
		})
		b.Run(enc.name+"/decode", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(enc.body)))
			for b.Loop() {
				if _, err := Decode(enc.body, enc.contentType); err != nil {
					b.Fatal(err)
				}
			}
			perSpan(b)
		})
	}
	b.Run("map", func(b *testing.B) {
		x, err := Decode(pb, ContentTypeProtobuf)
		require.NoError(b, err)
		b.ReportAllocs()
		for b.Loop() {
			mapAll(b, x)
		}
		perSpan(b)
	})
}
