package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/functions/gateway"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/llm/fakemodel"
	"github.com/plumehq/plume/shared/llm/fakemodel/fakemodeltest"
	"github.com/plumehq/plume/shared/pricing"
	"github.com/plumehq/plume/shared/trace"
)

// storedSpan is the part of a span of GET /spans the tests read.
type storedSpan struct {
	ID           string          `json:"id"`
	TraceID      string          `json:"trace_id"`
	ParentSpanID *string         `json:"parent_span_id"`
	Kind         string          `json:"kind"`
	Cost         *float64        `json:"cost"`
	CostSource   *string         `json:"cost_source"`
	InputData    *string         `json:"input_data"`
	OutputData   *string         `json:"output_data"`
	Attributes   json.RawMessage `json:"attributes"`
	PromptLink   *struct {
		PromptVersionID string `json:"prompt_version_id"`
	} `json:"prompt_link"`
}

// projectSpans lists the spans of a project, through the API.
func projectSpans(t *testing.T, a *apitest.API, key, query string) []storedSpan {
	t.Helper()
	res := a.MustDo(t, "GET", "/spans"+query, key, nil)
	var spans []storedSpan
	res.Decode(t, &spans)
	return spans
}

// TestTracedCalls: a call that asks is recorded as an llm span with its tokens, cost, time to
// first byte and the provider's request id, in the trace its traceparent names; a call that
// does not ask (the zeroeval SDK's, which records its own span) is not recorded, unless the
// deployment traces every call and the call does not say off.
func TestTracedCalls(t *testing.T) {
	fake := fakemodeltest.Start(t, fakemodel.WithAPIKey(providerKey), fakemodel.WithRules(fakemodel.Rule{
		Reply: fakemodel.Reply{Text: "Reset it under Settings."}}))
	g := newGateway(t, openAI(fake.OpenAIBaseURL()))
	key := g.api.A.Key

	// Not asked: the zeroeval SDK's call, recorded by the SDK itself.
	res, body := call(t, g.url, key, map[string]any{"model": "gpt-4o-mini", "messages": messages("s", "untraced")})
	require.Equal(t, http.StatusOK, res.StatusCode, "%s", body)
	assert.Empty(t, res.Header.Get(gateway.SpanIDHeader))
	assert.Empty(t, projectSpans(t, g.api, key, ""), "no second span of an SDK's call")

	// Asked by header.
	res, body = call(t, g.url, key, map[string]any{"model": "openai/gpt-4o-mini", "messages": messages("s", "traced")},
		header(gateway.TraceHeader, "on"))
	require.Equal(t, http.StatusOK, res.StatusCode, "%s", body)
	spanID := res.Header.Get(gateway.SpanIDHeader)
	require.NotEmpty(t, spanID, "the answer names its span")
	spans := projectSpans(t, g.api, key, "?id="+spanID)
	require.Len(t, spans, 1)
	sp := spans[0]
	assert.Equal(t, "llm", sp.Kind)
	require.NotNil(t, sp.Cost, "priced from the price table")
	assert.Positive(t, *sp.Cost)
	require.NotNil(t, sp.OutputData)
	assert.Equal(t, "Reset it under Settings.", *sp.OutputData)
	require.NotNil(t, sp.InputData)
	assert.Contains(t, *sp.InputData, "traced")
	var attrs map[string]any
	require.NoError(t, json.Unmarshal(sp.Attributes, &attrs))
	assert.Equal(t, "openai", attrs["provider"])
	assert.Equal(t, "gpt-4o-mini", attrs["model"])
	assert.Positive(t, attrs["inputTokens"])
	assert.Positive(t, attrs["outputTokens"])
	assert.Contains(t, attrs, "ttft_ms")
	assert.Contains(t, attrs, "provider_request_id")

	// Asked by traceparent: the span joins the caller's trace, under the caller's span.
	traceparent := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	stream := map[string]any{"model": "gpt-4o-mini", "stream": true, "messages": messages("s", "streamed")}
	res, body = call(t, g.url, key, stream, header("Traceparent", traceparent))
	require.Equal(t, http.StatusOK, res.StatusCode, "%s", body)
	spans = projectSpans(t, g.api, key, "?id="+res.Header.Get(gateway.SpanIDHeader))
	require.Len(t, spans, 1)
	assert.Equal(t, "4bf92f35-77b3-4da6-a3ce-929d0e0e4736", spans[0].TraceID, "the trace id's 16 bytes as a UUID")
	require.NotNil(t, spans[0].ParentSpanID)
	assert.Equal(t, "00f067aa-0ba9-02b7-0000-000000000000", *spans[0].ParentSpanID, "the span id's 8 bytes, then zeros")
	require.NoError(t, json.Unmarshal(spans[0].Attributes, &attrs))
	assert.Positive(t, attrs["outputTokens"], "a stream's tokens, from the usage chunk the gateway asked for")
	assert.Equal(t, true, attrs["streaming"])

	// Said off: not recorded, whatever else.
	res, _ = call(t, g.url, key, map[string]any{"model": "gpt-4o-mini", "messages": messages("s", "off")},
		http.Header{"Traceparent": {traceparent}, gateway.TraceHeader: {"off"}})
	assert.Empty(t, res.Header.Get(gateway.SpanIDHeader))
	assert.Len(t, projectSpans(t, g.api, key, ""), 2, "the header's and the traceparent's spans only")
}

