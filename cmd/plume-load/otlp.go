package main

import (
	"context"
	"fmt"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	resourcepb "go.opentelemetry.io/proto/otlp/resource/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpScenario posts OTLP/HTTP protobuf exports to POST /v1/traces, one trace per export, as an
// OpenTelemetry SDK's batch span processor sends them: GenAI semantic-convention attributes on
// the llm spans (gen_ai.*, messages as JSON strings), OpenInference input.value/output.value on
// the chains, the session in zeroeval.session.id.
type otlpScenario struct{ batch int }

func (s *otlpScenario) describe() string {
	return fmt.Sprintf("otlp (POST /v1/traces, protobuf, %d spans per export)", s.batch)
}

func (s *otlpScenario) setup(ctx context.Context, c *client) error { return nil }

func (s *otlpScenario) next(w *worker) request {
	tr := newTrace(w, s.batch, time.Now())
	spans := make([]*tracepb.Span, 0, len(tr))
	for _, g := range tr {
		spans = append(spans, g.otlp())
	}
	req := &collectortrace.ExportTraceServiceRequest{ResourceSpans: []*tracepb.ResourceSpans{{
		Resource: &resourcepb.Resource{Attributes: []*commonpb.KeyValue{
			str("service.name", "support-bot"), str("telemetry.sdk.language", "python"),
			str("telemetry.sdk.name", "opentelemetry"), str("deployment.environment", "load"),
		}},
		ScopeSpans: []*tracepb.ScopeSpans{{
			Scope: &commonpb.InstrumentationScope{Name: "zeroeval", Version: "0.6.9"},
			Spans: spans,
		}},
	}}}
	body, err := proto.Marshal(req)
	if err != nil {
		panic(err) // a request built here always marshals
	}
	return request{op: fmt.Sprintf("otlp-%d", s.batch), method: "POST", path: "/v1/traces", body: body,
		contentType: "application/x-protobuf", spans: len(spans)}
}

func (g genSpan) otlp() *tracepb.Span {
	sp := &tracepb.Span{
		TraceId:           g.traceID[:],
		SpanId:            g.id[:8],
		Name:              g.name,
		Kind:              tracepb.Span_SPAN_KIND_INTERNAL,
		StartTimeUnixNano: uint64(g.start.UnixNano()),
		EndTimeUnixNano:   uint64(g.end.UnixNano()),
		Status:            &tracepb.Status{Code: tracepb.Status_STATUS_CODE_OK},
	}
	if g.hasParent {
		sp.ParentSpanId = g.parentID[:8]
	}
	attrs := []*commonpb.KeyValue{str("zeroeval.session.id", g.sessionID), str("zeroeval.session.name", g.sessionName)}
	if g.kind == "llm" {
		sp.Kind = tracepb.Span_SPAN_KIND_CLIENT
		sp.Name = "chat " + g.model
		attrs = append(attrs,
			str("gen_ai.operation.name", "chat"), str("gen_ai.provider.name", "openai"),
			str("gen_ai.request.model", g.model), str("gen_ai.response.model", g.model),
			integer("gen_ai.usage.input_tokens", g.inputTokens), integer("gen_ai.usage.output_tokens", g.outputToks),
			str("gen_ai.input.messages", g.input),
			str("gen_ai.output.messages", `[{"role":"assistant","parts":[{"type":"text","content":`+quote(g.output)+`}]}]`),
		)
	} else {
		attrs = append(attrs, str("openinference.span.kind", "CHAIN"),
			str("input.value", g.input), str("output.value", g.output))
	}
	sp.Attributes = attrs
	return sp
}

func str(k, v string) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_StringValue{StringValue: v}}}
}

func integer(k string, v int) *commonpb.KeyValue {
	return &commonpb.KeyValue{Key: k, Value: &commonpb.AnyValue{Value: &commonpb.AnyValue_IntValue{IntValue: int64(v)}}}
}
