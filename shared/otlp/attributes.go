package otlp

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/plumehq/plume/shared/textcut"
	"github.com/plumehq/plume/shared/trace"
)

// Keys that Map writes into the attributes object besides the span's own attributes. A span
// attribute of the same name is left out when Map writes the key.
const (
	keyProvider     = "provider"
	keyModel        = "model"
	keyInputTokens  = "inputTokens"
	keyOutputTokens = "outputTokens"
	keyZeroeval     = "zeroeval"
	keyResource     = "resource"
	keyScope        = "scope"
	keyTruncated    = "plume.truncated"
)

// objectKeys records the keys of one attributes object, to drop duplicates: the keys Map
// writes itself (keyProvider to keyTruncated) as bits, claimed for every span without hashing
// them, and the span's other attribute keys in a keySet.
type objectKeys struct {
	reserved uint8 // bit reservedBit(k) for each key k of Map's own taken
	others   keySet
}

// reset empties the set, keeping its memory.
func (o *objectKeys) reset() {
	o.reserved = 0
	o.others.reset()
}

// add adds key and reports whether it was new.
func (o *objectKeys) add(key string) bool {
	if bit := reservedBit(key); bit != 0 {
		if o.reserved&bit != 0 {
			return false
		}
		o.reserved |= bit
		return true
	}
	return o.others.add(key)
}

// reservedBit returns the bit of one of the keys Map writes itself, 0 for other keys.
func reservedBit(key string) uint8 {
	switch key {
	case keyProvider:
		return 1 << 0
	case keyModel:
		return 1 << 1
	case keyInputTokens:
		return 1 << 2
	case keyOutputTokens:
		return 1 << 3
	case keyZeroeval:
		return 1 << 4
	case keyResource:
		return 1 << 5
	case keyScope:
		return 1 << 6
	case keyTruncated:
		return 1 << 7
	}
	return 0
}

// llmAttrs is what Map writes under the keys POST /spans reads (COMPAT.md, "Span ingestion"),
// so that downstream readers of attributes see OTLP spans as SDK spans.
type llmAttrs struct {
	provider, model string
	in, out         int64
	inOK, outOK     bool
	// priced is false for spans whose tokens are not priced (agent and tool operations).
	priced bool
	// zeroeval, when not zero, is written as attributes.zeroeval: the prompt link came from
	// flattened zeroeval.<key> attributes only.
	zeroeval trace.PromptLink
}

// notes records what Map cut or dropped from one span, written as attributes.plume.truncated:
// for each cut field its original size in bytes, the number of tags dropped, and the
// attributes dropped to fit trace.MaxAttributeBytes.
type notes struct {
	fields      []noteField
	tags        int
	dropped     int
	droppedKeys []string
}

// noteField is a cut field and its original size in bytes.
type noteField struct {
	name string
	size int
}

// maxNotedKeys and maxNotedKeyLen bound the dropped attribute keys listed in a note.
const (
	maxNotedKeys   = 8
	maxNotedKeyLen = 64
	// noteReserve is room kept for the note when attributes are dropped to fit: a note is
	// at most ~200 bytes plus maxNotedKeys keys of at most 6*maxNotedKeyLen escaped bytes.
	noteReserve = 4096
)

// add notes that field was cut from size bytes.
func (n *notes) add(field string, size int) { n.fields = append(n.fields, noteField{field, size}) }

// empty reports whether nothing was cut.
func (n *notes) empty() bool { return len(n.fields) == 0 && n.tags == 0 && n.dropped == 0 }

// appendJSON appends the note as the JSON object of attributes.plume.truncated.
func (n *notes) appendJSON(b []byte) []byte {
	b = append(b, '{')
	comma := false
	member := func(key string) {
		if comma {
			b = append(b, ',')
		}
		comma = true
		b = appendString(b, key)
		b = append(b, ':')
	}
	for _, f := range n.fields {
		member(f.name)
		b = strconv.AppendInt(b, int64(f.size), 10)
	}
	if n.tags > 0 {
		member("tags")
		b = strconv.AppendInt(b, int64(n.tags), 10)
	}
	if n.dropped > 0 {
		member("attributes")
		b = append(b, `{"dropped":`...)
		b = strconv.AppendInt(b, int64(n.dropped), 10)
		b = append(b, `,"keys":[`...)
		for i, k := range n.droppedKeys {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, textcut.Prefix(k, maxNotedKeyLen))
		}
		b = append(b, "]}"...)
	}
	return append(b, '}')
}

