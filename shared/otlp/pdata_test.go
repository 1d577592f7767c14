package otlp

import (
	"math"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"google.golang.org/protobuf/encoding/protowire"
)

// The tests' oracle: the Export of what pdata decodes, as the OTLP/JSON decoder made it before
// it read JSON itself.

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

// appendLenString appends the payload s of a length-delimited field.
func appendLenString(b []byte, s string) []byte { return append(appendVarint(b, uint64(len(s))), s...) }
