package otlp

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/plumehq/plume/shared/errs"
)

// Protobuf fields, for bodies written by hand.

func concat(fields ...[]byte) []byte {
	var b []byte
	for _, f := range fields {
		b = append(b, f...)
	}
	return b
}

func lenField1(num protowire.Number, payload []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), payload)
}

func strField(num protowire.Number, s string) []byte { return lenField1(num, []byte(s)) }

func varintField1(num protowire.Number, v uint64) []byte {
	return protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.VarintType), v)
}

func fixed64Field1(num protowire.Number, v uint64) []byte {
	return protowire.AppendFixed64(protowire.AppendTag(nil, num, protowire.Fixed64Type), v)
}

func fixed32Field1(num protowire.Number, v uint32) []byte {
	return protowire.AppendFixed32(protowire.AppendTag(nil, num, protowire.Fixed32Type), v)
}

func tag(num protowire.Number, typ protowire.Type) []byte { return protowire.AppendTag(nil, num, typ) }

// wireKV is a KeyValue; wireStr, wireInt and wireArray are AnyValues.
func wireKV(key string, value []byte) []byte { return concat(strField(1, key), lenField1(2, value)) }
func wireStr(s string) []byte                { return strField(1, s) }
func wireInt(n int64) []byte                 { return varintField1(3, uint64(n)) }
func wireArray(values ...[]byte) []byte {
	var arr []byte
	for _, v := range values {
		arr = append(arr, lenField1(1, v)...)
	}
	return lenField1(5, arr)
}

// wireSpan returns a valid Span with the given fields appended.
func wireSpan(fields ...[]byte) []byte {
	start := uint64(testStart.UnixNano())
	return concat(append([][]byte{
		lenField1(1, []byte("\x0a\xf7\x65\x19\x16\xcd\x43\xdd\x84\x48\xeb\x21\x1c\x80\x31\x9c")),
		lenField1(2, []byte("\xb7\xad\x6b\x71\x69\x20\x33\x31")),
		strField(5, "span"),
		fixed64Field1(7, start),
		fixed64Field1(8, start+uint64(time.Second)),
	}, fields...)...)
}

// wireExport returns an export of one resource (its fields given) with one scope holding spans.
func wireExport(resource []byte, spans ...[]byte) []byte {
	scope := lenField1(1, strField(1, "scope"))
	for _, sp := range spans {
		scope = append(scope, lenField1(2, sp)...)
	}
	return lenField1(1, concat(lenField1(1, resource), lenField1(2, scope)))
}

// pdataExport returns the Export of td as pdata encodes it: td's protobuf encoding, by pdata's
// marshaler, decoded.
func pdataExport(t testing.TB, td ptrace.Traces) *Export {
	t.Helper()
	body, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	require.NoError(t, err)
	x, err := decodeProtobuf(body)
	require.NoError(t, err)
	return x
}

