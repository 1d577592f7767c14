package otlp

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/plumehq/plume/shared/errs"
)

// jsonMatch checks that the JSON decoder accepts body exactly when pdata's JSON codec does,
// and then maps it to the same spans (and rejections) as pdata's reading of it. It returns
// whether body was accepted. Two refusals are Plume's own: values nested beyond
// maxProtoDepth, and more than MaxSpansPerExport spans, counted as they are read (so a body
// that pdata refuses past them is refused as too large).
func jsonMatch(t *testing.T, body []byte) bool {
	t.Helper()
	td, perr := (&ptrace.JSONUnmarshaler{}).UnmarshalTraces(body)
	x, err := decodeJSON(body)
	switch {
	case errors.Is(err, errTooDeep):
		return false // pdata has no bound
	case errors.Is(err, errTooManySpans):
		if perr == nil {
			assert.Greater(t, td.SpanCount(), MaxSpansPerExport)
		}
		return false
	case perr != nil:
		require.Error(t, err, "pdata refuses the body: %v", perr)
		_, err = Decode(body, ContentTypeJSON)
		assert.Equal(t, errs.CodeInvalid, errs.CodeOf(err))
		return false
	}
	require.NoError(t, err, "pdata accepts the body")
	require.Equal(t, td.SpanCount(), x.SpanCount())
	wantSpans, wantRejected, wantReasons := Map(pdataExport(t, td), testProject, testNow)
	spans, rejected, reasons := Map(x, testProject, testNow)
	assert.Equal(t, wantSpans, spans)
	assert.Equal(t, wantRejected, rejected)
	assert.Equal(t, wantReasons, reasons)
	return true
}

// jsonSpan1 is an OTLP/JSON export of one span of the given members (more after the valid
// ones).
func jsonSpan1(members string) string {
	return `{"resourceSpans":[{"resource":{"attributes":[{"key":"service.name","value":{"stringValue":"svc"}}]},` +
		`"scopeSpans":[{"scope":{"name":"s","version":"1"},"spans":[{"traceId":"0af7651916cd43dd8448eb211c80319c",` +
		`"spanId":"b7ad6b7169203331","name":"span","startTimeUnixNano":"1748779140123456789",` +
		`"endTimeUnixNano":"1748779141123456789"` + members + `}]}]}]}`
}

// jsonAttr1 is jsonSpan1 with one attribute "a" of the given AnyValue members.
func jsonAttr1(value string) string {
	return jsonSpan1(`,"attributes":[{"key":"a","value":{` + value + `}}]`)
}

