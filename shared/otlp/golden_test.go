package otlp

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"google.golang.org/protobuf/encoding/protowire"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/map_golden.jsonl with what Map makes now")

// goldenFile holds what Map made of goldenExports before Map read and wrote each span's
// attributes in one pass: the spans (as stored, AppendJSON), the rejected count and the
// reasons, one export a line. Exports whose mapping is large are held by its SHA-256.
const goldenFile = "testdata/map_golden.jsonl"

// goldenExports are the exports whose mapping is held byte for byte: the fixtures, the
// benchmark's export, the fuzz seeds, and random exports written straight in wire form (with
// duplicate keys, Map's own keys, keys and values that need escaping or repairing, nested
// values, flattened messages, events, and attributes over the size bound).
func goldenExports(t *testing.T) (names []string, bodies [][]byte, types []string) {
	add := func(name string, body []byte, contentType string) {
		names, bodies, types = append(names, name), append(bodies, body), append(types, contentType)
	}
	for _, name := range []string{fixtureCollector, fixtureEnumNames} {
		body, err := os.ReadFile(name)
		require.NoError(t, err)
		add(name, body, ContentTypeJSON)
	}
	for i, td := range append(fuzzSeeds(t), benchTraces(t, 100)) {
		sortAttributes(td) // pcommon.Map.FromRaw puts a Go map's members in random order
		body, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
		require.NoError(t, err)
		add(fmt.Sprintf("seed %d", i), body, ContentTypeProtobuf)
		body, err = (&ptrace.JSONMarshaler{}).MarshalTraces(td)
		require.NoError(t, err)
		add(fmt.Sprintf("seed %d (JSON)", i), body, ContentTypeJSON)
	}
	for seed := range 60 {
		add(fmt.Sprintf("random %d", seed), randomExport(uint64(seed)), ContentTypeProtobuf)
	}
	return names, bodies, types
}

// sortAttributes puts the members of every attribute map of td in key order.
func sortAttributes(td ptrace.Traces) {
	for _, rs := range td.ResourceSpans().All() {
		sortMap(rs.Resource().Attributes())
		for _, ss := range rs.ScopeSpans().All() {
			for _, sp := range ss.Spans().All() {
				sortMap(sp.Attributes())
				for _, e := range sp.Events().All() {
					sortMap(e.Attributes())
				}
			}
		}
	}
}

// sortMap puts the members of m, and of the maps nested in it, in key order.
func sortMap(m pcommon.Map) {
	var keys []string
	for k := range m.All() {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	sorted := pcommon.NewMap()
	for _, k := range keys {
		v, _ := m.Get(k)
		nv := sorted.PutEmpty(k)
		v.CopyTo(nv)
		sortValue(nv)
	}
	sorted.CopyTo(m)
}

// sortValue sorts the maps in v.
func sortValue(v pcommon.Value) {
	switch v.Type() {
	case pcommon.ValueTypeMap:
		sortMap(v.Map())
	case pcommon.ValueTypeSlice:
		for _, e := range v.Slice().All() {
			sortValue(e)
		}
	}
}

// goldenLine is what Map made of one export.
func goldenLine(t *testing.T, body []byte, contentType string) string {
	x, err := Decode(body, contentType)
	require.NoError(t, err)
	spans, rejected, reasons := Map(x, testProject, testNow)
	var b []byte
	for _, s := range spans {
		b = s.AppendJSON(b)
		b = append(b, '\n')
	}
	r, err := json.Marshal(reasons)
	require.NoError(t, err)
	b = fmt.Appendf(b, "rejected %d %s", rejected, r)
	if len(b) > 8<<10 {
		sum := sha256.Sum256(b)
		return "sha256:" + hex.EncodeToString(sum[:])
	}
	line, err := json.Marshal(string(b))
	require.NoError(t, err)
	return string(line)
}

// Map makes, of every golden export, byte for byte what it made before it read and wrote
// each span's attributes in one pass.
func TestMapGolden(t *testing.T) {
	names, bodies, types := goldenExports(t)
	var got []string
	for i := range bodies {
		got = append(got, goldenLine(t, bodies[i], types[i]))
	}
	if *updateGolden {
		require.NoError(t, os.WriteFile(goldenFile, []byte(strings.Join(got, "\n")+"\n"), 0o644))
		return
	}
	f, err := os.Open(goldenFile)
	require.NoError(t, err)
	defer f.Close()
	var want []string
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		want = append(want, sc.Text())
	}
	require.NoError(t, sc.Err())
	require.Len(t, want, len(got))
	for i := range got {
		assert.Equal(t, want[i], got[i], names[i])
	}
}

// The random exports have spans of many shapes, the golden ones are not all alike.
func TestRandomExportsVary(t *testing.T) {
	var large, rejected, dup int
	for seed := range 60 {
		x, err := Decode(randomExport(uint64(seed)), ContentTypeProtobuf)
		require.NoError(t, err)
		spans, r, _ := Map(x, testProject, testNow)
		rejected += r
		for _, s := range spans {
			if bytes.Contains(s.Attributes, []byte(`"plume.truncated":{`)) {
				large++
			}
			if bytes.Contains(s.Attributes, []byte(`"dup":`)) {
				dup++
			}
		}
	}
	assert.Positive(t, large)
	assert.Positive(t, rejected)
	assert.Positive(t, dup)
}