// pdataMatch checks that Decode accepts body exactly when pdata does, and then maps it to the
// same spans (and rejections) as pdata's reading of it: the export pdata decodes, re-encoded
// and decoded again. It returns whether body was accepted.
func pdataMatch(t *testing.T, body []byte) bool {
	t.Helper()
	td, perr := (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces(body)
	x, err := decodeProtobuf(body)
	if perr != nil {
		require.Error(t, err, "pdata rejects the body: %v", perr)
		_, err = Decode(body, ContentTypeProtobuf)
		assert.Equal(t, errs.CodeInvalid, errs.CodeOf(err))
		return false
	}
	if errors.Is(err, errTooDeep) {
		return false // pdata has no bound
	}
	require.NoError(t, err, "pdata accepts the body")
	want := pdataExport(t, td)
	require.Equal(t, td.SpanCount(), x.SpanCount())
	wantSpans, wantRejected, wantReasons := Map(want, testProject, testNow)
	spans, rejected, reasons := Map(x, testProject, testNow)
	assert.Equal(t, wantSpans, spans)
	assert.Equal(t, wantRejected, rejected)
	assert.Equal(t, wantReasons, reasons)
	return true
}

// protobufQuirks are bodies that exercise the corners of the wire format, each with whether
// pdata accepts it.
var protobufQuirks = []struct {
	name  string
	body  []byte
	valid bool
}{
	{"unknown fields of every wire type", concat(
		wireExport(concat(wireKVField(1, "r", wireStr("v")), varintField1(9, 1)),
			wireSpan(varintField1(20, 1), fixed64Field1(21, 2), strField(22, "x"), fixed32Field1(23, 3),
				tag(24, protowire.StartGroupType), tag(25, protowire.StartGroupType), tag(25, protowire.EndGroupType),
				tag(24, protowire.EndGroupType),
				wireKVField(9, "k", concat(wireStr("v"), varintField1(30, 7))))),
		strField(99, "trailing")), true},
	{"resource twice: attributes merged", concat(lenField1(1, concat(
		lenField1(1, wireKVField(1, "a", wireStr("1"))),
		lenField1(2, lenField1(2, wireSpan())),
		lenField1(1, wireKVField(1, "b", wireStr("2")))))), true},
	{"status twice: merged", wireExport(nil, wireSpan(
		lenField1(15, concat(strField(2, "boom"), varintField1(3, 2))),
		lenField1(15, varintField1(3, 2)))), true},
	{"status code beyond int32", wireExport(nil, wireSpan(lenField1(15, varintField1(3, 1<<32|2)))), true},
	{"value twice: an empty value keeps the first", wireExport(nil, wireSpan(
		lenField1(9, concat(strField(1, "gen_ai.request.model"), lenField1(2, wireStr("m")), lenField1(2, nil))))), true},
	{"value with two fields: the last counts", wireExport(nil, wireSpan(
		wireKVField(9, "a", concat(wireArray(wireStr("x")), wireStr("s"))),
		wireKVField(9, "b", concat(wireStr("s"), wireInt(-3), varintField1(2, 5))))), true},
	{"string_value_strindex is an empty value", wireExport(nil, wireSpan(
		wireKVField(9, "a", concat(wireStr("s"), varintField1(8, 3))), wireKVField(9, "a", wireStr("second")))), true},
	{"nested arrays and key-value lists", wireExport(nil, wireSpan(
		wireKVField(9, "tag.tags", wireArray(wireStr("a"), wireInt(2), wireArray())),
		wireKVField(9, "zeroeval", lenField1(6, concat(wireKVField(1, "task", wireStr("t")), wireKVField(1, "task", wireStr("u"))))),
		wireKVField(9, "bytes", lenField1(7, []byte{0, 1, 2})))), true},
	{"events and links", wireExport(nil, wireSpan(
		lenField1(11, concat(fixed64Field1(1, 1), strField(2, "exception"),
			wireKVField(3, "exception.type", wireStr("E")), varintField1(4, 0))),
		lenField1(13, concat(lenField1(1, make([]byte, 16)), lenField1(2, make([]byte, 8)), strField(3, "ts"),
			wireKVField(4, "l", wireStr("v")), varintField1(5, 1), fixed32Field1(6, 1))))), true},
	{"ids repeated: the last counts, empty is zero", wireExport(nil, wireSpan(
		lenField1(4, []byte("12345678")), lenField1(4, nil))), true},
	{"instrumentation_library_spans (field 1000) is dropped", lenField1(1, concat(
		lenField1(1000, lenField1(2, wireSpan())),
		lenField1(2, lenField1(2, wireSpan(strField(5, "kept")))))), true},
	{"entity refs", wireExport(lenField1(3, concat(strField(1, "u"), strField(2, "t"), strField(3, "k"), strField(4, "d"))), wireSpan()), true},
	{"tag beyond int32 wraps to a known field", wireExport(nil, wireSpan(concat(
		protowire.AppendVarint(nil, (1<<32+9)<<3|2), protowire.AppendBytes(nil, wireKV("wrapped", wireStr("v")))))), true},
	{"varint of 10 bytes, high bits dropped", wireExport(nil, wireSpan(concat(tag(6, protowire.VarintType),
		[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}))), true},
	{"scope name, version and attributes", lenField1(1, lenField1(2, concat(
		lenField1(1, concat(strField(1, "n"), strField(2, "v"), wireKVField(3, "a", wireStr("b")), varintField1(4, 1))),
		lenField1(2, wireSpan())))), true},
	{"empty body", nil, true},

	{"wrong wire type", wireExport(nil, wireSpan(varintField1(5, 1))), false},
	{"wrong wire type of a timestamp", wireExport(nil, wireSpan(varintField1(7, 1))), false},
	{"wrong wire type in a value", wireExport(nil, wireSpan(wireKVField(9, "a", strField(3, "x")))), false},
	{"trace id of 15 bytes", wireExport(nil, wireSpan(lenField1(1, make([]byte, 15)))), false},
	{"link span id of 7 bytes", wireExport(nil, wireSpan(lenField1(13, lenField1(2, make([]byte, 7))))), false},
	{"truncated fixed64", wireExport(nil, concat(wireSpan(), tag(8, protowire.Fixed64Type), []byte{1, 2, 3})), false},
	{"length beyond the message", wireExport(nil, concat(wireSpan(), tag(5, protowire.BytesType), []byte{9, 'a'})), false},
	{"field number 0", wireExport(nil, concat(wireSpan(), []byte{0x02, 0x00})), false},
	{"wire type 6", wireExport(nil, concat(wireSpan(), []byte{0x56, 0x00})), false},
	{"end group without a start", wireExport(nil, concat(wireSpan(), tag(30, protowire.EndGroupType))), false},
	{"group holding a scalar (pdata ends the group early)", wireExport(nil, wireSpan(
		tag(30, protowire.StartGroupType), varintField1(31, 1), tag(30, protowire.EndGroupType))), false},
	{"unterminated group", wireExport(nil, wireSpan(tag(30, protowire.StartGroupType))), false},
	{"varint of 11 bytes", wireExport(nil, wireSpan(concat(tag(6, protowire.VarintType),
		[]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}))), false},
	{"broken array replaced by a later field", wireExport(nil, wireSpan(
		wireKVField(9, "a", concat(lenField1(5, []byte{0x0a, 0x05}), wireStr("s"))))), false},
	{"broken attribute of a scope", lenField1(1, lenField1(2, lenField1(1, lenField1(3, []byte{0x12, 0x03, 0x08})))), false},
	{"broken event attribute", wireExport(nil, wireSpan(lenField1(11, lenField1(3, []byte{0x0a, 0x09})))), false},
	{"broken entity ref", wireExport(lenField1(3, varintField1(1, 1)), wireSpan()), false},
	{"broken deprecated scope spans", lenField1(1, lenField1(1000, lenField1(2, varintField1(5, 1)))), false},
}

