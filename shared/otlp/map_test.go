package otlp

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/plumehq/plume/shared/trace"
)

// want is what a mapping case checks; zero fields are checked to be absent unless noted.
type want struct {
	kind      string
	status    string
	llm       *trace.LLMUsage
	cost      *float64
	input     string // "" means InputData is nil
	output    string
	sessionID string
	session   string // session name
	tags      map[string]string
	traceTags map[string]string
	link      *trace.PromptLink
	errCode   string
	errMsg    string
	errStack  string
	hasError  bool
	codeFile  string
	codeLine  *int
	// attrs are attribute members checked by value (JSON-decoded); nil values must be absent.
	attrs map[string]any
}

func TestMap(t *testing.T) {
	tests := []struct {
		name   string
		attrs  map[string]any
		status ptrace.StatusCode
		msg    string
		events func(ptrace.SpanEventSlice)
		want   want
	}{
		{
			name: "GenAI semantic conventions chat span",
			attrs: map[string]any{
				"gen_ai.operation.name":                "chat",
				"gen_ai.provider.name":                 "openai",
				"gen_ai.request.model":                 "gpt-4o",
				"gen_ai.response.model":                "gpt-4o-2024-08-06",
				"gen_ai.usage.input_tokens":            1000,
				"gen_ai.usage.output_tokens":           200,
				"gen_ai.usage.cache_read.input_tokens": 400,
				"gen_ai.usage.reasoning.output_tokens": 50,
				"gen_ai.system_instructions":           `[{"type":"text","content":"Be brief."}]`,
				"gen_ai.input.messages":                `[{"role":"user","parts":[{"type":"text","content":"Hi"}]}]`,
				"gen_ai.output.messages":               `[{"role":"assistant","parts":[{"type":"text","content":"Hello"}]}]`,
			},
			status: ptrace.StatusCodeOk,
			want: want{
				kind: "llm", status: "ok",
				llm: &trace.LLMUsage{Provider: "openai", Model: "gpt-4o-2024-08-06", InputTokens: 1000, OutputTokens: 200,
					CachedInputTokens: 400, ReasoningTokens: 50},
				input:  `[{"role":"system","parts":[{"type":"text","content":"Be brief."}]},{"role":"user","parts":[{"type":"text","content":"Hi"}]}]`,
				output: `[{"role":"assistant","parts":[{"type":"text","content":"Hello"}]}]`,
				attrs: map[string]any{"provider": "openai", "model": "gpt-4o-2024-08-06", "inputTokens": 1000.0, "outputTokens": 200.0,
					"gen_ai.request.model": "gpt-4o", "resource": map[string]any{"service.name": "svc"},
					"scope": map[string]any{"name": "test-scope", "version": "1.0.0"}, "plume.truncated": nil},
			},
		},
		{
			name: "GenAI structured messages and cache writes",
			attrs: map[string]any{
				"gen_ai.operation.name":                    "chat",
				"gen_ai.system":                            "anthropic",
				"gen_ai.request.model":                     "claude-sonnet-4",
				"gen_ai.usage.input_tokens":                2000,
				"gen_ai.usage.output_tokens":               10,
				"gen_ai.usage.cache_read.input_tokens":     1200,
				"gen_ai.usage.cache_creation.input_tokens": 300,
				"gen_ai.input.messages":                    []any{map[string]any{"role": "user", "parts": []any{map[string]any{"type": "text", "content": "Hi"}}}},
			},
			want: want{
				kind: "llm", status: "unset",
				llm: &trace.LLMUsage{Provider: "anthropic", Model: "claude-sonnet-4", InputTokens: 2000, OutputTokens: 10,
					CachedInputTokens: 1200, CacheWriteTokens: 300},
				input: `[{"role":"user","parts":[{"type":"text","content":"Hi"}]}]`,
				attrs: map[string]any{"inputTokens": 2000.0},
			},
		},
		{
			name: "cache counted apart from input tokens is added, not double counted",
			attrs: map[string]any{
				"gen_ai.system":                            "anthropic",
				"gen_ai.request.model":                     "claude-3-5-haiku",
				"gen_ai.usage.input_tokens":                10,
				"gen_ai.usage.output_tokens":               20,
				"gen_ai.usage.cache_read_input_tokens":     1000,
				"gen_ai.usage.cache_creation_input_tokens": 500,
			},
			want: want{
				kind: "llm", status: "unset",
				llm: &trace.LLMUsage{Provider: "anthropic", Model: "claude-3-5-haiku", InputTokens: 1510, OutputTokens: 20,
					CachedInputTokens: 1000, CacheWriteTokens: 500},
				attrs: map[string]any{"inputTokens": 1510.0, "outputTokens": 20.0},
			},
		},
		{
			name: "OpenInference LLM span",
			attrs: map[string]any{
				"openinference.span.kind":                      "LLM",
				"llm.provider":                                 "openai",
				"llm.system":                                   "openai",
				"llm.model_name":                               "gpt-4o-mini",
				"llm.token_count.prompt":                       "120",
				"llm.token_count.completion":                   30,
				"llm.token_count.total":                        150,
				"llm.token_count.prompt_details.cache_read":    100,
				"llm.token_count.completion_details.reasoning": 12,
				"llm.cost.total":                               0.00042,
				"llm.input_messages.0.message.role":            "system",
				"llm.input_messages.0.message.content":         "Be brief.",
				"llm.input_messages.1.message.role":            "user",
				"llm.input_messages.1.message.content":         "Hi",
				"llm.output_messages.0.message.role":           "assistant",
				"llm.output_messages.0.message.content":        "Hello",
				"input.value":                                  `{"messages":[]}`,
				"output.value":                                 `{"choices":[]}`,
			},
			want: want{
				kind: "llm", status: "unset",
				llm: &trace.LLMUsage{Provider: "openai", Model: "gpt-4o-mini", InputTokens: 120, OutputTokens: 30,
					CachedInputTokens: 100, ReasoningTokens: 12},
				cost:   ptr(0.00042),
				input:  `[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"}]`,
				output: `[{"role":"assistant","content":"Hello"}]`,
				attrs:  map[string]any{"llm.cost.total": 0.00042, "inputTokens": 120.0, "outputTokens": 30.0},
			},
		},
		{
			name: "OpenInference chain span",
			attrs: map[string]any{
				"openinference.span.kind": "CHAIN",
				"input.value":             "What is OTLP?",
				"output.value":            "A protocol.",
			},
			want: want{kind: "generic", status: "unset", input: "What is OTLP?", output: "A protocol."},
		},
		{
			name:  "OpenInference tool span",
			attrs: map[string]any{"openinference.span.kind": "TOOL", "tool.name": "search"},
			want:  want{kind: "tool", status: "unset"},
		},
		{
			name:  "OpenInference retriever span",
			attrs: map[string]any{"openinference.span.kind": "RETRIEVER"},
			want:  want{kind: "vector_store", status: "unset"},
		},
		{
			name: "OpenInference embedding span is priced as llm",
			attrs: map[string]any{
				"openinference.span.kind": "EMBEDDING", "embedding.model_name": "text-embedding-3-small",
				"llm.model_name": "text-embedding-3-small", "llm.token_count.prompt": 8,
			},
			want: want{kind: "llm", status: "unset",
				llm: &trace.LLMUsage{Model: "text-embedding-3-small", InputTokens: 8}},
		},
		{
			name: "legacy gen_ai.prompt and gen_ai.completion attributes (OpenLLMetry)",
			attrs: map[string]any{
				"llm.request.type":                       "chat",
				"gen_ai.system":                          "Anthropic",
				"gen_ai.request.model":                   "claude-3-5-sonnet",
				"gen_ai.usage.prompt_tokens":             15,
				"gen_ai.usage.completion_tokens":         7,
				"gen_ai.prompt.0.role":                   "system",
				"gen_ai.prompt.0.content":                "Be brief.",
				"gen_ai.prompt.1.role":                   "user",
				"gen_ai.prompt.1.content":                "Hi",
				"gen_ai.prompt.10.role":                  "user",
				"gen_ai.prompt.10.content":               "Later",
				"gen_ai.completion.0.role":               "assistant",
				"gen_ai.completion.0.content":            "Hello",
				"gen_ai.completion.0.finish_reason":      "stop",
				"gen_ai.completion.0.tool_calls.0.name":  "search",
				"gen_ai.completion.0.tool_calls.0.id":    "call_1",
				"gen_ai.completion.0.tool_calls.1.name":  "fetch",
				"gen_ai.completion.0.tool_calls.1.extra": true,
			},
			want: want{
				kind: "llm", status: "unset",
				llm:   &trace.LLMUsage{Provider: "Anthropic", Model: "claude-3-5-sonnet", InputTokens: 15, OutputTokens: 7},
				input: `[{"role":"system","content":"Be brief."},{"role":"user","content":"Hi"},{"role":"user","content":"Later"}]`,
				output: `[{"role":"assistant","content":"Hello","finish_reason":"stop",` +
					`"tool_calls":[{"name":"search","id":"call_1"},{"name":"fetch","extra":true}]}]`,
			},
		},
		{
			name: "GenAI content events (semantic conventions 1.26)",
			attrs: map[string]any{
				"gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o",
			},
			events: func(es ptrace.SpanEventSlice) {
				e := es.AppendEmpty()
				e.SetName("gen_ai.content.prompt")
				e.Attributes().PutStr("gen_ai.prompt", `[{"role":"user","content":"Hi"}]`)
				e = es.AppendEmpty()
				e.SetName("gen_ai.content.completion")
				e.Attributes().PutStr("gen_ai.completion", `[{"role":"assistant","content":"Hello"}]`)
			},
			want: want{
				kind: "llm", status: "unset", llm: &trace.LLMUsage{Provider: "openai", Model: "gpt-4o"},
				input: `[{"role":"user","content":"Hi"}]`, output: `[{"role":"assistant","content":"Hello"}]`,
			},
		},
		{
			name:  "GenAI tool execution",
			attrs: map[string]any{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search"},
			want:  want{kind: "tool", status: "unset"},
		},
		{
			name: "GenAI agent span is not priced (its LLM calls are)",
			attrs: map[string]any{
				"gen_ai.operation.name": "invoke_agent", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o",
				"gen_ai.usage.input_tokens": 500, "gen_ai.usage.output_tokens": 100,
			},
			want: want{kind: "generic", status: "unset",
				attrs: map[string]any{"model": "gpt-4o", "inputTokens": 500.0, "outputTokens": 100.0}},
		},
		{
			name:  "model attribute alone makes an llm span",
			attrs: map[string]any{"gen_ai.request.model": "mistral-large"},
			want:  want{kind: "llm", status: "unset", llm: &trace.LLMUsage{Model: "mistral-large"}},
		},
		{
			name: "zeroeval documented OTLP attributes",
			attrs: map[string]any{
				"llm.provider": "openai", "llm.model": "gpt-4o", "llm.input_tokens": 11, "llm.output_tokens": 22,
			},
			want: want{kind: "llm", status: "unset",
				llm: &trace.LLMUsage{Provider: "openai", Model: "gpt-4o", InputTokens: 11, OutputTokens: 22}},
		},
		{
			name: "POST /spans attribute names",
			attrs: map[string]any{
				"provider": "openai", "model": "gpt-4o", "inputTokens": 5, "outputTokens": 6,
			},
			want: want{kind: "llm", status: "unset",
				llm: &trace.LLMUsage{Provider: "openai", Model: "gpt-4o", InputTokens: 5, OutputTokens: 6}},
		},
		{
			name: "caller's cost",
			attrs: map[string]any{
				"gen_ai.request.model": "gpt-4o", "gen_ai.usage.cost": "0.0123",
			},
			want: want{kind: "llm", status: "unset", cost: ptr(0.0123), llm: &trace.LLMUsage{Model: "gpt-4o"}},
		},
		{
			name:  "negative cost is ignored",
			attrs: map[string]any{"gen_ai.request.model": "gpt-4o", "llm.cost.total": -1},
			want:  want{kind: "llm", status: "unset", llm: &trace.LLMUsage{Model: "gpt-4o"}},
		},
		{
			name:  "http span",
			attrs: map[string]any{"http.request.method": "GET", "url.full": "https://example.com/"},
			want:  want{kind: "http", status: "unset"},
		},
		{
			name:  "old http semantic conventions",
			attrs: map[string]any{"http.method": "POST"},
			want:  want{kind: "http", status: "unset"},
		},
		{
			name:  "database span",
			attrs: map[string]any{"db.system.name": "postgresql", "db.query.text": "SELECT 1"},
			want:  want{kind: "database", status: "unset"},
		},
		{
			name:  "vector database span",
			attrs: map[string]any{"db.system": "Pinecone", "db.operation": "query"},
			want:  want{kind: "vector_store", status: "unset"},
		},
		{
			name: "generic span",
			want: want{kind: "generic", status: "unset"},
		},
		{
			name: "exception event makes the span fail",
			events: func(es ptrace.SpanEventSlice) {
				e := es.AppendEmpty()
				e.SetName("exception")
				e.Attributes().PutStr("exception.type", "ValueError")
				e.Attributes().PutStr("exception.message", "bad value")
				e.Attributes().PutStr("exception.stacktrace", "Traceback (most recent call last):\n  ...")
			},
			want: want{kind: "generic", status: "unset", hasError: true,
				errCode: "ValueError", errMsg: "bad value", errStack: "Traceback (most recent call last):\n  ..."},
		},
		{
			name:   "status error with message and error.type",
			attrs:  map[string]any{"error.type": "timeout"},
			status: ptrace.StatusCodeError,
			msg:    "deadline exceeded",
			want: want{kind: "generic", status: "error", hasError: true, errCode: "timeout", errMsg: "deadline exceeded",
				attrs: map[string]any{"error.type": "timeout"}},
		},
		{
			name:   "the last exception wins over the status message",
			status: ptrace.StatusCodeError,
			msg:    "RuntimeError: second",
			events: func(es ptrace.SpanEventSlice) {
				for _, m := range []string{"first", "second"} {
					e := es.AppendEmpty()
					e.SetName("exception")
					e.Attributes().PutStr("exception.type", "RuntimeError")
					e.Attributes().PutStr("exception.message", m)
				}
			},
			want: want{kind: "generic", status: "error", hasError: true, errCode: "RuntimeError", errMsg: "second"},
		},
		{
			name: "exception event without type or message",
			events: func(es ptrace.SpanEventSlice) {
				es.AppendEmpty().SetName("exception")
			},
			want: want{kind: "generic", status: "unset", hasError: true, errCode: "exception"},
		},
		{
			name: "session, user and tags",
			attrs: map[string]any{
				"zeroeval.session.id":   "my-session",
				"zeroeval.session.name": "Checkout flow",
				"zeroeval.session.tags": map[string]any{"team": "payments"},
				"session.id":            "ignored-session",
				"user.id":               "u-42",
				"tag.tags":              `{"env":"prod","build":17,"skip":null}`,
				"zeroeval.tags":         map[string]any{"feature": "search", "env": "staging"},
				"zeroeval.trace.tags":   `{"release":"1.2.3"}`,
			},
			want: want{kind: "generic", status: "unset",
				sessionID: uuid.NewSHA1(uuid.NameSpaceDNS, []byte("my-session")).String(), session: "Checkout flow",
				tags:      map[string]string{"user_id": "u-42", "env": "staging", "build": "17", "feature": "search"},
				traceTags: map[string]string{"release": "1.2.3"},
			},
		},
		{
			name: "UUID session id is normalised; OpenInference tag list; enduser.id",
			attrs: map[string]any{
				"session.id": "6F1C2B7E-3D4A-4C5B-9E8F-0A1B2C3D4E5F", "session.name": "chat",
				"enduser.id": "alice", "tag.tags": []any{"beta", "eu"},
			},
			want: want{kind: "generic", status: "unset",
				sessionID: "6f1c2b7e-3d4a-4c5b-9e8f-0a1b2c3d4e5f", session: "chat",
				tags: map[string]string{"user_id": "alice", "beta": "true", "eu": "true"}},
		},
		{
			name:  "GenAI conversation id",
			attrs: map[string]any{"gen_ai.conversation.id": "conv_5j66UpCpwteGg4YSxUnt7lPY"},
			want: want{kind: "generic", status: "unset",
				sessionID: uuid.NewSHA1(uuid.NameSpaceDNS, []byte("conv_5j66UpCpwteGg4YSxUnt7lPY")).String()},
		},
		{
			name: "prompt link from the zeroeval JSON attribute",
			attrs: map[string]any{
				"gen_ai.request.model": "gpt-4o",
				"zeroeval": `{"task":"support-bot","variables":{"name":"Ada"},"prompt_slug":"support-bot",` +
					`"prompt_version":3,"prompt_version_id":"0E6A3F52-8B1D-4C8E-9F00-1234567890AB","content_hash":"ABCDEF"}`,
				"task": "other",
			},
			want: want{kind: "llm", status: "unset", llm: &trace.LLMUsage{Model: "gpt-4o"},
				link: &trace.PromptLink{Task: "support-bot", PromptSlug: "support-bot", PromptVersion: 3,
					PromptVersionID: "0e6a3f52-8b1d-4c8e-9f00-1234567890ab", ContentHash: "abcdef"},
				attrs: map[string]any{"zeroeval": map[string]any{"task": "support-bot", "variables": map[string]any{"name": "Ada"},
					"prompt_slug": "support-bot", "prompt_version": 3.0,
					"prompt_version_id": "0E6A3F52-8B1D-4C8E-9F00-1234567890AB", "content_hash": "ABCDEF"}},
			},
		},
		{
			name: "prompt link from a zeroeval map",
			attrs: map[string]any{
				"zeroeval": map[string]any{"prompt_slug": "greeter", "prompt_version": "2"},
				"task":     "greeter-task",
			},
			want: want{kind: "generic", status: "unset",
				link: &trace.PromptLink{Task: "greeter-task", PromptSlug: "greeter", PromptVersion: 2}},
		},
		{
			name: "prompt link from flattened zeroeval attributes",
			attrs: map[string]any{
				"zeroeval.prompt_version_id": "0e6a3f52-8b1d-4c8e-9f00-1234567890ab",
				"zeroeval.prompt_slug":       "greeter",
				"zeroeval.prompt_version":    4,
			},
			want: want{kind: "generic", status: "unset",
				link: &trace.PromptLink{PromptSlug: "greeter", PromptVersion: 4, PromptVersionID: "0e6a3f52-8b1d-4c8e-9f00-1234567890ab"},
				attrs: map[string]any{"zeroeval": map[string]any{"prompt_slug": "greeter", "prompt_version": 4.0,
					"prompt_version_id": "0e6a3f52-8b1d-4c8e-9f00-1234567890ab"}},
			},
		},
		{
			name:  "code location (old names)",
			attrs: map[string]any{"code.filepath": "/app/main.py", "code.lineno": 42},
			want:  want{kind: "generic", status: "unset", codeFile: "/app/main.py", codeLine: ptr(42)},
		},
		{
			name:  "code location (current names)",
			attrs: map[string]any{"code.file.path": "/app/main.go", "code.line.number": "7"},
			want:  want{kind: "generic", status: "unset", codeFile: "/app/main.go", codeLine: ptr(7)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			td, sp := oneSpan(t, tt.attrs)
			sp.Status().SetCode(tt.status)
			sp.Status().SetMessage(tt.msg)
			if tt.events != nil {
				tt.events(sp.Events())
			}
			spans, rejected, reasons := mapTraces(t, td)
			require.Zero(t, rejected, reasons)
			require.Len(t, spans, 1)
			s := spans[0]
			checkSpan(t, s, testNow)
			w := tt.want

			assert.Equal(t, "span", s.Name)
			assert.Equal(t, testStart.Round(time.Microsecond), s.StartedAt)
			assert.Equal(t, ptr(1500.0), s.DurationMS)
			assert.Equal(t, w.kind, s.Kind)
			assert.Equal(t, &w.status, s.Status)
			assert.Equal(t, w.llm, s.LLM)
			assert.Equal(t, w.cost, s.Cost)
			assertData(t, w.input, s.InputData)
			assertData(t, w.output, s.OutputData)
			assert.Equal(t, optional(w.sessionID), s.SessionID)
			assert.Equal(t, optional(w.session), s.SessionName)
			assert.Equal(t, w.tags, s.Tags.Map())
			assert.Equal(t, w.traceTags, s.TraceTags.Map())
			assert.Equal(t, w.link, s.Link)
			assert.Equal(t, optional(w.errCode), s.ErrorCode)
			assert.Equal(t, optional(w.errMsg), s.ErrorMessage)
			assert.Equal(t, optional(w.errStack), s.ErrorStack)
			assert.Equal(t, w.hasError, s.HasError())
			assert.Equal(t, optional(w.codeFile), s.CodeFilepath)
			assert.Equal(t, w.codeLine, s.CodeLineno)

			got := attrsOf(t, s)
			for k := range tt.attrs {
				if _, fixed := w.attrs[k]; !fixed && k != "zeroeval" {
					assert.Contains(t, got, k, "every span attribute is kept")
				}
			}
			for k, v := range w.attrs {
				if v == nil {
					assert.NotContains(t, got, k)
				} else {
					assert.Equal(t, v, got[k], k)
				}
			}
		})
	}
}

// assertData compares input or output data: JSON texts as JSON (the tests build attributes
// from Go maps, whose order is random), other texts exactly.
func assertData(t *testing.T, want string, got *string) {
	t.Helper()
	if want == "" {
		assert.Nil(t, got)
		return
	}
	if !assert.NotNil(t, got) {
		return
	}
	if json.Valid([]byte(want)) {
		assert.JSONEq(t, want, *got)
	} else {
		assert.Equal(t, want, *got)
	}
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func TestMapSessionTagsAndNameNeedAnID(t *testing.T) {
	td, _ := oneSpan(t, map[string]any{"session.name": "orphan", "zeroeval.session.tags": map[string]any{"a": "b"}})
	spans, _, _ := mapTraces(t, td)
	require.Len(t, spans, 1)
	assert.Nil(t, spans[0].SessionID)
	assert.Nil(t, spans[0].SessionName)
	assert.Nil(t, spans[0].SessionTags)
}

func TestMapRejects(t *testing.T) {
	tests := []struct {
		name   string
		modify func(ptrace.Span)
		reason string
	}{
		{"zero trace id", func(s ptrace.Span) { s.SetTraceID(pcommon.TraceID{}) }, "trace_id: all zero"},
		{"zero span id", func(s ptrace.Span) { s.SetSpanID(pcommon.SpanID{}) }, "span 0000000000000000: span_id: all zero"},
		{"no name", func(s ptrace.Span) { s.SetName("") }, "name: required"},
		{"no start", func(s ptrace.Span) { s.SetStartTimestamp(0) }, "start_time_unix_nano: required"},
		{"start before 2000", func(s ptrace.Span) {
			s.SetStartTimestamp(pcommon.NewTimestampFromTime(time.Date(1999, 12, 31, 23, 59, 59, 0, time.UTC)))
		}, "before 2000-01-01"},
		{"start in the future", func(s ptrace.Span) {
			s.SetStartTimestamp(pcommon.NewTimestampFromTime(testNow.Add(25 * time.Hour)))
			s.SetEndTimestamp(pcommon.NewTimestampFromTime(testNow.Add(26 * time.Hour)))
		}, "more than a day in the future"},
		{"start out of range", func(s ptrace.Span) { s.SetStartTimestamp(pcommon.Timestamp(1 << 63)) }, "out of range"},
		{"end before start", func(s ptrace.Span) {
			s.SetEndTimestamp(pcommon.NewTimestampFromTime(testStart.Add(-time.Second)))
		}, "end_time_unix_nano: 2025-06-01T11:58:59.123457Z is before start_time_unix_nano 2025-06-01T11:59:00.123457Z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			td, sp := oneSpan(t, nil)
			tt.modify(sp)
			spans, rejected, reasons := mapTraces(t, td)
			assert.Empty(t, spans)
			assert.Equal(t, 1, rejected)
			require.Len(t, reasons, 1)
			assert.Contains(t, reasons[0], tt.reason)
			assert.True(t, strings.HasPrefix(reasons[0], "span "), reasons[0])
		})
	}
}

// A span without an end time is stored without one (DecodeBatch's optional ended_at).
func TestMapOpenSpan(t *testing.T) {
	td, sp := oneSpan(t, nil)
	sp.SetEndTimestamp(0)
	spans, rejected, _ := mapTraces(t, td)
	require.Zero(t, rejected)
	require.Len(t, spans, 1)
	assert.Nil(t, spans[0].EndedAt)
	assert.Nil(t, spans[0].DurationMS)
	checkSpan(t, spans[0], testNow)
}

// One bad span never drops the others; at most 10 reasons are kept.
func TestMapPartial(t *testing.T) {
	td, sp := oneSpan(t, nil)
	spans := td.ResourceSpans().At(0).ScopeSpans().At(0).Spans()
	for i := 0; i < 14; i++ {
		bad := spans.AppendEmpty()
		sp.CopyTo(bad)
		bad.SetSpanID(pcommon.SpanID{0, 0, 0, 0, 0, 0, 1, byte(i)})
		bad.SetName("")
	}
	got, rejected, reasons := mapTraces(t, td)
	assert.Len(t, got, 1)
	assert.Equal(t, 14, rejected)
	assert.Len(t, reasons, 10)
	assert.Equal(t, "span 0000000000000100: name: required", reasons[0])
}

func TestMapLimits(t *testing.T) {
	big := strings.Repeat("x", trace.MaxDataBytes+10)
	tests := []struct {
		name  string
		setup func(ptrace.Span)
		check func(t *testing.T, s trace.Span, attrs map[string]any)
	}{
		{
			name:  "long name is cut and noted",
			setup: func(sp ptrace.Span) { sp.SetName(strings.Repeat("é", trace.MaxNameLen)) },
			check: func(t *testing.T, s trace.Span, attrs map[string]any) {
				assert.Equal(t, strings.Repeat("é", trace.MaxNameLen/2), s.Name)
				assert.Equal(t, map[string]any{"name": float64(2 * trace.MaxNameLen)}, attrs["plume.truncated"])
			},
		},
		{
			name:  "large input is cut and noted",
			setup: func(sp ptrace.Span) { sp.Attributes().PutStr("input.value", big) },
			check: func(t *testing.T, s trace.Span, attrs map[string]any) {
				require.NotNil(t, s.InputData)
				assert.Len(t, *s.InputData, trace.MaxDataBytes)
				note := attrs["plume.truncated"].(map[string]any)
				assert.Equal(t, float64(len(big)), note["input_data"])
				_, ok := attrs["input.value"]
				assert.False(t, ok, "the largest attribute is dropped to fit")
				assert.Equal(t, map[string]any{"dropped": 1.0, "keys": []any{"input.value"}}, note["attributes"])
			},
		},
		{
			name: "attributes over the limit drop the largest values first",
			setup: func(sp ptrace.Span) {
				sp.Attributes().PutStr("small", "kept")
				sp.Attributes().PutStr("gen_ai.request.model", "gpt-4o")
				for i := 0; i < 5; i++ {
					sp.Attributes().PutStr(fmt.Sprintf("big.%d", i), strings.Repeat("y", 60<<10+i))
				}
			},
			check: func(t *testing.T, s trace.Span, attrs map[string]any) {
				assert.Equal(t, "kept", attrs["small"])
				assert.Equal(t, "gpt-4o", attrs["model"])
				assert.Equal(t, map[string]any{"service.name": "svc"}, attrs["resource"])
				for i := 0; i < 3; i++ {
					_, ok := attrs[fmt.Sprintf("big.%d", i)]
					assert.True(t, ok)
				}
				_, has4 := attrs["big.4"]
				assert.False(t, has4, "the largest value is dropped")
				_, has3 := attrs["big.3"]
				assert.True(t, has3)
				note := attrs["plume.truncated"].(map[string]any)
				assert.Equal(t, map[string]any{"dropped": 1.0, "keys": []any{"big.4"}}, note["attributes"])
			},
		},
		{
			name:  "invalid UTF-8 is repaired",
			setup: func(sp ptrace.Span) { sp.SetName("a\xffb"); sp.Attributes().PutStr("k\xfe", "v\xff") },
			check: func(t *testing.T, s trace.Span, attrs map[string]any) {
				assert.Equal(t, "a\uFFFDb", s.Name)
				assert.Equal(t, "v\uFFFD", attrs["k\uFFFD"])
			},
		},
		{
			name: "special values",
			setup: func(sp ptrace.Span) {
				a := sp.Attributes()
				a.PutDouble("nan", nan())
				a.PutDouble("big", 1e300)
				a.PutEmptyBytes("bytes").FromRaw([]byte("hi"))
				a.PutEmpty("empty")
				a.PutStr("ctl", "a\"\\\n\x01</script>")
			},
			check: func(t *testing.T, s trace.Span, attrs map[string]any) {
				assert.Equal(t, "NaN", attrs["nan"])
				assert.Equal(t, 1e300, attrs["big"])
				assert.Equal(t, "aGk=", attrs["bytes"])
				assert.Contains(t, attrs, "empty")
				assert.Nil(t, attrs["empty"])
				assert.Equal(t, "a\"\\\n\x01</script>", attrs["ctl"])
			},
		},
		{
			name: "Plume's keys win over span attributes of the same name",
			setup: func(sp ptrace.Span) {
				kv := sp.Attributes()
				kv.PutStr("gen_ai.request.model", "gpt-4o")
				kv.PutStr("model", "mine")
				kv.PutStr("resource", "mine")
			},
			check: func(t *testing.T, s trace.Span, attrs map[string]any) {
				assert.Equal(t, "gpt-4o", attrs["model"])
				assert.Equal(t, map[string]any{"service.name": "svc"}, attrs["resource"])
			},
		},
		{
			name: "zeroeval JSON with invalid UTF-8 is still an object; too deep stays a string",
			setup: func(sp ptrace.Span) {
				sp.Attributes().PutStr("zeroeval", "{\"prompt_slug\":\"a\xffb\"}")
				sp.Attributes().PutStr("deep", strings.Repeat("[", 100)+strings.Repeat("]", 100))
			},
			check: func(t *testing.T, s trace.Span, attrs map[string]any) {
				assert.Equal(t, map[string]any{"prompt_slug": "a\uFFFDb"}, attrs["zeroeval"])
				assert.Equal(t, &trace.PromptLink{PromptSlug: "a\uFFFDb"}, s.Link)
				assert.Equal(t, 1, jsonDepth(`{"a":"[[[{{"}`))
				assert.Equal(t, 101, jsonDepth(`{`+strings.Repeat("[", 100)+strings.Repeat("]", 100)+`}`))
			},
		},
		{
			name: "deep nesting is bounded",
			setup: func(sp ptrace.Span) {
				m := sp.Attributes().PutEmptyMap("deep")
				for i := 0; i < 200; i++ {
					m = m.PutEmptyMap("d")
				}
			},
			check: func(t *testing.T, s trace.Span, attrs map[string]any) {
				assert.Contains(t, string(s.Attributes), tooDeep)
			},
		},
		{
			name: "too many and too long tags are dropped and counted",
			setup: func(sp ptrace.Span) {
				m := sp.Attributes().PutEmptyMap("tag.tags")
				for i := 0; i < 70; i++ {
					m.PutStr(fmt.Sprintf("k%02d", i), "v")
				}
				m.PutStr(strings.Repeat("k", trace.MaxTagKeyLen+1), "v")
				m.PutStr("long", strings.Repeat("v", trace.MaxTagValueLen+1))
			},
			check: func(t *testing.T, s trace.Span, attrs map[string]any) {
				assert.Len(t, s.Tags, trace.MaxTagKeys)
				assert.Equal(t, map[string]any{"tags": 8.0}, attrs["plume.truncated"])
			},
		},
		{
			name: "long error fields are cut",
			setup: func(sp ptrace.Span) {
				e := sp.Events().AppendEmpty()
				e.SetName("exception")
				e.Attributes().PutStr("exception.type", strings.Repeat("T", trace.MaxNameLen+1))
				e.Attributes().PutStr("exception.stacktrace", strings.Repeat("s", trace.MaxErrorBytes+1))
			},
			check: func(t *testing.T, s trace.Span, attrs map[string]any) {
				assert.Len(t, *s.ErrorCode, trace.MaxNameLen)
				assert.Len(t, *s.ErrorStack, trace.MaxErrorBytes)
				assert.Equal(t, map[string]any{"error_code": float64(trace.MaxNameLen + 1), "error_stack": float64(trace.MaxErrorBytes + 1)},
					attrs["plume.truncated"])
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			td, sp := oneSpan(t, nil)
			tt.setup(sp)
			spans, rejected, reasons := mapTraces(t, td)
			require.Zero(t, rejected, reasons)
			require.Len(t, spans, 1)
			checkSpan(t, spans[0], testNow)
			tt.check(t, spans[0], attrsOf(t, spans[0]))
		})
	}
}

// Duplicate attribute keys (possible on the wire, not through the pcommon.Map API): the first
// counts, as pcommon.Map.Get reads it, and the attributes object has each key once.
func TestMapDuplicateKeys(t *testing.T) {
	_, sp := oneSpan(t, map[string]any{"gen_ai.request.model": "first", "a": 1})
	kv := pcommon.NewMap()
	kv.PutStr("gen_ai.request.model", "second")
	kv.PutInt("a", 2)
	withDup := duplicateAttributes(t, sp, kv)
	td2, err := Decode(withDup, ContentTypeProtobuf)
	require.NoError(t, err)
	spans, _, _ := Map(td2, testProject, testNow)
	require.Len(t, spans, 1)
	checkSpan(t, spans[0], testNow)
	assert.Equal(t, "first", spans[0].LLM.Model)
	assert.Equal(t, 1, strings.Count(string(spans[0].Attributes), `"a":`))
	assert.Equal(t, 1.0, attrsOf(t, spans[0])["a"])
}

func nan() float64 {
	var zero float64
	return zero / zero
}

// duplicateAttributes returns the protobuf of TracesData holding sp with the pairs of extra
// appended to its attributes on the wire (protobuf concatenates repeated fields).
func duplicateAttributes(t testing.TB, sp ptrace.Span, extra pcommon.Map) []byte {
	t.Helper()
	span := ptrace.NewTraces()
	s := span.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	sp.CopyTo(s)
	spanBytes := spanMessage(t, span)
	other := ptrace.NewTraces()
	o := other.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty()
	extra.CopyTo(o.Attributes())
	// Span.attributes is field 9; protobuf concatenates repeated fields.
	merged := append(spanBytes, fieldsOfMessage(t, spanMessage(t, other), 9)...)
	return wrap(wrap(wrap(merged, 2), 2), 1) // ScopeSpans.spans, ResourceSpans.scope_spans, TracesData.resource_spans
}

// spanMessage returns the encoded Span of td's only span.
func spanMessage(t testing.TB, td ptrace.Traces) []byte {
	t.Helper()
	body, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	require.NoError(t, err)
	// TracesData.resource_spans (1) -> ResourceSpans.scope_spans (2) -> ScopeSpans.spans (2)
	for _, num := range []byte{1, 2, 2} {
		body = fieldOfMessage(t, body, num)
	}
	return body
}

// fieldOfMessage returns the payload of the first length-delimited field num of msg.
func fieldOfMessage(t testing.TB, msg []byte, num byte) []byte {
	t.Helper()
	f := fieldsOfMessage(t, msg, num)
	require.NotEmpty(t, f, "field %d", num)
	_, size := uvarint(f)
	n, lenSize := uvarint(f[size:])
	return f[size+lenSize : size+lenSize+int(n)]
}

// fieldsOfMessage returns the encoded fields num of msg (keys included), one after another.
// Field numbers are below 16 (one-byte keys).
func fieldsOfMessage(t testing.TB, msg []byte, num byte) []byte {
	t.Helper()
	var out []byte
	for len(msg) > 0 {
		key := msg[0]
		end := 1
		switch key & 7 {
		case 0:
			_, n := uvarint(msg[1:])
			end += n
		case 1:
			end += 8
		case 2:
			n, size := uvarint(msg[1:])
			end += size + int(n)
		case 5:
			end += 4
		default:
			t.Fatalf("wire type %d", key&7)
		}
		if key>>3 == num {
			out = append(out, msg[:end]...)
		}
		msg = msg[end:]
	}
	return out
}

func wrap(payload []byte, field byte) []byte {
	out := []byte{field<<3 | 2}
	n := uint64(len(payload))
	for n >= 0x80 {
		out = append(out, byte(n)|0x80)
		n >>= 7
	}
	out = append(out, byte(n))
	return append(out, payload...)
}

func uvarint(b []byte) (uint64, int) {
	var x uint64
	for i, c := range b {
		x |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return x, i + 1
		}
	}
	return 0, 0
}