// jsonQuirks are bodies that exercise json-iterator's reading (as pdata uses it), each with
// whether pdata accepts it.
var jsonQuirks = []struct {
	name  string
	body  string
	valid bool
}{
	{"null is an empty export", `null`, true},
	{"a closing brace is an empty export", `}`, true},
	{"trailing bytes are not read", `{"resourceSpans":[]} trailing`, true},
	{"a leading comma opens an object", `,"resourceSpans":[]}`, true},
	{"a member named empty ends the object", `{"":1}`, true},
	{"a member named empty in a span", jsonSpan1(`,"":1,"kind":1`), false},
	{"a brace in place of a comma", jsonSpan1(`{"kind":1`), true},
	{"a closing bracket in place of an array", `{"resourceSpans":]}`, true},
	{"a comma in place of an array", jsonSpan1(`,"events":,{"name":"e"}]`), true},
	{"snake_case names", strings.NewReplacer("resourceSpans", "resource_spans", "scopeSpans", "scope_spans", "traceId", "trace_id",
		"spanId", "span_id", "startTimeUnixNano", "start_time_unix_nano").Replace(jsonAttr1(`"string_value":"v"`)), true},
	{"escaped member names", strings.Replace(jsonSpan1(""), `"name"`, `"n\u0061me"`, 2), true},
	{"null members", jsonSpan1(`,"status":null,"events":null,"attributes":[{"key":null,"value":null}],"traceState":null`), true},
	{"uppercase hex ids", strings.Replace(jsonSpan1(""), "0af7651916cd43dd8448eb211c80319c", "0AF7651916CD43DD8448EB211C80319C", 1), true},
	{"an empty id is none", jsonSpan1(`,"traceId":"","parentSpanId":"b7ad6b7169203332","parentSpanId":""`), true},
	{"an id of 33 hex digits", jsonSpan1(`,"traceId":"0af7651916cd43dd8448eb211c80319c0"`), false},
	{"a null id", jsonSpan1(`,"parentSpanId":null`), false},
	{"an id with an escape", jsonSpan1(`,"spanId":"b7ad6b716920333\"`), false},
	{"base64 bytes with a newline", jsonAttr1("\"bytesValue\":\"AAEC\nAw==\""), true},
	{"invalid base64", jsonAttr1(`"bytesValue":"A"`), false},
	{"enum names and numbers", jsonSpan1(`,"kind":"SPAN_KIND_SERVER","status":{"code":"STATUS_CODE_ERROR","message":"m"},"status":{"code":9}`), true},
	{"an unknown enum name", jsonSpan1(`,"kind":"SPAN_KIND_BOGUS"`), false},
	{"a leading zero ends an integer", jsonSpan1(`,"startTimeUnixNano":01`), false},
	{"integers as strings", jsonAttr1(`"intValue":"-42"`), true},
	{"an integer with spaces in a string", jsonAttr1(`"intValue":" 42"`), false},
	{"minus zero", jsonAttr1(`"intValue":-0`), true},
	{"a float where an integer is expected", jsonAttr1(`"intValue":1.5`), false},
	{"an exponent after an integer", jsonAttr1(`"intValue":1e5`), false},
	{"uint64 overflow past the first wrap", jsonSpan1(`,"endTimeUnixNano":30000000000000000000`), true},
	{"uint64 overflow caught", jsonSpan1(`,"endTimeUnixNano":18446744073709551616`), false},
	{"int64 overflow", jsonAttr1(`"intValue":9223372036854775808`), false},
	{"int64 minimum", jsonAttr1(`"intValue":-9223372036854775808`), true},
	{"doubles", jsonAttr1(`"doubleValue":1.5e-3,"doubleValue":-0.1,"doubleValue":12345678901234567890`), true},
	{"a double in a string", jsonAttr1(`"doubleValue":"Infinity"`), true},
	{"a double out of range", jsonAttr1(`"doubleValue":1e400`), false},
	{"a double with a leading zero", jsonAttr1(`"doubleValue":01`), false},
	{"a double with a leading dot", jsonAttr1(`"doubleValue":-.5`), false},
	{"a double ending in a dot", jsonAttr1(`"doubleValue":1.`), false},
	{"a double of two signs", jsonAttr1(`"doubleValue":--1`), false},
	{"skipped numbers json-iterator takes", jsonSpan1(`,"x":-.5,"y":-01,"z":1e39,"w":-.5e3,"v":0.5`), true},
	{"a skipped number of two dots", jsonSpan1(`,"x":1.2.3`), false},
	{"a skipped number out of float32's range", jsonSpan1(`,"x":0.5e40`), false},
	{"a skipped number out of float64's range", jsonSpan1(`,"x":1e999`), false},
	{"a skipped number with a plus", jsonSpan1(`,"x":+1`), false},
	{"a skipped object with a null name", jsonSpan1(`,"x":{"a":1,null:2}`), true},
	{"a skipped object with a null first name", jsonSpan1(`,"x":{null:1}`), false},
	{"a skipped array with a trailing comma", jsonSpan1(`,"x":[1,]`), false},
	{"skipped values nested 10000 deep", jsonSpan1(`,"x":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000)), true},
	{"skipped values nested 10001 deep", jsonSpan1(`,"x":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001)), false},
	{"a control character before an escape", jsonSpan1(",\"name\":\"a\x01\\n\""), false},
	{"a control character after an escape", jsonSpan1(",\"name\":\"a\\n\x01\""), true},
	{"surrogates, paired and alone", jsonAttr1(`"stringValue":"\ud83d\ude00 \ud800 \udc00x \ud800\n \ud800\u0041"`), true},
	{"invalid UTF-8 is kept", jsonAttr1("\"stringValue\":\"\xff\xfe\""), true},
	{"an invalid escape", jsonAttr1(`"stringValue":"\x"`), false},
	{"value twice: an empty value keeps the first", jsonSpan1(`,"attributes":[{"key":"gen_ai.request.model","value":{"stringValue":"m"},"value":{}}]`), true},
	{"value with two fields: the last counts", jsonAttr1(`"arrayValue":{"values":[{"stringValue":"x"}]},"stringValue":"s"`), true},
	{"key twice: the last counts", jsonSpan1(`,"attributes":[{"key":"a","key":"b","value":{"boolValue":true}}]`), true},
	{"nested arrays and key-value lists", jsonSpan1(`,"attributes":[{"key":"tag.tags","value":{"arrayValue":{"values":[{"stringValue":"a"},{"intValue":2},{"arrayValue":null}]}}},` +
		`{"key":"zeroeval","value":{"kvlistValue":{"values":[{"key":"task","value":{"stringValue":"t"}},{"key":"task","value":{"stringValue":"u"}}]}}},` +
		`{"key":"s","value":{"stringValueStrindex":3}}]`), true},
	{"events, links and repeated attributes", jsonSpan1(`,"attributes":[{"key":"a","value":{"stringValue":"1"}}],"events":[{"timeUnixNano":"1","name":"exception",` +
		`"attributes":[{"key":"exception.type","value":{"stringValue":"E"}}],"droppedAttributesCount":0}],"links":[{"traceId":"0af7651916cd43dd8448eb211c80319c",` +
		`"spanId":"b7ad6b7169203331","attributes":[{"key":"l","value":{}}],"flags":1}],"attributes":[{"key":"b","value":{"stringValue":"2"}}]`), true},
	{"a link span id of 7 bytes", jsonSpan1(`,"links":[{"spanId":"b7ad6b71692033"}]`), false},
	{"resource twice: attributes added", `{"resourceSpans":[{"resource":{"attributes":[{"key":"a","value":{"stringValue":"1"}}]},` +
		`"scopeSpans":[{"spans":[{"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"b7ad6b7169203331","name":"x","startTimeUnixNano":"1748779140123456789"}]}],` +
		`"resource":{"attributes":[{"key":"b","value":{"stringValue":"2"}}],"entityRefs":[{"type":"t","idKeys":["k"]}]}}]}`, true},
	{"deprecated scope spans, used", `{"resourceSpans":[{"deprecatedScopeSpans":[{"spans":[{"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"b7ad6b7169203331","name":"old","startTimeUnixNano":"1748779140123456789"}]}]}]}`, true},
	{"deprecated scope spans, dropped", `{"resourceSpans":[{"deprecatedScopeSpans":[{"spans":[{"name":"old"}]}],"scopeSpans":[{"spans":[{"traceId":"0af7651916cd43dd8448eb211c80319c","spanId":"b7ad6b7169203331","name":"new","startTimeUnixNano":"1748779140123456789"}]}]}]}`, true},
	{"a truncated body", `{"resourceSpans":[`, false},
	{"an empty body", ``, false},
	{"a number at the end", `{"x":1`, false},
	{"a wrong type", `{"resourceSpans":{}}`, false},
}