// attributes returns the span's attributes object (MAPPING.md, "Attributes"): the keys of
// llm, then the span's attributes in their order (the first of duplicate keys), the resource
// attributes under "resource", the scope under "scope", and the note of what was cut under
// "plume.truncated". When the object is larger than trace.MaxAttributeBytes, the largest
// values are dropped (fit). The span's own members were written as its attributes were read
// (readAttributes): they are copied, with those named as Map's own keys put in their place
// when Map did not write the key.
func (m *mapper) attributes(a *attrs, attrs list, llm *llmAttrs) []byte {
	for _, k := range m.resourceDropped {
		m.notes.noteDropped(k, true)
	}
	if a.over {
		return m.fit(a, attrs, llm)
	}
	b := m.free()
	const start = 0
	b = append(b, '{')
	b = m.appendFixed(a, b, llm)
	if llm.zeroeval != (trace.PromptLink{}) {
		a.keys.add(keyZeroeval)
		b = appendKey(b, start, keyZeroeval)
		z, _ := json.Marshal(llm.zeroeval)
		b = append(b, z...)
	}
	at := 0
	for _, p := range a.pending {
		b = appendMembers(b, start, a.body[at:p.at])
		at = p.at
		if a.keys.add(p.key) {
			if len(b) > start+1 {
				b = append(b, ',')
			}
			b = append(b, '"')
			b = append(b, p.key...)
			b = append(b, '"', ':')
			b = appendAttribute(b, p.key, p.value)
		}
	}
	b = appendMembers(b, start, a.body[at:])
	if env := m.envelope(); len(env) > 0 {
		if len(b) > start+1 {
			b = append(b, ',')
		}
		b = append(b, env...)
	}
	if !m.notes.empty() {
		b = appendKey(b, start, keyTruncated)
		b = m.notes.appendJSON(b)
	}
	b = append(b, '}')
	if len(b) > trace.MaxAttributeBytes {
		return m.fit(a, attrs, llm)
	}
	return m.commit(b)
}

// appendMembers appends members, each written after a comma, to the object that starts at
// start: without the first comma when the object has no member yet.
func appendMembers(b []byte, start int, members []byte) []byte {
	if len(members) == 0 {
		return b
	}
	if len(b) == start+1 {
		members = members[1:]
	}
	return append(b, members...)
}

// envelope returns the members "resource" and "scope" of the attributes objects of the
// current scope's spans (those that are not empty), written once for them all.
func (m *mapper) envelope() []byte {
	if m.envelopeSet {
		return m.envelopeJSON
	}
	b := m.envelopeJSON[:0]
	if len(m.resourceJSON) > 0 {
		b = append(b, `"`+keyResource+`":`...)
		b = append(b, m.resourceJSON...)
	}
	if len(m.scopeJSON) > 0 {
		if len(b) > 0 {
			b = append(b, ',')
		}
		b = append(b, `"`+keyScope+`":`...)
		b = append(b, m.scopeJSON...)
	}
	m.envelopeJSON, m.envelopeSet = b, true
	return b
}

// appendKey appends a comma when the object that starts at start has members, then key and
// a colon.
func appendKey(b []byte, start int, key string) []byte {
	if len(b) > start+1 {
		b = append(b, ',')
	}
	b = appendString(b, key)
	return append(b, ':')
}

// appendFixed appends the members of llm (b holds the object's opening brace only) and adds
// their keys to a.keys.
func (m *mapper) appendFixed(a *attrs, b []byte, llm *llmAttrs) []byte {
	start := len(b) - 1
	if llm.provider != "" {
		a.keys.add(keyProvider)
		b = appendKey(b, start, keyProvider)
		b = appendString(b, llm.provider)
	}
	if llm.model != "" {
		a.keys.add(keyModel)
		b = appendKey(b, start, keyModel)
		b = appendString(b, llm.model)
	}
	if llm.inOK {
		a.keys.add(keyInputTokens)
		b = appendKey(b, start, keyInputTokens)
		b = strconv.AppendInt(b, llm.in, 10)
	}
	if llm.outOK {
		a.keys.add(keyOutputTokens)
		b = appendKey(b, start, keyOutputTokens)
		b = strconv.AppendInt(b, llm.out, 10)
	}
	return b
}

// appendAttribute appends the value of the span attribute k. The zeroeval attribute, when it is
// a JSON object in a string (as the SDK integrations may set it), is written as that object,
// which is where POST /spans has it.
func appendAttribute(b []byte, k string, v value) []byte {
	if k == keyZeroeval && v.typ == valueStr {
		if obj, ok := compactJSONObject(v.str); ok {
			return append(b, obj...)
		}
	}
	return appendValue(b, v, 1)
}