// wireKVField is the field num holding the KeyValue key: value.
func wireKVField(num protowire.Number, key string, value []byte) []byte {
	return lenField1(num, wireKV(key, value))
}

func TestDecodeProtobufMatchesPdata(t *testing.T) {
	for _, tt := range protobufQuirks {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.valid, pdataMatch(t, tt.body))
		})
	}
}

// What Decode reads of the quirks, spelled out.
// A span's attributes apart (its status between them) are read together (protobuf
// concatenates repeated fields), as pdata reads them.
func TestDecodeProtobufAttributesApart(t *testing.T) {
	_, sp := oneSpan(t, map[string]any{"gen_ai.request.model": "first", "a": 1})
	sp.Status().SetMessage("m")
	more := pcommon.NewMap()
	more.PutStr("gen_ai.request.model", "second")
	more.PutStr("model", "m")
	more.PutStr("b", "2")
	body := duplicateAttributes(t, sp, more)
	require.True(t, pdataMatch(t, body))
	x, err := Decode(body, ContentTypeProtobuf)
	require.NoError(t, err)
	spans, _, _ := Map(x, testProject, testNow)
	require.Len(t, spans, 1)
	assert.Equal(t, "first", spans[0].LLM.Model)
	assert.Equal(t, "2", attrsOf(t, spans[0])["b"])
}

