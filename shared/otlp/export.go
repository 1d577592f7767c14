package otlp

import (
	"iter"
	"math"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"google.golang.org/protobuf/encoding/protowire"
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
}

// Field numbers of Span.attributes and Span.events.
const (
	spanAttributes = 9
	spanEvents     = 11
)

// attributes returns the span's attributes.
func (sp *span) attributes() list { return list{msg: sp.msg, field: spanAttributes} }

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

// keyValue is an attribute.
type keyValue struct {
	key   string
	value value
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

// exportOf returns the Export of td, as decodeProtobuf decodes td's protobuf encoding: the
// fields Map reads, and the attributes and events of each span and the attributes of each
// resource written in wire form (a Span message holding only its attributes and events).
func exportOf(td ptrace.Traces) (*Export, error) {
	var w wireWriter
	x := &Export{resources: make([]resource, td.ResourceSpans().Len()), spans: td.SpanCount()}
	for i, rs := range td.ResourceSpans().All() {
		r := &x.resources[i]
		w.buf = w.buf[:0]
		if err := w.keyValues(1, rs.Resource().Attributes(), 4); err != nil {
			return nil, err
		}
		r.attrs = list{msg: string(w.buf), field: 1}
		r.scopes = make([]scope, rs.ScopeSpans().Len())
		for j, ss := range rs.ScopeSpans().All() {
			sc := &r.scopes[j]
			sc.name, sc.version = ss.Scope().Name(), ss.Scope().Version()
			sc.spans = make([]span, ss.Spans().Len())
			for k, sp := range ss.Spans().All() {
				w.buf = w.buf[:0]
				if err := w.keyValues(spanAttributes, sp.Attributes(), 5); err != nil {
					return nil, err
				}
				for _, e := range sp.Events().All() {
					if err := w.event(e); err != nil {
						return nil, err
					}
				}
				sc.spans[k] = span{
					traceID:       sp.TraceID(),
					spanID:        sp.SpanID(),
					parentSpanID:  sp.ParentSpanID(),
					name:          sp.Name(),
					start:         uint64(sp.StartTimestamp()),
					end:           uint64(sp.EndTimestamp()),
					statusCode:    int32(sp.Status().Code()),
					statusMessage: sp.Status().Message(),
					msg:           string(w.buf),
					events:        sp.Events().Len(),
				}
			}
		}
	}
	return x, nil
}

// wireWriter writes attributes and events in protobuf wire form.
type wireWriter struct {
	buf []byte
	tmp []byte // a value being written, to know its size
}

// keyValues writes the members of m as fields num (KeyValue messages), depth messages deep.
func (w *wireWriter) keyValues(num int, m pcommon.Map, depth int) error {
	buf, tmp := w.buf, w.tmp // locals: no write barrier for each append
	for k, v := range m.All() {
		var err error
		if tmp, err = appendAnyValue(tmp[:0], v, depth+1); err != nil {
			return err
		}
		buf = appendTag(buf, num, wireLen)
		buf = appendVarint(buf, uint64(1+protowire.SizeBytes(len(k))+1+protowire.SizeBytes(len(tmp))))
		buf = appendTag(buf, 1, wireLen)
		buf = appendLenString(buf, k)
		buf = appendTag(buf, 2, wireLen)
		buf = appendLenBytes(buf, tmp)
	}
	w.buf, w.tmp = buf, tmp
	return nil
}

// event writes e as a Span.events field holding its name and attributes.
func (w *wireWriter) event(e ptrace.SpanEvent) error {
	var body wireWriter
	body.tmp = w.tmp
	body.buf = appendTag(body.buf, 2, wireLen)
	body.buf = appendLenString(body.buf, e.Name())
	if err := body.keyValues(3, e.Attributes(), 6); err != nil {
		return err
	}
	w.tmp = body.tmp
	w.buf = appendTag(w.buf, spanEvents, wireLen)
	w.buf = appendLenBytes(w.buf, body.buf)
	return nil
}

// appendAnyValue appends the AnyValue message of v, depth messages deep.
func appendAnyValue(b []byte, v pcommon.Value, depth int) ([]byte, error) {
	if depth > maxProtoDepth {
		return nil, errTooDeep
	}
	switch v.Type() {
	case pcommon.ValueTypeStr:
		b = appendTag(b, 1, wireLen)
		return appendLenString(b, v.Str()), nil
	case pcommon.ValueTypeBool:
		b = appendTag(b, 2, wireVarint)
		return appendVarint(b, protowire.EncodeBool(v.Bool())), nil
	case pcommon.ValueTypeInt:
		b = appendTag(b, 3, wireVarint)
		return appendVarint(b, uint64(v.Int())), nil
	case pcommon.ValueTypeDouble:
		b = appendTag(b, 4, wireI64)
		return protowire.AppendFixed64(b, math.Float64bits(v.Double())), nil
	case pcommon.ValueTypeBytes:
		b = appendTag(b, 7, wireLen)
		return appendLenBytes(b, v.Bytes().AsRaw()), nil
	case pcommon.ValueTypeSlice:
		if depth+1 > maxProtoDepth {
			return nil, errTooDeep
		}
		var list []byte // an ArrayValue
		for _, e := range v.Slice().All() {
			elem, err := appendAnyValue(nil, e, depth+2)
			if err != nil {
				return nil, err
			}
			list = appendTag(list, 1, wireLen)
			list = appendLenBytes(list, elem)
		}
		b = appendTag(b, 5, wireLen)
		return appendLenBytes(b, list), nil
	case pcommon.ValueTypeMap:
		if depth+1 > maxProtoDepth {
			return nil, errTooDeep
		}
		var list wireWriter // a KeyValueList
		if err := list.keyValues(1, v.Map(), depth+2); err != nil {
			return nil, err
		}
		b = appendTag(b, 6, wireLen)
		return appendLenBytes(b, list.buf), nil
	}
	return b, nil // an empty value: no field
}

// appendTag appends the tag of field num (below 16: one byte) of wire type wt.
func appendTag(b []byte, num, wt int) []byte { return append(b, byte(num<<3|wt)) }

// appendVarint appends v as a varint.
func appendVarint(b []byte, v uint64) []byte {
	if v < 0x80 {
		return append(b, byte(v))
	}
	return protowire.AppendVarint(b, v)
}

// appendLenString appends the payload s of a length-delimited field.
func appendLenString(b []byte, s string) []byte { return append(appendVarint(b, uint64(len(s))), s...) }

// appendLenBytes appends the payload p of a length-delimited field.
func appendLenBytes(b []byte, p []byte) []byte { return append(appendVarint(b, uint64(len(p))), p...) }