// randomExport returns a TracesData of random resources, scopes and spans, written in wire
// form so that it may hold what pdata's API cannot make: duplicate keys, a value before its key.
func randomExport(seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 31))
	w := &randomWriter{r: r}
	var body []byte
	for range 1 + r.IntN(3) {
		body = protowire.AppendTag(body, 1, protowire.BytesType)
		body = protowire.AppendBytes(body, w.resourceSpans())
	}
	return body
}

// randomWriter writes random parts of an export.
type randomWriter struct {
	r *rand.Rand
}

// randomKeys are the keys attributes are named from: the fields Map reads, Map's own keys,
// flattened messages, keys that need escaping, and others.
var randomKeys = []string{
	"gen_ai.request.model", "gen_ai.response.model", "gen_ai.provider.name", "gen_ai.system",
	"gen_ai.operation.name", "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens",
	"gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.reasoning_tokens", "gen_ai.usage.cost",
	"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions",
	"gen_ai.prompt", "gen_ai.completion", "input.value", "output.value", "llm.model_name",
	"openinference.span.kind", "traceloop.span.kind", "llm.request.type", "http.request.method",
	"db.system.name", "db.system", "session.id", "zeroeval.session.id", "session.name",
	"zeroeval.session.tags", "user.id", "tag.tags", "zeroeval.tags", "zeroeval.trace.tags",
	"zeroeval", "zeroeval.prompt_slug", "zeroeval.prompt_version", "task", "code.filepath",
	"code.line.number", "error.type", "llm.cost.total", "llm.token_count.prompt",
	keyProvider, keyModel, keyInputTokens, keyOutputTokens, keyZeroeval, keyResource, keyScope,
	keyTruncated, "gen_ai.prompt.0.role", "gen_ai.prompt.0.content", "gen_ai.prompt.1.content",
	"gen_ai.completion.0.content", "llm.input_messages.0.message.role",
	"llm.output_messages.0.message.content", "dup", "dup", "a\"b", "line\nbreak", "tab\t",
	"\u2028sep", "ключ", "bad\xffutf8", "", "x.y.z", "url.full", "service.name",
}

// randomStrings are the string values attributes take (besides random and large ones).
var randomStrings = []string{
	"", "gpt-4o", "openai", "chat", "execute_tool", "LLM", "tool", "postgresql", "pinecone", "GET",
	"42", "1.5", " 7 ", "-3", "1e12", `{"prompt_slug":"s","prompt_version":"2"}`, `["a","b"]`,
	`{"k":"v","n":1}`, `[{"role":"user","content":"hi"}]`, `not json`, "quote\"back\\slash",
	"ctl\x01\x1f", "é中😀", "bad\xc3(", "\u2028\u2029", "<html>&", "session-1",
}

func (w *randomWriter) resourceSpans() []byte {
	r := w.r
	var b []byte
	if r.IntN(4) > 0 {
		var res []byte
		for range r.IntN(6) {
			res = w.keyValue(res, 1, 0)
		}
		if r.IntN(8) == 0 { // a large resource
			res = w.keyValueOf(res, 1, "big.resource", stringValue(strings.Repeat("r", 20_000+r.IntN(50_000))))
		}
		b = protowire.AppendTag(b, 1, protowire.BytesType)
		b = protowire.AppendBytes(b, res)
	}
	for range 1 + r.IntN(3) {
		var ss []byte
		if r.IntN(3) > 0 {
			var scope []byte
			if r.IntN(4) > 0 {
				scope = protowire.AppendTag(scope, 1, protowire.BytesType)
				scope = protowire.AppendString(scope, w.pick(randomStrings))
			}
			if r.IntN(2) > 0 {
				scope = protowire.AppendTag(scope, 2, protowire.BytesType)
				scope = protowire.AppendString(scope, "1.0.0")
			}
			ss = protowire.AppendTag(ss, 1, protowire.BytesType)
			ss = protowire.AppendBytes(ss, scope)
		}
		for range r.IntN(12) {
			ss = protowire.AppendTag(ss, 2, protowire.BytesType)
			ss = protowire.AppendBytes(ss, w.span())
		}
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendBytes(b, ss)
	}
	return b
}

