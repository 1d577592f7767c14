package otlp

import (
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"unsafe"
)

// The protobuf decoder reads an export's wire form straight into an Export, without building
// pdata objects. It accepts exactly what the Collector's pdata (ptrace.ProtoUnmarshaler)
// accepts: the same checks on wire types, lengths and id sizes, the same merging of repeated
// message fields, unknown fields skipped the same way (its reading of varints and tags is
// pdata's, which is laxer than protowire's in two corners: varint bits beyond 64 are dropped,
// field numbers beyond int32 wrap). One difference: values nested more than maxProtoDepth
// messages deep are rejected, where pdata recurses until the stack overflows.
//
// Strings are not copied one by one: the body is copied once into a string, and every string
// of the Export is a part of it.
//
// Wire format: https://protobuf.dev/programming-guides/encoding/
// Messages: https://github.com/open-telemetry/opentelemetry-proto/blob/main/opentelemetry/proto/trace/v1/trace.proto

// maxProtoDepth bounds how deep messages nest, counted from the request: protobuf-go's default
// recursion limit. Only attribute values (arrays and key-value lists) nest that deep.
const maxProtoDepth = 10000

// Wire types.
const (
	wireVarint     = 0
	wireI64        = 1
	wireLen        = 2
	wireStartGroup = 3
	wireEndGroup   = 4
	wireI32        = 5
)

// Errors of the protobuf decoder (besides wrong wire types), as pdata words them.
var (
	errTruncated   = io.ErrUnexpectedEOF
	errOverflow    = errors.New("proto: integer overflow")
	errLength      = errors.New("proto: negative length found during unmarshaling")
	errEndGroup    = errors.New("proto: unexpected end of group")
	errTraceIDSize = errors.New("trace_id: must be 16 bytes")
	errSpanIDSize  = errors.New("span_id: must be 8 bytes")
	errTooDeep     = errors.New("proto: exceeded maximum recursion depth")
	errFieldNumber = errors.New("proto: illegal field number 0 or above 2^31")
)

// decodeProtobuf decodes an ExportTraceServiceRequest (or a TracesData, which has the same
// wire form) in the binary protobuf encoding. The Export's strings are body's bytes, not a
// copy of them: Decode's caller leaves body as it is.
func decodeProtobuf(body []byte) (*Export, error) {
	var d protoDecoder
	if err := d.request(unsafe.String(unsafe.SliceData(body), len(body))); err != nil {
		return nil, err
	}
	return &Export{resources: d.resources, spans: d.spans}, nil
}

// protoDecoder holds the export being decoded.
type protoDecoder struct {
	resources []resource
	scopes    []scope // the scopes of the resource being decoded are the last ones
	spans     int
}

