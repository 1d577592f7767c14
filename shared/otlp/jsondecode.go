package otlp

import (
	"encoding/binary"
	"math"
	"slices"
	"unsafe"
)

// The OTLP/JSON decoder reads an export straight into an Export, token by token with
// jsonReader (pdata's reading, rule for rule), building no pdata objects: the fields Map reads
// are decoded, and attributes and events are written in protobuf wire form as they are read,
// as the protobuf decoder leaves them, so that Map reads both encodings alike. Each JSON
// member becomes the protobuf field it names, in order, and the protobuf reading of repeated
// fields is pdata's JSON reading of repeated members: a repeated key or value of a KeyValue
// (the last key; values merged), several fields of an AnyValue (the last counts), repeated
// attributes and events (added).
//
// The bound on nesting is the protobuf decoder's (maxProtoDepth, counted as there), where
// pdata has none.
//
// OTLP/JSON: https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding

// The names of SpanKind and Status.StatusCode values, in the order of their numbers.
var (
	spanKindNames   = []string{"SPAN_KIND_UNSPECIFIED", "SPAN_KIND_INTERNAL", "SPAN_KIND_SERVER", "SPAN_KIND_CLIENT", "SPAN_KIND_PRODUCER", "SPAN_KIND_CONSUMER"}
	statusCodeNames = []string{"STATUS_CODE_UNSET", "STATUS_CODE_OK", "STATUS_CODE_ERROR"}
)

// jsonDecoder holds an export being decoded. Strings and wire-form messages are appended to
// two buffers, and the decoded parts refer to them by offsets, so that the Export's strings
// are parts of the two buffers, made at the end (see export).
type jsonDecoder struct {
	r         jsonReader
	wire      []byte // spans' attributes and events, resources' attributes
	strs      []byte // names, versions, status messages
	resBuf    []byte // the attributes of the resource being read
	discard   []byte // attributes read only to be checked (of scopes and links)
	resources []jsonResource
	spans     []jsonSpan
	regular   int // spans of scopeSpans, counted as they are read
}

// ref is a part of one of the decoder's buffers.
type ref struct{ from, to int }

// jsonResource is a ResourceSpans being decoded.
type jsonResource struct {
	attrs               ref // in wire
	scopes, deprecated  []jsonScope
	deprecatedSpanCount int
}

// jsonScope is a ScopeSpans: its spans are spans[from:to] of the decoder.
type jsonScope struct {
	name, version ref // in strs
	from, to      int
}

// jsonSpan is a span whose strings are refs.
type jsonSpan struct {
	sp                  span
	name, statusMessage ref // in strs
	msg                 ref // in wire
}

// decodeJSON decodes an ExportTraceServiceRequest in OTLP/JSON.
func decodeJSON(body []byte) (*Export, error) {
	// Sized for exports as SDKs send them, whose wire form is about half their JSON, so that
	// the buffers rarely grow; a body larger than any the handler passes starts small, so
	// that one refused for its spans allocates no more than the largest accepted.
	wire := len(body) / 2
	if len(body) > MaxExportBytes {
		wire = 64 << 10
	}
	d := jsonDecoder{r: jsonReader{data: body}, wire: make([]byte, 0, wire), strs: make([]byte, 0, wire/8)}
	d.request()
	if d.r.err != nil {
		return nil, d.r.err
	}
	return d.export()
}