func TestDecodeJSONMatchesPdata(t *testing.T) {
	for _, tt := range jsonQuirks {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.valid, jsonMatch(t, []byte(tt.body)))
		})
	}
}

// Values nested deeper than maxProtoDepth messages are refused, as in protobuf; up to it they
// are read.
func TestDecodeJSONDepth(t *testing.T) {
	nested := func(levels int) []byte {
		v := `{"stringValue":"x"}`
		for range levels {
			v = `{"arrayValue":{"values":[` + v + `]}}`
		}
		return []byte(jsonSpan1(`,"attributes":[{"key":"deep","value":` + v + `}]`))
	}
	const deepest = (maxProtoDepth - 6) / 2 // as TestDecodeProtobufDepth counts
	assert.True(t, jsonMatch(t, nested(deepest)))
	_, err := decodeJSON(nested(deepest + 1))
	assert.ErrorIs(t, err, errTooDeep)
}

// FuzzDecodeJSONMatchesPdata: for any body, the JSON decoder accepts exactly the bodies that
// the Collector's pdata accepts (bar values nested beyond maxProtoDepth and exports of more
// than MaxSpansPerExport spans), and Map makes of them the same spans, rejections and reasons
// as of pdata's reading of them.
func FuzzDecodeJSONMatchesPdata(f *testing.F) {
	for _, td := range append(fuzzSeeds(f), benchTraces(f, 20)) {
		body, err := (&ptrace.JSONMarshaler{}).MarshalTraces(td)
		require.NoError(f, err)
		f.Add(body)
	}
	for _, q := range jsonQuirks {
		f.Add([]byte(q.body))
	}
	for _, n := range []string{"0", "-0", "1.5", "-.5", "01", "1e5", "1E+5", "1e-400", "0.1e39", "-", "9.", "1.2.3", "18446744073709551615"} {
		for _, field := range []string{`"x"`, `"intValue"`, `"doubleValue"`, `"kind"`} {
			f.Add([]byte(jsonSpan1(fmt.Sprintf(`,"attributes":[{"key":"k","value":{%s:%s}}],%s:%s`, field, n, field, n))))
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) { jsonMatch(t, body) })
}
