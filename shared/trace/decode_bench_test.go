package trace

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// pyJSON writes JSON as Python's json.dumps does by default (", " and ": " separators), which
// is what the Python SDK sends. Objects are []any{key, value, key, value, ...} to keep order.
func pyJSON(b *strings.Builder, v any) {
	switch v := v.(type) {
	case pyObject:
		b.WriteByte('{')
		for i := 0; i < len(v); i += 2 {
			if i > 0 {
				b.WriteString(", ")
			}
			pyJSON(b, v[i])
			b.WriteString(": ")
			pyJSON(b, v[i+1])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteString(", ")
			}
			pyJSON(b, e)
		}
		b.WriteByte(']')
	case float64:
		b.WriteString(strconv.FormatFloat(v, 'f', -1, 64))
	default:
		j, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		b.Write(j)
	}
}

type pyObject []any

// Texts of ~1 KB for the benchmark: chat prose (a quote and a few line breaks per paragraph)
// and a worst case dense with characters JSON escapes (a quote pair and a line break every
// 76 bytes: four escapes there, eight once the SDK nests it in input_data).
var (
	proseText = strings.Repeat("Hi Ada, thanks for reaching out about order #1234. I checked with our warehouse: "+
		"the parcel left on Tuesday and the carrier marked it \"in transit\" this morning.\n"+
		"You should receive it within two business days. If it has not arrived by Friday, reply "+
		"to this message and I will open a claim for you right away.\n\n", 4)[:1024]
	denseText = strings.Repeat("The quick brown fox jumps over the lazy dog; \"quoted\" text, numbers 12345.\n", 14)[:1024]
)

// benchBatch is a realistic Python SDK batch of n spans: every other span is an OpenAI call
// with ~1 KB of input messages and ~1 KB of output (both also in the attributes, as the
// integration records them), the others are decorated functions with ~1 KB in and out.
func benchBatch(n int, words string) []byte {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		id := fmt.Sprintf("%08x-1111-4222-8333-%012x", i, i)
		start := 1732212345.123456 + float64(i)*0.01
		common := pyObject{
			"id", id, "session_id", "2991bdff-0fee-52e0-90c1-c76c57de7a2f",
			"trace_id", "6f1c2b7e-3d4a-4c5b-9e8f-0a1b2c3d4e5f",
			"parent_span_id", "0b7d9a3c-1e2f-4a5b-8c6d-7e8f9a0b1c2d",
		}
		tail := pyObject{
			"status", "ok", "code", nil, "code_filepath", "/app/bot.py", "code_lineno", 42,
			"error_code", nil, "error_message", nil, "error_stack", nil, "experiment_result_id", nil,
			"trace_tags", pyObject{}, "session_tags", pyObject{}, "ab_choices", []any{},
			"session", pyObject{"id", "2991bdff-0fee-52e0-90c1-c76c57de7a2f", "name", "user-42"},
		}
		var span pyObject
		if i%2 == 0 {
			messages := []any{
				pyObject{"role", "system", "content", words[:400]},
				pyObject{"role", "user", "content", words[:500]},
			}
			var in strings.Builder
			pyJSON(&in, messages)
			span = append(common,
				"name", "openai.chat.completions.create", "kind", "llm",
				"started_at", start, "ended_at", start+1.5, "duration_ms", 1500.0,
				"attributes", pyObject{
					"service.name", "openai", "provider", "openai", "model", "gpt-4o-mini",
					"messages", messages, "streaming", false, "base_url", "https://api.openai.com/v1/",
					"inputTokens", 1250, "outputTokens", 230, "openai_id", "chatcmpl-AVx1p2q3r4s5t6u7v8w9",
					"choices", []any{pyObject{"message", pyObject{"role", "assistant", "content", words}, "finish_reason", "stop", "index", 0}},
					"usage", pyObject{"prompt_tokens", 1250, "completion_tokens", 230, "total_tokens", 1480,
						"prompt_tokens_details", pyObject{"cached_tokens", 1024}},
					"throughput", 690.5, "task", "support-bot",
					"zeroeval", pyObject{"task", "support-bot", "prompt_slug", "support-bot", "prompt_version", 3,
						"prompt_version_id", "9f3e2d1c-0b4a-4c5d-8e6f-7a8b9c0d1e2f",
						"content_hash", "9c56cc51b374c3ba189210d5b6d4bf57790d351c96c47c02190ecf1e430635ab"},
				},
				"input_data", in.String(), "output_data", words,
				"tags", pyObject{"integration", "openai"},
			)
		} else {
			var in strings.Builder
			pyJSON(&in, pyObject{"question", words[:900], "top_k", 5})
			span = append(common,
				"name", "answer_question", "kind", "generic",
				"started_at", start, "ended_at", start+2.25, "duration_ms", 2250.0,
				"attributes", pyObject{"user_id", 42, "channel", "web"},
				"input_data", in.String(), "output_data", words,
				"tags", pyObject{"customer_tier", "gold", "priority", 2},
			)
		}
		pyJSON(&b, append(span, tail...))
	}
	b.WriteByte(']')
	return []byte(b.String())
}

func BenchmarkDecodeBatch(b *testing.B) {
	for _, bench := range []struct{ name, text string }{{"prose", proseText}, {"escape-dense", denseText}} {
		b.Run(bench.name, func(b *testing.B) {
			const n = 100
			body := benchBatch(n, bench.text)
			spans, rejected, err := DecodeBatch(body, testProject, testNow)
			require.NoError(b, err)
			require.Empty(b, rejected)
			require.Len(b, spans, n)
			require.NotNil(b, spans[0].LLM)
			require.NotNil(b, spans[0].Link)

			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := DecodeBatch(body, testProject, testNow); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/span")
			b.ReportMetric(float64(len(body))/n, "B/span")
		})
	}
}