// export makes the Export of what was decoded: pdata's migration of deprecated scope spans
// applied (used when a resource has no scopeSpans), and every string a part of the buffers.
func (d *jsonDecoder) export() (*Export, error) {
	total := d.regular
	for i := range d.resources {
		if len(d.resources[i].scopes) == 0 {
			total += d.resources[i].deprecatedSpanCount
		}
	}
	if total > MaxSpansPerExport {
		return nil, errTooManySpans
	}
	// The buffers are the decoder's own and never written again: the Export's strings are
	// made of them without a copy.
	wire, strs := unsafe.String(unsafe.SliceData(d.wire), len(d.wire)), unsafe.String(unsafe.SliceData(d.strs), len(d.strs))
	at := func(s string, r ref) string { return s[r.from:r.to] }
	x := &Export{resources: make([]resource, len(d.resources)), spans: total}
	spans := make([]span, 0, total)
	scopes := 0
	for _, jr := range d.resources {
		scopes += max(len(jr.scopes), len(jr.deprecated))
	}
	allScopes := make([]scope, 0, scopes)
	for i, jr := range d.resources {
		x.resources[i].attrs = list{msg: at(wire, jr.attrs), field: 1}
		js := jr.scopes
		if len(js) == 0 {
			js = jr.deprecated
		}
		first := len(allScopes)
		for _, sc := range js {
			from := len(spans)
			for _, s := range d.spans[sc.from:sc.to] {
				s.sp.name, s.sp.statusMessage, s.sp.msg = at(strs, s.name), at(strs, s.statusMessage), at(wire, s.msg)
				spans = append(spans, s.sp)
			}
			allScopes = append(allScopes, scope{name: at(strs, sc.name), version: at(strs, sc.version), spans: spans[from:len(spans):len(spans)]})
		}
		x.resources[i].scopes = allScopes[first:len(allScopes):len(allScopes)]
	}
	return x, nil
}

// request reads an ExportTraceServiceRequest.
func (d *jsonDecoder) request() {
	r := &d.r
	for name, ok := r.readMember(); ok; name, ok = r.readMember() {
		switch string(name) {
		case "resourceSpans", "resource_spans":
			for r.readElement() {
				d.resourceSpans()
			}
		default:
			r.skip(0)
		}
	}
}

// resourceSpans reads a ResourceSpans.
func (d *jsonDecoder) resourceSpans() {
	r := &d.r
	var jr jsonResource
	d.resBuf = d.resBuf[:0]
	for name, ok := r.readMember(); ok; name, ok = r.readMember() {
		switch string(name) {
		case "resource":
			d.resource()
		case "scopeSpans", "scope_spans":
			for r.readElement() {
				jr.scopes = append(jr.scopes, d.scopeSpans(false))
			}
		case "schemaUrl", "schema_url":
			r.readString()
		case "deprecatedScopeSpans", "deprecated_scope_spans":
			for r.readElement() {
				sc := d.scopeSpans(true)
				jr.deprecated = append(jr.deprecated, sc)
				jr.deprecatedSpanCount += sc.to - sc.from
			}
		default:
			r.skip(0)
		}
		if !r.ok() {
			return
		}
	}
	jr.attrs = ref{len(d.wire), len(d.wire) + len(d.resBuf)}
	d.wire = append(d.wire, d.resBuf...)
	d.resources = append(d.resources, jr)
}

// resource reads a Resource; a repeated resource member adds its attributes.
func (d *jsonDecoder) resource() {
	r := &d.r
	for name, ok := r.readMember(); ok; name, ok = r.readMember() {
		switch string(name) {
		case "attributes":
			for r.readElement() {
				d.resBuf = d.keyValue(d.resBuf, 1, 4)
			}
		case "droppedAttributesCount", "dropped_attributes_count":
			r.readInt(32, false)
		case "entityRefs", "entity_refs":
			for r.readElement() {
				d.entityRef()
			}
		default:
			r.skip(0)
		}
	}
}

// entityRef reads an EntityRef: checked, not mapped.
func (d *jsonDecoder) entityRef() {
	r := &d.r
	for name, ok := r.readMember(); ok; name, ok = r.readMember() {
		switch string(name) {
		case "schemaUrl", "schema_url", "type":
			r.readString()
		case "idKeys", "id_keys", "descriptionKeys", "description_keys":
			for r.readElement() {
				r.readString()
			}
		default:
			r.skip(0)
		}
	}
}

// scopeSpans reads a ScopeSpans; deprecated tells one of deprecatedScopeSpans, whose spans
// are counted once the export is read (they are used only when there are no scopeSpans).
func (d *jsonDecoder) scopeSpans(deprecated bool) jsonScope {
	r := &d.r
	sc := jsonScope{from: len(d.spans)}
	for name, ok := r.readMember(); ok; name, ok = r.readMember() {
		switch string(name) {
		case "scope":
			d.scope(&sc)
		case "spans":
			for r.readElement() {
				if !deprecated {
					if d.regular++; d.regular > MaxSpansPerExport {
						r.err = errTooManySpans
						break
					}
				}
				d.span()
			}
		case "schemaUrl", "schema_url":
			r.readString()
		default:
			r.skip(0)
		}
	}
	sc.to = len(d.spans)
	return sc
}