// request decodes an ExportTraceServiceRequest.
func (d *protoDecoder) request(msg string) error {
	for pos := 0; pos < len(msg); {
		num, wt, next, err := readTag(msg, pos)
		if err != nil {
			return err
		}
		switch num {
		case 1: // resource_spans
			var sub string
			if sub, pos, err = lenField(msg, next, wt, "resource_spans"); err != nil {
				return err
			}
			err = d.resourceSpans(sub)
		default:
			pos, err = skipField(msg, next, wt)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// resourceSpans decodes a ResourceSpans.
func (d *protoDecoder) resourceSpans(msg string) error {
	var r resource
	first := len(d.scopes)
	for pos := 0; pos < len(msg); {
		num, wt, next, err := readTag(msg, pos)
		if err != nil {
			return err
		}
		var sub string
		switch num {
		case 1: // resource
			if sub, pos, err = lenField(msg, next, wt, "resource"); err != nil {
				return err
			}
			err = d.resource(sub, &r)
		case 2: // scope_spans
			if sub, pos, err = lenField(msg, next, wt, "scope_spans"); err != nil {
				return err
			}
			var sc scope
			if sc, err = readScopeSpans(sub, MaxSpansPerExport-d.spans); err == nil {
				d.scopes = append(d.scopes, sc)
				d.spans += len(sc.spans)
			}
		case 3: // schema_url
			_, pos, err = lenField(msg, next, wt, "schema_url")
		case 1000: // instrumentation_library_spans (OTLP before 0.15): checked, then dropped,
			// as ptrace.ProtoUnmarshaler drops it
			if sub, pos, err = lenField(msg, next, wt, "instrumentation_library_spans"); err != nil {
				return err
			}
			_, err = readScopeSpans(sub, math.MaxInt)
		default:
			pos, err = skipField(msg, next, wt)
		}
		if err != nil {
			return err
		}
	}
	r.scopes = d.scopes[first:len(d.scopes):len(d.scopes)]
	d.resources = append(d.resources, r)
	return nil
}

// resource decodes a Resource into r. A repeated resource field merges into the first, as
// protobuf merges messages: its attributes are added.
func (d *protoDecoder) resource(msg string, r *resource) error {
	for pos := 0; pos < len(msg); {
		num, wt, next, err := readTag(msg, pos)
		if err != nil {
			return err
		}
		var sub string
		switch num {
		case 1: // attributes
			if sub, pos, err = lenField(msg, next, wt, "attributes"); err != nil {
				return err
			}
			_, _, err = readKeyValue(sub, 4)
		case 2: // dropped_attributes_count
			pos, err = varintField(msg, next, wt, "dropped_attributes_count")
		case 3: // entity_refs
			if sub, pos, err = lenField(msg, next, wt, "entity_refs"); err != nil {
				return err
			}
			err = checkEntityRef(sub)
		default:
			pos, err = skipField(msg, next, wt)
		}
		if err != nil {
			return err
		}
	}
	// Merging two messages is reading their concatenation.
	r.attrs = list{msg: r.attrs.msg + msg, field: 1}
	return nil
}

// checkEntityRef checks an EntityRef: four string fields, not mapped.
func checkEntityRef(msg string) error {
	for pos := 0; pos < len(msg); {
		num, wt, next, err := readTag(msg, pos)
		if err != nil {
			return err
		}
		switch num {
		case 1, 2, 3, 4: // schema_url, type, id_keys, description_keys
			_, pos, err = lenField(msg, next, wt, "entity_refs")
		default:
			pos, err = skipField(msg, next, wt)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// readScopeSpans decodes a ScopeSpans of at most room spans: errTooManySpans, before any
// span is read, when it has more.
func readScopeSpans(msg string, room int) (scope, error) {
	var sc scope
	n := 0
	for range fields(msg, 2) { // spans, counted to allocate them at once, and to stop early
		n++
	}
	if n > room {
		return scope{}, errTooManySpans
	}
	if n > 0 {
		sc.spans = make([]span, 0, n)
	}
	for pos := 0; pos < len(msg); {
		num, wt, next, err := readTag(msg, pos)
		if err != nil {
			return scope{}, err
		}
		var sub string
		switch num {
		case 1: // scope
			if sub, pos, err = lenField(msg, next, wt, "scope"); err != nil {
				return scope{}, err
			}
			err = readScope(sub, &sc)
		case 2: // spans
			if sub, pos, err = lenField(msg, next, wt, "spans"); err != nil {
				return scope{}, err
			}
			var sp span
			if sp, err = readSpan(sub); err == nil {
				sc.spans = append(sc.spans, sp)
			}
		case 3: // schema_url
			_, pos, err = lenField(msg, next, wt, "schema_url")
		default:
			pos, err = skipField(msg, next, wt)
		}
		if err != nil {
			return scope{}, err
		}
	}
	return sc, nil
}

// readScope decodes an InstrumentationScope into sc; its attributes are checked, not kept.
func readScope(msg string, sc *scope) error {
	for pos := 0; pos < len(msg); {
		num, wt, next, err := readTag(msg, pos)
		if err != nil {
			return err
		}
		var sub string
		switch num {
		case 1: // name
			sc.name, pos, err = lenField(msg, next, wt, "scope.name")
		case 2: // version
			sc.version, pos, err = lenField(msg, next, wt, "scope.version")
		case 3: // attributes
			if sub, pos, err = lenField(msg, next, wt, "attributes"); err != nil {
				return err
			}
			_, _, err = readKeyValue(sub, 5)
		case 4: // dropped_attributes_count
			pos, err = varintField(msg, next, wt, "dropped_attributes_count")
		default:
			pos, err = skipField(msg, next, wt)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// readSpan decodes a Span.
func readSpan(msg string) (span, error) {
	sp := span{msg: msg}
	// The attributes lie from the first attributes field to the end of the last.
	attrsFrom, attrsTo := -1, 0
	for pos := 0; pos < len(msg); {
		num, wt, next, err := readTag(msg, pos)
		if err != nil {
			return span{}, err
		}
		var sub string
		switch num {
		case 1: // trace_id
			pos, err = traceIDField(msg, next, wt, &sp.traceID)
		case 2: // span_id
			pos, err = spanIDField(msg, next, wt, &sp.spanID)
		case 3: // trace_state
			_, pos, err = lenField(msg, next, wt, "trace_state")
		case 4: // parent_span_id
			pos, err = spanIDField(msg, next, wt, &sp.parentSpanID)
		case 5: // name
			sp.name, pos, err = lenField(msg, next, wt, "name")
		case 6, 10, 12, 14: // kind, dropped_attributes_count, dropped_events_count, dropped_links_count
			pos, err = varintField(msg, next, wt, "span")
		case 7: // start_time_unix_nano
			sp.start, pos, err = fixed64Field(msg, next, wt, "start_time_unix_nano")
		case 8: // end_time_unix_nano
			sp.end, pos, err = fixed64Field(msg, next, wt, "end_time_unix_nano")
		case spanAttributes:
			if attrsFrom < 0 {
				attrsFrom = pos
			}
			if sub, pos, err = lenField(msg, next, wt, "attributes"); err != nil {
				return span{}, err
			}
			attrsTo = pos
			_, _, err = readKeyValue(sub, 5)
		case spanEvents:
			if sub, pos, err = lenField(msg, next, wt, "events"); err != nil {
				return span{}, err
			}
			sp.events++
			_, err = readEvent(sub, 5)
		case 13: // links
			if sub, pos, err = lenField(msg, next, wt, "links"); err != nil {
				return span{}, err
			}
			err = checkLink(sub)
		case 15: // status
			if sub, pos, err = lenField(msg, next, wt, "status"); err != nil {
				return span{}, err
			}
			err = readStatus(sub, &sp)
		case 16: // flags
			pos, err = fixed32Field(msg, next, wt, "flags")
		default:
			pos, err = skipField(msg, next, wt)
		}
		if err != nil {
			return span{}, err
		}
	}
	if attrsFrom >= 0 {
		sp.attrsFrom, sp.attrsTo = int32(attrsFrom), int32(attrsTo)
	}
	return sp, nil
}

// readEvent reads a Span.Event, depth messages deep; checked when depth is not checked.
func readEvent(msg string, depth int) (event, error) {
	e := event{attrs: list{msg: msg, field: 3}}
	for pos := 0; pos < len(msg); {
		num, wt, next, err := readTag(msg, pos)
		if err != nil {
			return e, err
		}
		var sub string
		switch num {
		case 1: // time_unix_nano
			_, pos, err = fixed64Field(msg, next, wt, "time_unix_nano")
		case 2: // name
			e.name, pos, err = lenField(msg, next, wt, "event.name")
		case 3: // attributes
			if sub, pos, err = lenField(msg, next, wt, "attributes"); err != nil {
				return e, err
			}
			if depth != checked {
				_, _, err = readKeyValue(sub, depth+1)
			}
		case 4: // dropped_attributes_count
			pos, err = varintField(msg, next, wt, "dropped_attributes_count")
		default:
			pos, err = skipField(msg, next, wt)
		}
		if err != nil {
			return e, err
		}
	}
	return e, nil
}

// checkLink checks a Span.Link: links are not mapped.
func checkLink(msg string) error {
	var (
		traceID [16]byte
		spanID  [8]byte
	)
	for pos := 0; pos < len(msg); {
		num, wt, next, err := readTag(msg, pos)
		if err != nil {
			return err
		}
		var sub string
		switch num {
		case 1: // trace_id
			pos, err = traceIDField(msg, next, wt, &traceID)
		case 2: // span_id
			pos, err = spanIDField(msg, next, wt, &spanID)
		case 3: // trace_state
			_, pos, err = lenField(msg, next, wt, "trace_state")
		case 4: // attributes
			if sub, pos, err = lenField(msg, next, wt, "attributes"); err != nil {
				return err
			}
			_, _, err = readKeyValue(sub, 6)
		case 5: // dropped_attributes_count
			pos, err = varintField(msg, next, wt, "dropped_attributes_count")
		case 6: // flags
			pos, err = fixed32Field(msg, next, wt, "flags")
		default:
			pos, err = skipField(msg, next, wt)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// readStatus decodes a Status into sp. A repeated status field merges into the first: only
// the fields it has are set.
func readStatus(msg string, sp *span) error {
	for pos := 0; pos < len(msg); {
		num, wt, next, err := readTag(msg, pos)
		if err != nil {
			return err
		}
		switch num {
		case 2: // message
			sp.statusMessage, pos, err = lenField(msg, next, wt, "status.message")
		case 3: // code
			var code uint64
			code, pos, err = varintValue(msg, next, wt, "status.code")
			sp.statusCode = int32(code) // an enum is an int32
		default:
			pos, err = skipField(msg, next, wt)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// checked is the depth of a message that was checked when the export was decoded: reading it
// again does not check what is nested in it.
const checked = -1

// readKeyValue reads a KeyValue, depth messages deep (checked when depth is not checked).
func readKeyValue(msg string, depth int) (key string, v value, err error) {
	if depth > maxProtoDepth {
		return "", value{}, errTooDeep
	}
	if key, v, ok := readScalarKeyValue(msg); ok {
		return key, v, nil
	}
	for pos := 0; pos < len(msg); {
		num, wt, next, err := readTag(msg, pos)
		if err != nil {
			return "", value{}, err
		}
		var sub string
		switch num {
		case 1: // key
			key, pos, err = lenField(msg, next, wt, "key")
		case 2: // value
			if sub, pos, err = lenField(msg, next, wt, "value"); err != nil {
				return "", value{}, err
			}
			err = readAnyValue(sub, &v, deeper(depth))
		case 3: // key_strindex (profiles only)
			pos, err = varintField(msg, next, wt, "key_strindex")
		default:
			pos, err = skipField(msg, next, wt)
		}
		if err != nil {
			return "", value{}, err
		}
	}
	return key, v, nil
}

// readScalarKeyValue reads a KeyValue of the usual form as readKeyValue would: a key and a
// value of one field (a string, an integer, a double or a bool), in either order (protobuf-go
// writes the key first, pdata the value). false for any other form.
func readScalarKeyValue(msg string) (key string, v value, ok bool) {
	var hasKey, hasValue bool
	for pos := 0; pos < len(msg); {
		tag := msg[pos]
		n, start, err := readVarint(msg, pos+1)
		if err != nil || n > uint64(len(msg)-start) {
			return "", value{}, false
		}
		pos = start + int(n)
		switch {
		case tag == 1<<3|wireLen && !hasKey:
			key, hasKey = msg[start:pos], true
		case tag == 2<<3|wireLen && !hasValue:
			if v, ok = readScalar(msg[start:pos]); !ok {
				return "", value{}, false
			}
			hasValue = true
		default:
			return "", value{}, false
		}
	}
	return key, v, hasKey && hasValue
}

// readScalar reads an AnyValue of one scalar field, as readAnyValue would. false for any other
// form.
func readScalar(msg string) (value, bool) {
	if len(msg) < 2 {
		return value{}, false
	}
	switch msg[0] {
	case 1<<3 | wireLen: // string_value
		if n, start, err := readVarint(msg, 1); err == nil && n == uint64(len(msg)-start) {
			return value{typ: valueStr, str: msg[start:]}, true
		}
	case 2<<3 | wireVarint: // bool_value
		if n, next, err := readVarint(msg, 1); err == nil && next == len(msg) {
			return value{typ: valueBool, num: min(n, 1)}, true
		}
	case 3<<3 | wireVarint: // int_value
		if n, next, err := readVarint(msg, 1); err == nil && next == len(msg) {
			return value{typ: valueInt, num: n}, true
		}
	case 4<<3 | wireI64: // double_value
		if n, next, err := fixed64Field(msg, 1, wireI64, ""); err == nil && next == len(msg) {
			return value{typ: valueDouble, num: n}, true
		}
	}
	return value{}, false
}

// readAnyValue reads an AnyValue into v, depth messages deep (checked when depth is not
// checked: the arrays and key-value lists it holds, even one that a later field replaces).
// Of its fields (a oneof) the last one counts; a repeated value field merges into the first,
// so a value with no field keeps what v holds.
func readAnyValue(msg string, v *value, depth int) error {
	if depth > maxProtoDepth {
		return errTooDeep
	}
	for pos := 0; pos < len(msg); {
		num, wt, next, err := readTag(msg, pos)
		if err != nil {
			return err
		}
		var (
			s string
			n uint64
		)
		switch num {
		case 1: // string_value
			s, pos, err = lenField(msg, next, wt, "string_value")
			*v = value{typ: valueStr, str: s}
		case 2: // bool_value
			n, pos, err = varintValue(msg, next, wt, "bool_value")
			*v = value{typ: valueBool, num: min(n, 1)}
		case 3: // int_value
			n, pos, err = varintValue(msg, next, wt, "int_value")
			*v = value{typ: valueInt, num: n}
		case 4: // double_value
			n, pos, err = fixed64Field(msg, next, wt, "double_value")
			*v = value{typ: valueDouble, num: n}
		case 5, 6: // array_value, kvlist_value
			if s, pos, err = lenField(msg, next, wt, "value"); err != nil {
				return err
			}
			if depth != checked {
				err = checkList(s, num == 5, depth+1)
			}
			typ := valueSlice
			if num == 6 {
				typ = valueMap
			}
			*v = value{typ: typ, str: s}
		case 7: // bytes_value
			s, pos, err = lenField(msg, next, wt, "bytes_value")
			*v = value{typ: valueBytes, str: s}
		case 8: // string_value_strindex: a profiles string table index, an empty value elsewhere
			pos, err = varintField(msg, next, wt, "string_value_strindex")
			*v = value{}
		default:
			pos, err = skipField(msg, next, wt)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// checkList checks an ArrayValue, or a KeyValueList when array is false, depth messages deep.
func checkList(msg string, array bool, depth int) error {
	if depth > maxProtoDepth {
		return errTooDeep
	}
	for pos := 0; pos < len(msg); {
		num, wt, next, err := readTag(msg, pos)
		if err != nil {
			return err
		}
		if num != 1 { // values
			if pos, err = skipField(msg, next, wt); err != nil {
				return err
			}
			continue
		}
		var sub string
		if sub, pos, err = lenField(msg, next, wt, "values"); err != nil {
			return err
		}
		if array {
			var v value
			err = readAnyValue(sub, &v, depth+1)
		} else {
			_, _, err = readKeyValue(sub, depth+1)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// deeper returns the depth of a message nested in one depth deep.
func deeper(depth int) int {
	if depth == checked {
		return checked
	}
	return depth + 1
}

// fields returns the payloads of the length-delimited fields number field of msg, a message
// that was checked, in order.
func fields(msg string, field int32) iter.Seq[string] {
	return func(yield func(string) bool) {
		for pos := 0; pos < len(msg); {
			num, wt, next, err := readTag(msg, pos)
			if err != nil {
				return
			}
			if num != field {
				if pos, err = skipField(msg, next, wt); err != nil {
					return
				}
				continue
			}
			var sub string
			if sub, pos, err = lenField(msg, next, wt, ""); err != nil || !yield(sub) {
				return
			}
		}
	}
}

// readTag reads a field's tag at pos as pdata does: the field number is the tag shifted
// right by 3 and taken as an int32 (which must be positive), the wire type its low 3 bits.
func readTag(s string, pos int) (num int32, wt int, next int, err error) {
	if pos < len(s) && s[pos] >= 1<<3 && s[pos] < 0x80 { // one byte: field numbers 1 to 15
		return int32(s[pos] >> 3), int(s[pos] & 7), pos + 1, nil
	}
	return readLongTag(s, pos)
}

// readLongTag is readTag for tags of more than one byte (and errors).
func readLongTag(s string, pos int) (num int32, wt int, next int, err error) {
	tag, next, err := readVarint(s, pos)
	if err != nil {
		return 0, 0, 0, err
	}
	if num = int32(tag >> 3); num <= 0 {
		return 0, 0, 0, errFieldNumber
	}
	return num, int(tag & 7), next, nil
}

// readVarint reads a varint at pos as pdata does: at most 10 bytes, the bits beyond 64
// dropped.
func readVarint(s string, pos int) (uint64, int, error) {
	if pos < len(s) && s[pos] < 0x80 {
		return uint64(s[pos]), pos + 1, nil
	}
	var n uint64
	for shift := uint(0); shift < 64; shift += 7 {
		if pos >= len(s) {
			return 0, 0, errTruncated
		}
		b := s[pos]
		pos++
		n |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return n, pos, nil
		}
	}
	return 0, 0, errOverflow
}

// lenField reads a length-delimited field (a string, bytes or a message) of wire type wt at
// pos and returns its payload.
func lenField(s string, pos, wt int, field string) (string, int, error) {
	if wt == wireLen && pos < len(s) { // a length of one byte: up to 127
		if n := int(s[pos]); n < 0x80 && n < len(s)-pos {
			return s[pos+1 : pos+1+n], pos + 1 + n, nil
		}
	}
	return longLenField(s, pos, wt, field)
}

// longLenField is lenField for lengths of more than one byte (and errors).
func longLenField(s string, pos, wt int, field string) (string, int, error) {
	if wt != wireLen {
		return "", 0, wrongWireType(wt, field)
	}
	start, end, err := readLength(s, pos)
	if err != nil {
		return "", 0, err
	}
	return s[start:end], end, nil
}

// readLength reads a length at pos and returns where the payload it prefixes starts and ends.
func readLength(s string, pos int) (start, end int, err error) {
	n, pos, err := readVarint(s, pos)
	if err != nil {
		return 0, 0, err
	}
	length := int(n)
	if length < 0 {
		return 0, 0, errLength
	}
	end = pos + length
	if end < 0 || end > len(s) {
		return 0, 0, errTruncated
	}
	return pos, end, nil
}

// varintValue reads a varint field of wire type wt at pos.
func varintValue(s string, pos, wt int, field string) (uint64, int, error) {
	if wt != wireVarint {
		return 0, 0, wrongWireType(wt, field)
	}
	return readVarint(s, pos)
}

// varintField skips a varint field of wire type wt at pos.
func varintField(s string, pos, wt int, field string) (int, error) {
	_, next, err := varintValue(s, pos, wt, field)
	return next, err
}

// fixed64Field reads a fixed64 field of wire type wt at pos.
func fixed64Field(s string, pos, wt int, field string) (uint64, int, error) {
	if wt != wireI64 {
		return 0, 0, wrongWireType(wt, field)
	}
	if len(s)-pos < 8 {
		return 0, 0, errTruncated
	}
	b := s[pos : pos+8]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56, pos + 8, nil
}

// fixed32Field skips a fixed32 field of wire type wt at pos.
func fixed32Field(s string, pos, wt int, field string) (int, error) {
	if wt != wireI32 {
		return 0, wrongWireType(wt, field)
	}
	return skipFixed32(s, pos)
}

// skipFixed32 skips the payload of a fixed32 field at pos.
func skipFixed32(s string, pos int) (int, error) {
	if len(s)-pos < 4 {
		return 0, errTruncated
	}
	return pos + 4, nil
}

// traceIDField reads a trace id field of wire type wt at pos into id: 16 bytes, or none
// (all zero).
func traceIDField(s string, pos, wt int, id *[16]byte) (int, error) {
	b, next, err := lenField(s, pos, wt, "trace_id")
	if err != nil {
		return 0, err
	}
	switch len(b) {
	case 0:
		*id = [16]byte{}
	case 16:
		copy(id[:], b)
	default:
		return 0, errTraceIDSize
	}
	return next, nil
}

// spanIDField reads a span id field of wire type wt at pos into id: 8 bytes, or none (all
// zero).
func spanIDField(s string, pos, wt int, id *[8]byte) (int, error) {
	b, next, err := lenField(s, pos, wt, "span_id")
	if err != nil {
		return 0, err
	}
	switch len(b) {
	case 0:
		*id = [8]byte{}
	case 8:
		copy(id[:], b)
	default:
		return 0, errSpanIDSize
	}
	return next, nil
}

// skipField skips the payload of an unknown field of wire type wt at pos. This is pdata's
// algorithm, quirks included: a group ends at its first end-group tag of the same depth, or
// right after its first field that is not a group.
func skipField(s string, pos, wt int) (int, error) {
	depth := 0
	var err error
	for pos < len(s) {
		switch wt {
		case wireVarint:
			_, pos, err = readVarint(s, pos)
			return pos, err
		case wireI64:
			if len(s)-pos < 8 {
				return 0, errTruncated
			}
			return pos + 8, nil
		case wireLen:
			_, pos, err = readLength(s, pos)
			return pos, err
		case wireStartGroup:
			depth++
		case wireEndGroup:
			if depth == 0 {
				return 0, errEndGroup
			}
			depth--
		case wireI32:
			return skipFixed32(s, pos)
		default:
			return 0, fmt.Errorf("proto: illegal wire type %d", wt)
		}
		if depth == 0 {
			return pos, nil
		}
		if _, wt, pos, err = readTag(s, pos); err != nil {
			return 0, err
		}
	}
	return 0, errTruncated
}

// wrongWireType is the error of a known field sent with another wire type.
func wrongWireType(wt int, field string) error {
	return fmt.Errorf("proto: wrong wire type %d for field %s", wt, field)
}