// The resource and the scope are written into the attributes of the spans of each scope
// (once per scope, not carried over to the next resource or scope when it has none), span
// attributes named as a key Map writes are left out when Map writes it (plume.truncated
// always), and spans of
// traces that follow one another each have their own trace id.
func TestMapEnvelopeAndOwnKeys(t *testing.T) {
	body, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(envelopeTraces())
	require.NoError(t, err)
	x, err := Decode(body, ContentTypeProtobuf)
	require.NoError(t, err)
	spans, rejected, _ := Map(x, testProject, testNow)
	require.Zero(t, rejected)
	require.Len(t, spans, 12)
	traces := map[string]bool{}
	for n, s := range spans {
		r, sc, i := n/6, n/3%2, n%3
		checkSpan(t, s, testNow)
		traces[s.TraceID] = true
		a := attrsOf(t, s)
		for _, k := range []string{keyResource, keyScope} {
			assert.Equal(t, 1, strings.Count(string(s.Attributes), `"`+k+`":`), "span %d: %s once", n, k)
		}
		if r == 0 {
			assert.Equal(t, map[string]any{"service.name": "checkout"}, a[keyResource], "span %d", n)
		} else {
			assert.Equal(t, "own", a[keyResource], "span %d", n)
		}
		if sc == 0 {
			assert.Equal(t, map[string]any{"name": "openai"}, a[keyScope], "span %d", n)
		} else {
			assert.Equal(t, "own", a[keyScope], "span %d", n)
		}
		assert.NotContains(t, a, keyTruncated, "span %d: always Map's own", n)
		assert.Equal(t, "own", a[keyProvider], "span %d", n)
		assert.Equal(t, "own", a[keyInputTokens], "span %d", n)
		if i == 0 {
			assert.Equal(t, "gpt-4o", a[keyModel], "span %d", n)
		} else {
			assert.Equal(t, "own", a[keyModel], "span %d", n)
		}
	}
	assert.Len(t, traces, 8)
}