// scope reads an InstrumentationScope into sc; its attributes are checked, not kept.
func (d *jsonDecoder) scope(sc *jsonScope) {
	r := &d.r
	for name, ok := r.readMember(); ok; name, ok = r.readMember() {
		switch string(name) {
		case "name":
			sc.name = d.str(r.readString())
		case "version":
			sc.version = d.str(r.readString())
		case "attributes":
			for r.readElement() {
				d.discard = d.keyValue(d.discard[:0], 3, 5)
			}
		case "droppedAttributesCount", "dropped_attributes_count":
			r.readInt(32, false)
		default:
			r.skip(0)
		}
	}
}

// str copies s into the strings buffer.
func (d *jsonDecoder) str(s []byte) ref {
	from := len(d.strs)
	d.strs = append(d.strs, s...)
	return ref{from, len(d.strs)}
}

// span reads a Span: its attributes and events written to wire as the Span message's fields.
func (d *jsonDecoder) span() {
	r := &d.r
	s := jsonSpan{msg: ref{from: len(d.wire)}}
	for name, ok := r.readMember(); ok; name, ok = r.readMember() {
		switch string(name) {
		case "traceId", "trace_id":
			r.readID(s.sp.traceID[:])
		case "spanId", "span_id":
			r.readID(s.sp.spanID[:])
		case "parentSpanId", "parent_span_id":
			r.readID(s.sp.parentSpanID[:])
		case "traceState", "trace_state":
			r.readString()
		case "name":
			s.name = d.str(r.readString())
		case "kind":
			r.readEnum(spanKindNames)
		case "startTimeUnixNano", "start_time_unix_nano":
			s.sp.start = r.readInt(64, false)
		case "endTimeUnixNano", "end_time_unix_nano":
			s.sp.end = r.readInt(64, false)
		case "attributes":
			for r.readElement() {
				d.wire = d.keyValue(d.wire, spanAttributes, 5)
			}
		case "events":
			for r.readElement() {
				d.event()
				s.sp.events++
			}
		case "links":
			for r.readElement() {
				d.link()
			}
		case "status":
			d.status(&s)
		case "flags", "droppedAttributesCount", "dropped_attributes_count", "droppedEventsCount",
			"dropped_events_count", "droppedLinksCount", "dropped_links_count":
			r.readInt(32, false)
		default:
			r.skip(0)
		}
	}
	s.msg.to = len(d.wire)
	d.spans = append(d.spans, s)
}

// event reads a Span.Event into a Span.events field: its name and attributes.
func (d *jsonDecoder) event() {
	r := &d.r
	d.wire, _ = appendTagLen(d.wire, spanEvents)
	at := len(d.wire)
	for name, ok := r.readMember(); ok; name, ok = r.readMember() {
		switch string(name) {
		case "timeUnixNano", "time_unix_nano":
			r.readInt(64, false)
		case "name":
			d.wire = appendTag(d.wire, 2, wireLen)
			d.wire = appendLenBytes(d.wire, r.readString())
		case "attributes":
			for r.readElement() {
				d.wire = d.keyValue(d.wire, 3, 6)
			}
		case "droppedAttributesCount", "dropped_attributes_count":
			r.readInt(32, false)
		default:
			r.skip(0)
		}
	}
	d.wire = endLen(d.wire, at)
}

// link reads a Span.Link: checked, not mapped.
func (d *jsonDecoder) link() {
	r := &d.r
	var (
		traceID [16]byte
		spanID  [8]byte
	)
	for name, ok := r.readMember(); ok; name, ok = r.readMember() {
		switch string(name) {
		case "traceId", "trace_id":
			r.readID(traceID[:])
		case "spanId", "span_id":
			r.readID(spanID[:])
		case "traceState", "trace_state":
			r.readString()
		case "attributes":
			for r.readElement() {
				d.discard = d.keyValue(d.discard[:0], 4, 6)
			}
		case "droppedAttributesCount", "dropped_attributes_count", "flags":
			r.readInt(32, false)
		default:
			r.skip(0)
		}
	}
}

