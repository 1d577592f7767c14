package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

func newScenario(o options) (scenario, error) {
	switch o.scenario {
	case "spans":
		return &spansScenario{batch: o.batch, shape: o.shape}, nil
	case "otlp":
		return &otlpScenario{batch: o.batch}, nil
	case "prompts":
		return &promptsScenario{task: o.task, projectID: o.projectID}, nil
	}
	return nil, &usageError{"unknown scenario " + o.scenario}
}

// spansScenario posts one trace per request to POST /spans: a root span, chain spans under it
// and llm spans under those, children first (COMPAT.md: children usually arrive before their
// parents), as the Python SDK (float epoch seconds, session object) or the TypeScript SDK
// (ISO 8601, top-level session_name) writes them. A worker's traces share a session for ten
// batches, as a chat's turns do.
type spansScenario struct {
	batch int
	shape string
}

func (s *spansScenario) describe() string {
	return fmt.Sprintf("spans (POST /spans, %d spans per batch, %s SDK shape)", s.batch, s.shape)
}

func (s *spansScenario) setup(ctx context.Context, c *client) error { return nil }

func (s *spansScenario) next(w *worker) request {
	tr := newTrace(w, s.batch, time.Now())
	spans := make([]map[string]any, 0, len(tr))
	for _, sp := range tr {
		spans = append(spans, sp.sdkJSON(s.shape))
	}
	body, err := json.Marshal(spans)
	if err != nil {
		panic(err) // maps of strings and numbers always marshal
	}
	return request{op: fmt.Sprintf("spans-%d", s.batch), method: "POST", path: "/spans", body: body,
		contentType: "application/json", spans: len(spans)}
}

// genSpan is one generated span, written out as SDK JSON or OTLP.
type genSpan struct {
	id, traceID, parentID   [16]byte // span ids use the first 8 bytes in OTLP
	hasParent               bool
	name, kind              string
	start, end              time.Time
	sessionID, sessionName  string
	input, output           string
	model                   string
	inputTokens, outputToks int
}

var models = []string{"gpt-4o-mini", "gpt-4o", "gpt-4.1-mini"}

// newTrace generates one trace of n spans: a root, max(1, (n-1)/6) chains under it and the
// rest llm spans spread over the chains, returned children first (llm, chains, root).
func newTrace(w *worker, n int, now time.Time) []genSpan {
	rng := w.rng
	traceID := randomUUID(rng)
	session := w.id*1_000_000 + w.n/10
	sessionID := fmt.Sprintf("load-session-%d", session)
	w.n++
	rootStart := now.Add(-time.Duration(2000+rng.IntN(8000)) * time.Millisecond)
	root := genSpan{id: randomUUID(rng), traceID: traceID, name: "handle_request", kind: "generic",
		start: rootStart, end: now, sessionID: sessionID, sessionName: "Load chat " + fmt.Sprint(session),
		input: filler(rng, 600, 1200), output: filler(rng, 600, 1200)}
	if n == 1 {
		return []genSpan{root}
	}
	nChains := max(1, (n-1)/6)
	nLLM := n - 1 - nChains
	chains := make([]genSpan, nChains)
	for i := range chains {
		chains[i] = genSpan{id: randomUUID(rng), traceID: traceID, parentID: root.id, hasParent: true,
			name: "answer_chain", kind: "chain", start: rootStart.Add(time.Duration(i) * time.Millisecond),
			end: now.Add(-time.Millisecond), sessionID: sessionID, sessionName: root.sessionName,
			input: chainInput(rng), output: filler(rng, 800, 1500)}
	}
	out := make([]genSpan, 0, n)
	for i := range nLLM {
		parent := chains[i%nChains]
		start := parent.start.Add(time.Duration(rng.IntN(500)) * time.Millisecond)
		out = append(out, genSpan{id: randomUUID(rng), traceID: traceID, parentID: parent.id, hasParent: true,
			name: "openai.chat.completions.create", kind: "llm", start: start,
			end: start.Add(time.Duration(300+rng.IntN(1500)) * time.Millisecond), sessionID: sessionID,
			sessionName: root.sessionName, input: chatMessages(rng), output: filler(rng, 800, 1800),
			model: models[rng.IntN(len(models))], inputTokens: 500 + rng.IntN(1500), outputToks: 50 + rng.IntN(400)})
	}
	out = append(out, chains...)
	return append(out, root)
}