func TestDecodeProtobufMerges(t *testing.T) {
	decode := func(t *testing.T, body []byte) []map[string]any {
		t.Helper()
		x, err := Decode(body, ContentTypeProtobuf)
		require.NoError(t, err)
		spans, rejected, _ := Map(x, testProject, testNow)
		require.Zero(t, rejected)
		var out []map[string]any
		for _, s := range spans {
			out = append(out, attrsOf(t, s))
		}
		return out
	}
	byName := map[string][]byte{}
	for _, q := range protobufQuirks {
		byName[q.name] = q.body
	}

	got := decode(t, byName["resource twice: attributes merged"])
	assert.Equal(t, map[string]any{"a": "1", "b": "2"}, got[0]["resource"])

	got = decode(t, byName["value with two fields: the last counts"])
	assert.Equal(t, "s", got[0]["a"])
	assert.Equal(t, true, got[0]["b"])

	got = decode(t, byName["value twice: an empty value keeps the first"])
	assert.Equal(t, "m", got[0]["model"])

	got = decode(t, byName["string_value_strindex is an empty value"])
	assert.Nil(t, got[0]["a"])

	got = decode(t, byName["tag beyond int32 wraps to a known field"])
	assert.Equal(t, "v", got[0]["wrapped"])

	got = decode(t, byName["instrumentation_library_spans (field 1000) is dropped"])
	require.Len(t, got, 1)

	x, err := Decode(byName["status twice: merged"], ContentTypeProtobuf)
	require.NoError(t, err)
	spans, _, _ := Map(x, testProject, testNow)
	require.Len(t, spans, 1)
	assert.Equal(t, "error", *spans[0].Status)
	assert.Equal(t, "boom", *spans[0].ErrorMessage)
}

// Values nested deeper than maxProtoDepth messages are rejected; up to it they are read (and
// written as JSON up to maxValueDepth levels).
func TestDecodeProtobufDepth(t *testing.T) {
	nested := func(levels int) []byte {
		v := wireStr("x")
		for range levels {
			v = wireArray(v)
		}
		return wireExport(nil, wireSpan(wireKVField(9, "deep", v)))
	}
	// The span's KeyValue is 5 messages deep and its AnyValue 6; each array adds two levels.
	const deepest = (maxProtoDepth - 6) / 2
	t.Run("at the bound", func(t *testing.T) {
		body := nested(deepest)
		assert.True(t, pdataMatch(t, body))
		x, err := Decode(body, ContentTypeProtobuf)
		require.NoError(t, err)
		spans, _, _ := Map(x, testProject, testNow)
		require.Len(t, spans, 1)
		assert.Contains(t, string(spans[0].Attributes), tooDeep)
	})
	t.Run("beyond", func(t *testing.T) {
		_, err := Decode(nested(deepest+1), ContentTypeProtobuf)
		require.Error(t, err)
		assert.Equal(t, errs.CodeInvalid, errs.CodeOf(err))
		assert.True(t, strings.Contains(err.Error(), "recursion depth"), err.Error())
	})
}

// FuzzDecodeProtobufMatchesPdata: for any body, Decode accepts exactly the bodies that the
// Collector's pdata accepts (bar values nested beyond maxProtoDepth), and Map makes of them the
// same spans, rejections and reasons as of pdata's reading of them.
func FuzzDecodeProtobufMatchesPdata(f *testing.F) {
	for _, td := range append(fuzzSeeds(f), benchTraces(f, 20)) {
		body, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
		require.NoError(f, err)
		f.Add(body)
	}
	for _, q := range protobufQuirks {
		f.Add(q.body)
	}
	// Attributes apart (a status between them), which are read from the whole span.
	_, sp := oneSpan(f, map[string]any{"gen_ai.request.model": "first", "a": 1})
	sp.Status().SetMessage("m")
	more := pcommon.NewMap()
	more.PutStr("gen_ai.request.model", "second")
	more.PutStr("model", "m")
	f.Add(duplicateAttributes(f, sp, more))
	f.Fuzz(func(t *testing.T, body []byte) { pdataMatch(t, body) })
}
