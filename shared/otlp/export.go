package otlp

import (
	"encoding/binary"
	"iter"
	"math"
)

// Export is a decoded OTLP trace export: what Map reads of it, in the order of the export.
//
// The fields of resources, scopes and spans that Map reads are decoded; attributes and events
// are left in their protobuf wire form (checked, as the whole export is, when it is decoded)
// and read where Map reads them: most attribute values are only copied into the span's
// attributes object, and wire form is compact. An Export decoded from OTLP/JSON holds the
// protobuf form of the same export.
//
// An Export does not share memory with the body it was decoded from, and is never modified
// once decoded: its strings may be shared by the spans Map returns.
type Export struct {
	resources []resource
	spans     int
}

// SpanCount returns the number of spans in the export.
func (x *Export) SpanCount() int { return x.spans }

// resource is one ResourceSpans: the resource's attributes and its scopes.
type resource struct {
	attrs  list
	scopes []scope
}

// scope is one ScopeSpans: the instrumentation scope's name and version (its attributes are
// not mapped) and its spans.
type scope struct {
	name, version string
	spans         []span
}

// span is what Map reads of a Span. Not read: kind, trace_state, flags, links and the dropped
// counts (MAPPING.md, "Not mapped").
type span struct {
	traceID              [16]byte
	spanID, parentSpanID [8]byte
	name                 string
	start, end           uint64 // Unix nanoseconds
	statusCode           int32
	statusMessage        string
	// msg is the Span message, where the attributes (field 9) and events (field 11) are.
	msg    string
	events int
	// msg[attrsFrom:attrsTo], when attrsTo > 0, runs from the first attributes field to the
	// end of the last: the attributes are read without skipping the span's other fields
	// (those between attributes fields, if any, are skipped).
	attrsFrom, attrsTo int32
}

// Field numbers of Span.attributes and Span.events.
const (
	spanAttributes = 9
	spanEvents     = 11
)

// attributes returns the span's attributes.
func (sp *span) attributes() list {
	if sp.attrsTo > 0 {
		return list{msg: sp.msg[sp.attrsFrom:sp.attrsTo], field: spanAttributes}
	}
	return list{msg: sp.msg, field: spanAttributes}
}

// allEvents returns the span's events, in order.
func (sp *span) allEvents() iter.Seq[event] {
	return func(yield func(event) bool) {
		if sp.events == 0 {
			return
		}
		for msg := range fields(sp.msg, spanEvents) {
			e, _ := readEvent(msg, checked)
			if !yield(e) {
				return
			}
		}
	}
}

// event is what Map reads of a span event.
type event struct {
	name  string
	attrs list
}

// list is a list of attributes (KeyValue messages), or the elements of an array value
// (AnyValue messages), in protobuf wire form: the fields number field of msg. msg may hold
// other fields, which are skipped.
type list struct {
	msg   string
	field int32
	array bool
}

// all returns the entries of l in order: key and value, the key empty for array elements.
func (l list) all() iter.Seq2[string, value] {
	return func(yield func(string, value) bool) {
		for msg := range fields(l.msg, l.field) {
			var (
				k string
				v value
			)
			if l.array {
				readAnyValue(msg, &v, checked)
			} else {
				k, v, _ = readKeyValue(msg, checked)
			}
			if !yield(k, v) {
				return
			}
		}
	}
}

// get returns the value of the first entry named key, as pcommon.Map.Get finds it.
func (l list) get(key string) (value, bool) {
	for k, v := range l.all() {
		if k == key {
			return v, true
		}
	}
	return value{}, false
}

// empty reports whether l has no entry.
func (l list) empty() bool {
	for range fields(l.msg, l.field) {
		return false
	}
	return true
}

// valueType is the type of an attribute value: which field of AnyValue is set.
type valueType uint8

// The value types. valueEmpty is an AnyValue with no field set (or one that Map does not
// read, as pcommon.Value reports it).
const (
	valueEmpty valueType = iota
	valueStr
	valueBool
	valueInt
	valueDouble
	valueBytes
	valueSlice
	valueMap
)

// value is an attribute value (AnyValue): scalars in place, an array or a key-value list in
// protobuf wire form.
type value struct {
	typ valueType
	// str is a string value, the raw bytes of a bytes value, or the ArrayValue or
	// KeyValueList message of an array or key-value list value.
	str string
	// num is an integer value (two's complement), the IEEE 754 bits of a double value, or 1
	// for a true bool value.
	num uint64
}

// Int returns an integer value.
func (v value) Int() int64 { return int64(v.num) }

// Double returns a double value.
func (v value) Double() float64 { return math.Float64frombits(v.num) }

// Bool returns a bool value.
func (v value) Bool() bool { return v.num != 0 }

// list returns the elements of an array value or the members of a key-value list value.
func (v value) list() list { return list{msg: v.str, field: 1, array: v.typ == valueSlice} }

// appendTag appends the tag of field num (below 16: one byte) of wire type wt.
func appendTag(b []byte, num, wt int) []byte { return append(b, byte(num<<3|wt)) }

// appendVarint appends v as a varint.
func appendVarint(b []byte, v uint64) []byte {
	if v < 0x80 {
		return append(b, byte(v))
	}
	return binary.AppendUvarint(b, v)
}

// appendLenBytes appends the payload p of a length-delimited field.
func appendLenBytes(b []byte, p []byte) []byte { return append(appendVarint(b, uint64(len(p))), p...) }