// status reads a Status into s; a repeated status member sets only the fields it has.
func (d *jsonDecoder) status(s *jsonSpan) {
	r := &d.r
	for name, ok := r.readMember(); ok; name, ok = r.readMember() {
		switch string(name) {
		case "message":
			s.statusMessage = d.str(r.readString())
		case "code":
			s.sp.statusCode = r.readEnum(statusCodeNames)
		default:
			r.skip(0)
		}
	}
}

// keyValue reads a KeyValue, depth messages deep, and appends it to b as field num.
func (d *jsonDecoder) keyValue(b []byte, num, depth int) []byte {
	r := &d.r
	if depth > maxProtoDepth {
		r.tooDeep()
		return b
	}
	b, at := appendTagLen(b, num)
	for name, ok := r.readMember(); ok; name, ok = r.readMember() {
		switch string(name) {
		case "key":
			b = appendTag(b, 1, wireLen)
			b = appendLenBytes(b, r.readString())
		case "value":
			var vat int
			b, vat = appendTagLen(b, 2)
			b = d.anyValue(b, depth+1)
			b = endLen(b, vat)
		case "keyStrindex", "key_strindex":
			r.readInt(32, true)
		default:
			r.skip(0)
		}
	}
	return endLen(b, at)
}

// anyValue reads an AnyValue, depth messages deep, and appends its fields to b.
func (d *jsonDecoder) anyValue(b []byte, depth int) []byte {
	r := &d.r
	if depth > maxProtoDepth {
		r.tooDeep()
		return b
	}
	for name, ok := r.readMember(); ok; name, ok = r.readMember() {
		switch string(name) {
		case "stringValue", "string_value":
			b = appendTag(b, 1, wireLen)
			b = appendLenBytes(b, r.readString())
		case "boolValue", "bool_value":
			var v uint64
			if r.readBool() {
				v = 1
			}
			b = appendVarint(appendTag(b, 2, wireVarint), v)
		case "intValue", "int_value":
			b = appendVarint(appendTag(b, 3, wireVarint), r.readInt(64, true))
		case "doubleValue", "double_value":
			b = binary.LittleEndian.AppendUint64(appendTag(b, 4, wireI64), math.Float64bits(r.readDouble()))
		case "arrayValue", "array_value", "kvlistValue", "kvlist_value":
			if depth+1 > maxProtoDepth {
				r.tooDeep()
				return b
			}
			array := name[0] == 'a'
			num := 6
			if array {
				num = 5
			}
			var at int
			b, at = appendTagLen(b, num)
			b = d.list(b, array, depth+2)
			b = endLen(b, at)
		case "bytesValue", "bytes_value":
			var at int
			b, at = appendTagLen(b, 7)
			b = r.readBytes(b)
			b = endLen(b, at)
		case "stringValueStrindex", "string_value_strindex":
			b = appendVarint(appendTag(b, 8, wireVarint), r.readInt(32, true))
		default:
			r.skip(0)
		}
	}
	return b
}

// list reads an ArrayValue (array) or a KeyValueList, whose values are depth messages deep,
// and appends its values to b as fields 1.
func (d *jsonDecoder) list(b []byte, array bool, depth int) []byte {
	r := &d.r
	for name, ok := r.readMember(); ok; name, ok = r.readMember() {
		if string(name) != "values" {
			r.skip(0)
			continue
		}
		for r.readElement() {
			if !array {
				b = d.keyValue(b, 1, depth)
				continue
			}
			var at int
			b, at = appendTagLen(b, 1)
			b = d.anyValue(b, depth)
			b = endLen(b, at)
		}
	}
	return b
}

// appendTagLen appends the tag of a length-delimited field num and room for a length of one
// byte, and returns where the payload starts (for endLen).
func appendTagLen(b []byte, num int) ([]byte, int) {
	b = append(appendTag(b, num, wireLen), 0)
	return b, len(b)
}

// endLen writes the length of the payload that starts at at (appendTagLen) and runs to the
// end of b, moving the payload when its length takes more than one byte.
func endLen(b []byte, at int) []byte {
	n := len(b) - at
	if n < 0x80 {
		b[at-1] = byte(n)
		return b
	}
	var buf [binary.MaxVarintLen64]byte
	size := binary.PutUvarint(buf[:], uint64(n))
	b = slices.Insert(b, at, buf[1:size]...)
	copy(b[at-1:], buf[:size])
	return b
}