// mapper.time, which rounds and checks the common case in integers, converts and checks span
// times exactly as time.Time's Round and trace.CheckTime do: halfway values, the bounds of
// the accepted range, and a clock so late that the range is not int64 nanoseconds.
func TestMapTimeAsRoundAndCheckTime(t *testing.T) {
	for _, now := range []time.Time{testNow, time.Date(2262, 4, 10, 0, 0, 0, 0, time.UTC)} {
		m := &mapper{now: now}
		m.earliest, m.latest = timeRange(now)
		var tss []uint64
		for _, edge := range []time.Time{trace.MinSpanTime, now.Add(trace.MaxFutureSkew), testStart} {
			base := uint64(edge.UnixNano())
			for d := uint64(0); d <= 1500; d += 250 {
				tss = append(tss, base-d, base+d, base-d-1, base+d+1)
			}
		}
		tss = append(tss, 0, 1, 499, 500, 1<<63-1, 1<<63-500, 1<<63-501, 1<<63, 1<<64-1)
		for _, ts := range tss {
			got, err := m.time("start_time_unix_nano", ts)
			if ts > 1<<63-1 {
				assert.Error(t, err, "%d", ts)
				continue
			}
			want := time.Unix(0, int64(ts)).Round(time.Microsecond).UTC()
			wantErr := trace.CheckTime("start_time_unix_nano", want, now)
			if wantErr != nil {
				assert.EqualError(t, err, wantErr.Error(), "%d", ts)
				continue
			}
			require.NoError(t, err, "%d", ts)
			assert.Equal(t, want, got, "%d", ts)
		}
	}
}