func (w *randomWriter) span() []byte {
	r := w.r
	var b []byte
	id := func(num protowire.Number, n int) {
		v := make([]byte, n)
		if r.IntN(30) > 0 {
			for i := range v {
				v[i] = byte(r.IntN(4))
			}
			v[0] = 1
		}
		b = protowire.AppendTag(b, num, protowire.BytesType)
		b = protowire.AppendBytes(b, v)
	}
	id(1, 16)
	id(2, 8)
	if r.IntN(2) == 0 {
		id(4, 8)
	}
	if r.IntN(30) > 0 {
		b = protowire.AppendTag(b, 5, protowire.BytesType)
		b = protowire.AppendString(b, w.pick([]string{"chat", "GET /x", "bad\xffname", strings.Repeat("n", 300)}))
	}
	start := uint64(testStart.UnixNano()) + uint64(r.IntN(1e9))
	if r.IntN(30) > 0 {
		b = protowire.AppendTag(b, 7, protowire.Fixed64Type)
		b = protowire.AppendFixed64(b, start)
	}
	if r.IntN(4) > 0 {
		b = protowire.AppendTag(b, 8, protowire.Fixed64Type)
		b = protowire.AppendFixed64(b, start+uint64(r.IntN(2e9))-uint64(r.IntN(30)/29)*3e9)
	}
	for range r.IntN(14) {
		b = w.keyValue(b, 9, 0)
		if r.IntN(10) == 0 { // another field between attributes
			b = protowire.AppendTag(b, 6, protowire.VarintType)
			b = protowire.AppendVarint(b, 2)
		}
	}
	if r.IntN(10) == 0 { // an attribute over the size bound
		b = w.keyValueOf(b, 9, "payload", stringValue(strings.Repeat("p\"", 70_000+r.IntN(70_000))))
	}
	for range r.IntN(3) {
		var e []byte
		e = protowire.AppendTag(e, 2, protowire.BytesType)
		e = protowire.AppendString(e, w.pick([]string{eventException, eventPrompt, eventCompletion, eventOperationDetail, "other"}))
		for range r.IntN(4) {
			k := w.pick([]string{"exception.type", "exception.message", "exception.stacktrace", "gen_ai.prompt",
				"gen_ai.completion", "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions"})
			e = w.keyValueOf(e, 3, k, w.value(1))
		}
		b = protowire.AppendTag(b, 11, protowire.BytesType)
		b = protowire.AppendBytes(b, e)
	}
	if r.IntN(2) == 0 {
		var st []byte
		st = protowire.AppendTag(st, 2, protowire.BytesType)
		st = protowire.AppendString(st, w.pick(randomStrings))
		st = protowire.AppendTag(st, 3, protowire.VarintType)
		st = protowire.AppendVarint(st, uint64(r.IntN(4)))
		b = protowire.AppendTag(b, 15, protowire.BytesType)
		b = protowire.AppendBytes(b, st)
	}
	return b
}

// keyValue appends a random attribute as field num.
func (w *randomWriter) keyValue(b []byte, num protowire.Number, depth int) []byte {
	return w.keyValueOf(b, num, w.pick(randomKeys), w.value(depth))
}

// keyValueOf appends the attribute key: value (an AnyValue message) as field num, the value
// first now and then.
func (w *randomWriter) keyValueOf(b []byte, num protowire.Number, key string, value []byte) []byte {
	var kv []byte
	k := protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), key)
	v := protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), value)
	if w.r.IntN(5) == 0 {
		kv = append(append(kv, v...), k...)
	} else {
		kv = append(append(kv, k...), v...)
	}
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, kv)
}

// stringValue returns an AnyValue of a string.
func stringValue(s string) []byte {
	return protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), s)
}

// value returns a random AnyValue, depth levels deep.
func (w *randomWriter) value(depth int) []byte {
	r := w.r
	var b []byte
	n := r.IntN(12)
	if depth > 2 && n >= 9 {
		n = 0
	}
	switch n {
	case 0, 1, 2, 3:
		return stringValue(w.pick(randomStrings))
	case 4:
		b = protowire.AppendTag(b, 2, protowire.VarintType)
		return protowire.AppendVarint(b, uint64(r.IntN(2)))
	case 5:
		b = protowire.AppendTag(b, 3, protowire.VarintType)
		return protowire.AppendVarint(b, uint64(pick(r, []int64{0, 7, 1200, -5, math.MaxInt64, 1e12})))
	case 6:
		b = protowire.AppendTag(b, 4, protowire.Fixed64Type)
		return protowire.AppendFixed64(b, math.Float64bits(pick(r, []float64{0.25, 3, -1, math.NaN(), math.Inf(1), 1e21, 1e-7})))
	case 7:
		b = protowire.AppendTag(b, 7, protowire.BytesType)
		return protowire.AppendBytes(b, []byte{0, 1, 0xff})
	case 8:
		return nil // empty
	case 9:
		var arr []byte
		for range r.IntN(4) {
			arr = protowire.AppendTag(arr, 1, protowire.BytesType)
			arr = protowire.AppendBytes(arr, w.value(depth+1))
		}
		b = protowire.AppendTag(b, 5, protowire.BytesType)
		return protowire.AppendBytes(b, arr)
	default:
		var kvs []byte
		for range r.IntN(4) {
			kvs = w.keyValue(kvs, 1, depth+1)
		}
		b = protowire.AppendTag(b, 6, protowire.BytesType)
		return protowire.AppendBytes(b, kvs)
	}
}

// pick returns a random element of s.
func pick[T any](r *rand.Rand, s []T) T { return s[r.IntN(len(s))] }

func (w *randomWriter) pick(s []string) string { return pick(w.r, s) }