// sdkJSON is the span as the SDKs post it (COMPAT.md "Span ingestion").
func (g genSpan) sdkJSON(shape string) map[string]any {
	m := map[string]any{
		"id":             uuidString(g.id),
		"trace_id":       uuidString(g.traceID),
		"parent_span_id": nil,
		"session_id":     g.sessionID,
		"name":           g.name,
		"kind":           g.kind,
		"status":         "ok",
		"input_data":     g.input,
		"output_data":    g.output,
		"error_code":     nil,
		"error_message":  nil,
		"error_stack":    "",
		"tags":           map[string]string{"env": "load", "app": "support-bot"},
		"attributes":     g.attributes(),
		"duration_ms":    float64(g.end.Sub(g.start).Microseconds()) / 1000,
	}
	if g.hasParent {
		m["parent_span_id"] = uuidString(g.parentID)
	}
	switch shape {
	case "typescript":
		m["started_at"] = g.start.UTC().Format("2006-01-02T15:04:05.000Z")
		m["ended_at"] = g.end.UTC().Format("2006-01-02T15:04:05.000Z")
		m["session_name"] = g.sessionName
		m["trace_tags"] = map[string]string{}
		m["session_tags"] = map[string]string{}
	default: // python
		m["started_at"] = float64(g.start.UnixMicro()) / 1e6
		m["ended_at"] = float64(g.end.UnixMicro()) / 1e6
		m["code"] = ""
		m["code_filepath"] = "app/agent.py"
		m["code_lineno"] = 42
		m["experiment_result_id"] = nil
		if !g.hasParent {
			m["session"] = map[string]any{"id": g.sessionID, "name": g.sessionName}
		}
	}
	return m
}

func (g genSpan) attributes() map[string]any {
	if g.kind != "llm" {
		return map[string]any{"service.name": "support-bot"}
	}
	return map[string]any{
		"provider": "openai", "model": g.model, "inputTokens": g.inputTokens, "outputTokens": g.outputToks,
		"usage":     map[string]int{"prompt_tokens": g.inputTokens, "completion_tokens": g.outputToks, "total_tokens": g.inputTokens + g.outputToks},
		"streaming": false, "openai_id": "chatcmpl-" + fmt.Sprintf("%x", g.id[:12]), "temperature": 0.2,
	}
}

// chatMessages is an llm span's input as the integrations record it: the messages as JSON,
// a system prompt and a user turn with some retrieved context (about 2 to 4 KB).
func chatMessages(rng *rand.Rand) string {
	b, _ := json.Marshal([]map[string]string{
		{"role": "system", "content": "You are a helpful support agent for Acme. " + filler(rng, 500, 900)},
		{"role": "user", "content": filler(rng, 1500, 3000)},
	})
	return string(b)
}

func chainInput(rng *rand.Rand) string {
	b, _ := json.Marshal(map[string]string{"question": filler(rng, 100, 300), "context": filler(rng, 800, 1500)})
	return string(b)
}

// words are the vocabulary of generated text.
var words = strings.Fields(`the order shipped yesterday and should arrive within three business days
please check the tracking link in your confirmation email if the parcel does not move for more than
two days contact our support team with your order number we can issue a refund or a replacement
the warranty covers manufacturing defects for twenty four months from the date of purchase batteries
and accessories are covered for six months returns are free within thirty days when the item is unused
and in its original packaging customer asked about invoice address change subscription upgrade
billing cycle proration discount code expired account locked password reset two factor authentication`)

// filler returns between lo and hi bytes of words.
func filler(rng *rand.Rand, lo, hi int) string {
	n := lo + rng.IntN(hi-lo+1)
	var b strings.Builder
	b.Grow(n + 16)
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[rng.IntN(len(words))])
	}
	return b.String()
}

// randomUUID is a version 4 UUID from the worker's generator (cheap, and reproducible by seed).
func randomUUID(rng *rand.Rand) [16]byte {
	var u [16]byte
	for i := 0; i < 16; i += 8 {
		v := rng.Uint64()
		for j := range 8 {
			u[i+j] = byte(v >> (8 * j))
		}
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return u
}

func uuidString(u [16]byte) string {
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}