// TestTraceAll: a deployment tracing every call records the calls that do not ask, in their
// own project only.
func TestTraceAll(t *testing.T) {
	fake := fakemodeltest.Start(t, fakemodel.WithAPIKey(providerKey))
	g := newTracingGateway(t, openAI(fake.OpenAIBaseURL()), gateway.TraceAll)
	res, body := call(t, g.url, g.api.A.Key, map[string]any{"model": "gpt-4o-mini", "messages": messages("s", "plain client")})
	require.Equal(t, http.StatusOK, res.StatusCode, "%s", body)
	spans := projectSpans(t, g.api, g.api.A.Key, "")
	require.Len(t, spans, 1)
	assert.Equal(t, res.Header.Get(gateway.SpanIDHeader), spans[0].ID)
	assert.Empty(t, projectSpans(t, g.api, g.api.B.Key, ""), "another project sees nothing")
}

// countingPricer counts the calls it prices.
type countingPricer struct {
	trace.Pricer
	n atomic.Int32
}

func (p *countingPricer) Cost(ctx context.Context, projectID string, u trace.LLMUsage) (float64, string, bool, error) {
	p.n.Add(1)
	return p.Pricer.Cost(ctx, projectID, u)
}

// TestTracedTranslatedCalls: a call relayed to Anthropic, streamed or not, is recorded with
// what the relay answered (its text, finish reason, tokens, time to first token), and priced
// once: the gateway's price, which its limits counted, is the span's, and ingestion, which
// prices with the same pricer, does not price it again.
func TestTracedTranslatedCalls(t *testing.T) {
	fake := fakemodeltest.Start(t, fakemodel.WithAPIKey(providerKey), fakemodel.WithRules(fakemodel.Rule{
		Reply: fakemodel.Reply{Text: "Reset it under Settings."}}))
	a := apitest.New(t, apitest.Options{})
	pricer := &countingPricer{Pricer: a.Env.Pricer()}
	blobs, err := a.Env.Blobs()
	require.NoError(t, err)
	models := llm.New(llm.Config{Providers: map[string]llm.Endpoint{llm.ProviderAnthropic: {BaseURL: fake.URL, APIKey: providerKey}}},
		llm.Options{BaseDelay: time.Millisecond})
	srv := httptest.NewServer(gateway.NewHandler(gateway.Deps{
		Models: func(context.Context) (*llm.Client, error) { return models, nil },
		Prices: pricing.Default(), Pricer: pricer,
		Traces: trace.NewService(a.Env.Traces(), blobs, pricer), Trace: gateway.TraceAll,
		Authn: a.Env.Authn(),
	}))
	t.Cleanup(srv.Close)
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprint("stream=", stream), func(t *testing.T) {
			before := pricer.n.Load()
			res, body := call(t, srv.URL, a.A.Key, map[string]any{"model": "anthropic/claude-3-5-haiku-latest", "stream": stream,
				"messages": messages("s", "translated")})
			require.Equal(t, http.StatusOK, res.StatusCode, "%s", body)
			assert.EqualValues(t, 1, pricer.n.Load()-before, "priced once")
			spans := projectSpans(t, a, a.A.Key, "?id="+res.Header.Get(gateway.SpanIDHeader))
			require.Len(t, spans, 1)
			sp := spans[0]
			require.NotNil(t, sp.OutputData)
			assert.Equal(t, "Reset it under Settings.", *sp.OutputData)
			require.NotNil(t, sp.Cost)
			assert.Positive(t, *sp.Cost)
			require.NotNil(t, sp.CostSource)
			assert.Equal(t, pricing.SourceTable, *sp.CostSource)
			var attrs map[string]any
			require.NoError(t, json.Unmarshal(sp.Attributes, &attrs))
			assert.Equal(t, "anthropic", attrs["provider"])
			assert.Equal(t, "stop", attrs["finish_reason"])
			assert.Positive(t, attrs["inputTokens"])
			assert.Positive(t, attrs["outputTokens"])
			assert.Contains(t, attrs, "ttft_ms")
			assert.NotEmpty(t, attrs["openai_id"], "the message's id")
		})
	}
}