// member is one member of an attributes object being fitted.
type member struct {
	key      string
	value    []byte
	resource bool // a member of the resource object
	size     int  // bytes it takes in the object, comma included
}

// newMember returns the member key: value (value is JSON) with its size.
func newMember(key string, value []byte, resource bool) member {
	return member{key: key, value: value, resource: resource, size: len(appendString(nil, key)) + 1 + len(value) + 1}
}

// noteDropped records an attribute dropped to fit (a resource attribute as resource.<key>).
func (n *notes) noteDropped(key string, resource bool) {
	n.dropped++
	if len(n.droppedKeys) < maxNotedKeys {
		if resource {
			key = keyResource + "." + key
		}
		n.droppedKeys = append(n.droppedKeys, key)
	}
}

// fit builds an attributes object of at most trace.MaxAttributeBytes by dropping the largest
// span and resource attributes (and the scope) first. The keys of llm are never dropped: they
// are small (trace.MaxNameLen at most).
func (m *mapper) fit(a *attrs, attrs list, llm *llmAttrs) []byte {
	var members []member
	add := func(key string, value []byte, resource bool) {
		members = append(members, newMember(key, value, resource))
	}
	var fixed []byte
	a.keys.reset()
	fixed = m.appendFixed(a, append(fixed, '{'), llm)
	if llm.zeroeval != (trace.PromptLink{}) {
		a.keys.add(keyZeroeval)
		z, _ := json.Marshal(llm.zeroeval)
		add(keyZeroeval, z, false)
	}
	m.reserveEnvelopeKeys(a)
	// The first attribute of each key: a field's is known from its name, other keys (and
	// the fields named as one of Map's own keys, which Map may have written) are looked up.
	var seen [numFields]bool
	for k, v := range attrs.all() {
		switch f := fieldOf(k); f {
		case fNone, fProvider, fModel, fPlainInputTokens, fPlainOutputTokens, fZeroeval:
			if !a.keys.add(k) {
				continue
			}
		default:
			if seen[f] {
				continue
			}
			seen[f] = true
		}
		add(k, appendAttribute(nil, k, v), false)
	}
	members = append(members, m.resourceEntries()...)
	scope := -1
	if len(m.scopeJSON) > 0 {
		scope = len(members)
		add(keyScope, m.scopeJSON, false)
	}

	total := len(fixed) + len(`,"resource":{},`) + 1
	for _, mb := range members {
		total += mb.size
	}
	bySize := make([]int, len(members))
	for i := range bySize {
		bySize[i] = i
	}
	slices.SortStableFunc(bySize, func(i, j int) int { return members[j].size - members[i].size })
	dropped := make([]bool, len(members))
	budget := trace.MaxAttributeBytes - noteReserve
	for _, i := range bySize {
		if total <= budget {
			break
		}
		dropped[i] = true
		total -= members[i].size
		m.notes.noteDropped(members[i].key, members[i].resource)
	}

	b := m.scratch[:0]
	const start = 0
	b = append(b, fixed...)
	hasResource := false
	for i, mb := range members {
		if dropped[i] || i == scope {
			continue
		}
		if mb.resource {
			hasResource = true
			continue
		}
		b = appendKey(b, start, mb.key)
		b = append(b, mb.value...)
	}
	if hasResource {
		b = appendKey(b, start, keyResource)
		rstart := len(b)
		b = append(b, '{')
		for i, mb := range members {
			if mb.resource && !dropped[i] {
				b = appendKey(b, rstart, mb.key)
				b = append(b, mb.value...)
			}
		}
		b = append(b, '}')
	}
	if scope >= 0 && !dropped[scope] {
		b = appendKey(b, start, keyScope)
		b = append(b, m.scopeJSON...)
	}
	b = appendKey(b, start, keyTruncated)
	b = m.notes.appendJSON(b)
	b = append(b, '}')
	m.scratch = b
	return m.keep(b)
}

// reserveEnvelopeKeys marks the keys Plume writes itself around the span's own attributes
// (resource, scope, plume.truncated) as taken, so that an attribute of the same name is left
// out instead of written twice.
func (m *mapper) reserveEnvelopeKeys(a *attrs) {
	if len(m.resourceJSON) > 0 {
		a.keys.add(keyResource)
	}
	if len(m.scopeJSON) > 0 {
		a.keys.add(keyScope)
	}
	a.keys.add(keyTruncated)
}
