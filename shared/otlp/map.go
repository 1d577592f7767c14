package otlp

import (
	"cmp"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/plumehq/plume/shared/bound"
	"github.com/plumehq/plume/shared/textcut"
	"github.com/plumehq/plume/shared/trace"
)

// maxReasons is how many rejection reasons Map keeps.
const maxReasons = 10

// Map converts every span of x into a Plume span of projectID (CreatedAt = UpdatedAt = now),
// by the rules of MAPPING.md. Spans that cannot be stored (an all-zero trace or span id, a
// missing name or start time, a time before 2000 or more than a day after now, an end before
// the start, a cost over bound.Cost's maximum) are counted in rejected with a short reason
// each (at most 10 reasons kept, each naming the span by its hex id). Nothing else rejects a
// span: values over Plume's limits are cut or dropped, and the cut is noted in the attribute
// plume.truncated.
//
// The spans satisfy trace.Span.Check, the invariants of trace.DecodeBatch's output, so they go
// to trace.Service.Ingest as they are: lowercase UUIDs, a name of 1 to trace.MaxNameLen bytes,
// times in UTC rounded to the microsecond, a kind of [a-z0-9_-], compact attributes of at most
// trace.MaxAttributeBytes, non-nil Tags, valid UTF-8 everywhere. Map makes them so by
// construction and does not call Check (the fuzz tests do, on every span mapped): a failed
// check at run time could only drop a span for a bug of Map's. The spans may share strings
// with x, which is never modified.
func Map(x *Export, projectID string, now time.Time) (spans []trace.Span, rejected int, reasons []string) {
	m := &mapper{projectID: projectID, now: now.UTC(), resourceLimit: resourceLimit(x.spans)}
	m.earliest, m.latest = timeRange(m.now)
	spans = make([]trace.Span, 0, x.spans)
	for i := range x.resources {
		r := &x.resources[i]
		m.setResource(r.attrs)
		for j := range r.scopes {
			sc := &r.scopes[j]
			m.setScope(sc.name, sc.version)
			for k := range sc.spans {
				sp := &sc.spans[k]
				// Mapped in place (a Span is large) into the next slot, which is zero: make
				// zeroed it, and a rejected span's slot is zeroed again before it is reused.
				// (Appending a zero Span would clear it once more, with write barriers.)
				if len(spans) < cap(spans) {
					spans = spans[:len(spans)+1]
				} else {
					spans = append(spans, trace.Span{})
				}
				if err := m.span(&spans[len(spans)-1], sp); err != nil {
					spans[len(spans)-1] = trace.Span{}
					spans = spans[:len(spans)-1]
					rejected++
					if len(reasons) < maxReasons {
						reasons = append(reasons, fmt.Sprintf("span %s: %v", hex.EncodeToString(sp.spanID[:]), err))
					}
				}
			}
		}
	}
	return spans, rejected, reasons
}

// mapper holds the state of one Map call: the current resource and scope, and buffers reused
// from span to span.
type mapper struct {
	projectID string
	now       time.Time

	resource     list
	resourceJSON []byte // the resource attributes as a JSON object; empty when there are none
	// resourceMembers are the resource attributes kept, encoded (built when needed), and
	// resourceDropped the keys of those dropped to keep resourceJSON within resourceLimit.
	resourceMembers []member
	resourceDropped []string
	resourceLimit   int    // resourceLimit of the export's span count
	scopeJSON       []byte // {"name":...,"version":...}; empty when both are
	// envelopeJSON is the resource and the scope as members of the attributes object, when
	// envelopeSet (envelope).
	envelopeJSON []byte
	envelopeSet  bool

	// bufs are the buffers each span's attrs borrows.
	bufs  attrBuffers
	ev    eventData
	notes notes
	// scratch is where a span's attributes object is built when it must be fitted.
	scratch []byte
	// arena holds the attributes of the spans mapped so far, one after the other: one
	// allocation for many spans, never moved (a full chunk is left to the spans that use
	// it). Each span's Attributes is a full slice expression of it, so that an append to one
	// never writes into the next.
	arena []byte
	// The values the optional fields of spans point to, allocated many at a time, each of
	// its own type so that a span takes only what it sets.
	strs   slab[string]
	times  slab[time.Time]
	floats slab[float64]
	ints   slab[int]
	usages slab[trace.LLMUsage]
	links  slab[trace.PromptLink]
	// earliest and latest are the span times CheckTime accepts at now, in Unix nanoseconds
	// (latest < earliest when they are not all int64 nanoseconds).
	earliest, latest int64
	// texts holds the text of span ids, one after the other (text).
	texts strings.Builder
	// lastTrace and lastTraceText are the last trace id and its text: the spans of a trace
	// mostly follow one another.
	lastTrace     [16]byte
	lastTraceText string
	// lastSession and lastSessionID are the last session id read and its Plume id: the spans
	// of an export mostly share a session, and uuid5 costs a SHA-1.
	lastSession, lastSessionID string
}

// arenaChunk is the size of the arena's chunks; arenaReserve the free space at the end of a
// chunk below which the next span's attributes are built in a new one.
const (
	arenaChunk   = 64 << 10
	arenaReserve = 4 << 10
)

// textChunk is the size of the buffers text writes into.
const textChunk = 16 << 10

// text returns b as a string. The strings share buffers of textChunk bytes: a
// strings.Builder's String shares its buffer, and what was written is never changed, only
// appended to (a full one is left to the strings that use it). One allocation for about 150
// spans' ids, where each span had its own.
func (m *mapper) text(b []byte) string {
	if m.texts.Cap()-m.texts.Len() < len(b) {
		m.texts = strings.Builder{}
		m.texts.Grow(max(textChunk, len(b)))
	}
	start := m.texts.Len()
	m.texts.Write(b)
	return m.texts.String()[start:]
}

// slabChunk is how many values a slab allocates at once.
const slabChunk = 64

// slab hands out pointers to values of type T, allocated slabChunk at a time: one allocation
// for many spans where each pointer field had its own.
type slab[T any] struct{ free []T }

// ref stores v in the slab and returns where.
func (s *slab[T]) ref(v T) *T {
	if len(s.free) == 0 {
		s.free = make([]T, slabChunk)
	}
	p := &s.free[0]
	s.free = s.free[1:]
	*p = v
	return p
}

// optional returns nil for an empty string, else a pointer to s.
func (m *mapper) optional(s string) *string {
	if s == "" {
		return nil
	}
	return m.strs.ref(s)
}

// free returns the arena's free space, to build a span's attributes in by appending to it;
// commit keeps them there.
func (m *mapper) free() []byte {
	if cap(m.arena)-len(m.arena) < arenaReserve {
		m.arena = make([]byte, 0, arenaChunk)
	}
	return m.arena[len(m.arena):len(m.arena)]
}

// commit keeps b, built by appending to free(), and returns it as a full slice expression.
func (m *mapper) commit(b []byte) []byte {
	if cap(b) != cap(m.arena)-len(m.arena) { // b outgrew the free space: append moved it
		return b[:len(b):len(b)]
	}
	start := len(m.arena)
	m.arena = m.arena[:start+len(b)]
	return m.arena[start:len(m.arena):len(m.arena)]
}

// keep copies b into the arena and returns the copy.
func (m *mapper) keep(b []byte) []byte {
	if len(b) > cap(m.arena)-len(m.arena) {
		m.arena = make([]byte, 0, max(arenaChunk, len(b)))
	}
	start := len(m.arena)
	m.arena = append(m.arena, b...)
	return m.arena[start:len(m.arena):len(m.arena)]
}

// maxResourceBytes bounds the resource object copied into the attributes of each span of the
// resource: the largest resource attributes are dropped (once per resource) beyond it, so that a
// large resource over many small spans cannot multiply its size.
const maxResourceBytes = 64 << 10

// resourceBudget bounds the resource objects copied into the spans of one export, together:
// the export's own bound (MaxExportBytes). Without it a 132 KB body of 1,000 small spans and a
// 64 KB resource mapped to 60 MB of span attributes, all of it kept in memory and written to
// S3, far more than any accepted body. With it, what an export stores is at most about twice
// its bound, whatever its resource.
const resourceBudget = MaxExportBytes

// resourceLimit is the most bytes of resource attributes copied into each of an export's
// spans: maxResourceBytes, or less when the export has so many spans that their copies would
// exceed resourceBudget. A resource as SDKs describe a service (service, SDK, host, process:
// under 2 KB) is copied whole into each of 1,000 spans (5 KB each).
func resourceLimit(spans int) int {
	return min(maxResourceBytes, resourceBudget/max(spans, 1))
}

// setResource makes attrs the resource attributes of the next spans, written as a JSON object.
func (m *mapper) setResource(attrs list) {
	m.resource = attrs
	m.envelopeSet = false
	m.resourceJSON = m.resourceJSON[:0]
	m.resourceMembers, m.resourceDropped = nil, nil
	if m.resource.empty() {
		return
	}
	m.resourceJSON = appendMap(m.resourceJSON, m.resource, 1)
	if len(m.resourceJSON) <= m.resourceLimit {
		return
	}
	members := m.resourceEntries()
	m.resourceJSON = append(m.resourceJSON[:0], '{')
	for _, mb := range members {
		m.resourceJSON = appendKey(m.resourceJSON, 0, mb.key)
		m.resourceJSON = append(m.resourceJSON, mb.value...)
	}
	m.resourceJSON = append(m.resourceJSON, '}')
}

// resourceEntries returns the resource attributes as members (the first of duplicate keys),
// without the largest ones when they take more than resourceLimit (recorded in
// resourceDropped).
func (m *mapper) resourceEntries() []member {
	if m.resourceMembers != nil || m.resource.empty() {
		return m.resourceMembers
	}
	var (
		seen    keySet
		members []member
		total   int
	)
	for k, v := range m.resource.all() {
		if seen.add(k) {
			mb := newMember(k, appendValue(nil, v, 2), true)
			members = append(members, mb)
			total += mb.size
		}
	}
	if total > m.resourceLimit {
		bySize := slices.Clone(members)
		slices.SortStableFunc(bySize, func(a, b member) int { return b.size - a.size })
		drop := map[string]bool{}
		for _, mb := range bySize {
			if total <= m.resourceLimit {
				break
			}
			drop[mb.key] = true
			total -= mb.size
			m.resourceDropped = append(m.resourceDropped, mb.key)
		}
		members = slices.DeleteFunc(members, func(mb member) bool { return drop[mb.key] })
	}
	m.resourceMembers = members
	return members
}

// setScope makes the instrumentation scope of the next spans the one of this name and version.
func (m *mapper) setScope(name, version string) {
	m.scopeJSON = m.scopeJSON[:0]
	m.envelopeSet = false
	if name == "" && version == "" {
		return
	}
	// Cut, as a scope name or version of more than a name's length means nothing, and the
	// scope is copied into every span of the scope.
	m.scopeJSON = append(m.scopeJSON, '{')
	if name != "" {
		m.scopeJSON = append(m.scopeJSON, `"name":`...)
		m.scopeJSON = appendString(m.scopeJSON, textcut.Prefix(name, trace.MaxNameLen))
	}
	if version != "" {
		if name != "" {
			m.scopeJSON = append(m.scopeJSON, ',')
		}
		m.scopeJSON = append(m.scopeJSON, `"version":`...)
		m.scopeJSON = appendString(m.scopeJSON, textcut.Prefix(version, trace.MaxNameLen))
	}
	m.scopeJSON = append(m.scopeJSON, '}')
}

// span maps sp into s (a zero Span); the error is the reason it is rejected.
func (m *mapper) span(s *trace.Span, sp *span) error {
	if sp.traceID == [16]byte{} {
		return errors.New("trace_id: all zero")
	}
	if sp.spanID == [8]byte{} {
		return errors.New("span_id: all zero")
	}
	if sp.name == "" {
		return errors.New("name: required")
	}
	if sp.start == 0 {
		return errors.New("start_time_unix_nano: required")
	}
	start, err := m.time("start_time_unix_nano", sp.start)
	if err != nil {
		return err
	}
	var end time.Time
	if sp.end != 0 {
		if end, err = m.time("end_time_unix_nano", sp.end); err != nil {
			return err
		}
		if end.Before(start) {
			return fmt.Errorf("end_time_unix_nano: %s is before start_time_unix_nano %s",
				end.Format(time.RFC3339Nano), start.Format(time.RFC3339Nano))
		}
	}

	s.ProjectID, s.CreatedAt, s.UpdatedAt, s.StartedAt = m.projectID, m.now, m.now, start
	if sp.traceID != m.lastTrace || m.lastTraceText == "" {
		var id [36]byte
		m.lastTrace, m.lastTraceText = sp.traceID, m.text(appendUUID(id[:0], sp.traceID))
	}
	s.TraceID = m.lastTraceText
	var ids [2 * 36]byte
	b := appendUUID(ids[:0], spanUUID(sp.spanID))
	if sp.parentSpanID != [8]byte{} {
		b = appendUUID(b, spanUUID(sp.parentSpanID))
	}
	idText := m.text(b)
	s.ID = idText[:36]
	if len(idText) > 36 {
		s.ParentSpanID = m.strs.ref(idText[36:])
	}
	if !end.IsZero() {
		s.EndedAt = m.times.ref(end)
		s.DurationMS = m.floats.ref(float64(end.Sub(start)) / float64(time.Millisecond))
	}

	m.notes = notes{}
	s.Name = m.cut("name", validUTF8(sp.name), trace.MaxNameLen)
	s.Status = m.strs.ref(statusOf(sp.statusCode))

	var a attrs // on the stack: see attrs
	a.borrow(&m.bufs)
	m.readAttributes(&a, sp.attributes())
	m.ev = eventData{}
	readEvents(sp, &m.ev)

	var llm llmAttrs
	s.Kind, llm.priced = a.kind()
	llm.provider = m.cut("provider", a.str(fProviderName, fGenAISystem, fLLMProvider, fLLMSystem, fProvider), trace.MaxNameLen)
	llm.model = m.cut("model", a.str(fResponseModel, fRequestModel, fLLMModelName, fLLMModel, fModel), trace.MaxNameLen)
	u, inOK, outOK := a.usage()
	llm.in, llm.inOK, llm.out, llm.outOK = u.InputTokens, inOK, u.OutputTokens, outOK
	if llm.model != "" && llm.priced {
		u.Provider, u.Model = llm.provider, llm.model
		s.LLM = m.usages.ref(u)
	}
	if c, ok, err := a.cost(); err != nil {
		a.giveBack(&m.bufs)
		return err
	} else if ok {
		s.Cost = m.floats.ref(c)
	}

	s.InputData = m.optional(m.cut("input_data", a.input(&m.ev), trace.MaxDataBytes))
	s.OutputData = m.optional(m.cut("output_data", a.output(&m.ev), trace.MaxDataBytes))

	m.session(s, &a)
	m.tags(s, &a)

	link, flat := a.link()
	if link != (trace.PromptLink{}) {
		s.Link = m.links.ref(link)
		if flat {
			llm.zeroeval = link
		}
	}

	m.errors(s, &a, sp.statusMessage)
	if path := a.str(fCodeFilepath, fCodeFilePath); path != "" {
		s.CodeFilepath = m.strs.ref(m.cut("code_filepath", path, trace.MaxErrorBytes))
	}
	if n, ok := a.count(fCodeLineno, fCodeLineNumber); ok && n <= math.MaxInt32 {
		s.CodeLineno = m.ints.ref(int(n))
	}

	s.Attributes = m.attributes(&a, sp.attributes(), &llm)
	a.giveBack(&m.bufs)
	return nil
}

// time converts an OTLP timestamp to a span time as trace.DecodeBatch stores it (UTC, rounded
// to the microsecond) and checks its range.
func (m *mapper) time(name string, ts uint64) (time.Time, error) {
	if ts > math.MaxInt64 {
		return time.Time{}, fmt.Errorf("%s: %d is out of range", name, ts)
	}
	// The common case in integers: rounded as Round rounds (halfway up; ts is not negative)
	// and within the range CheckTime accepts.
	if ns := int64(ts); ns <= math.MaxInt64-500 {
		if r := (ns + 500) / 1000 * 1000; r >= m.earliest && r <= m.latest {
			return time.Unix(0, r).UTC(), nil
		}
	}
	t := time.Unix(0, int64(ts)).Round(time.Microsecond).UTC()
	if err := trace.CheckTime(name, t, m.now); err != nil {
		return time.Time{}, err
	}
	return t, nil
}

// timeRange returns the earliest and the latest span time trace.CheckTime accepts at now, in
// Unix nanoseconds, or an empty range when the latest cannot be written so.
func timeRange(now time.Time) (earliest, latest int64) {
	last := now.Add(trace.MaxFutureSkew)
	if last.After(time.Unix(0, math.MaxInt64)) {
		return 0, -1
	}
	return trace.MinSpanTime.UnixNano(), last.UnixNano()
}

// cut returns s cut to at most max bytes (on a UTF-8 boundary), noting the field's original
// size when it cuts.
func (m *mapper) cut(field, s string, max int) string {
	if len(s) <= max {
		return s
	}
	m.notes.add(field, len(s))
	return textcut.Prefix(s, max)
}

// OTLP status codes (https://opentelemetry.io/docs/specs/otel/trace/api/#set-status).
const (
	statusCodeOK    = 1
	statusCodeError = 2
)

// statusOf returns the Plume status of an OTLP status code (unknown codes are unset).
func statusOf(c int32) string {
	switch c {
	case statusCodeOK:
		return trace.StatusOK
	case statusCodeError:
		return trace.StatusError
	}
	return trace.StatusUnset
}

// kind returns the span's kind (MAPPING.md, "Kind"), and false for agent and tool operations,
// whose token counts are not priced: they are the sum of the LLM calls under them.
func (a *attrs) kind() (string, bool) {
	if k := a.str(fOpenInferenceKind); k != "" {
		switch strings.ToUpper(k) {
		case "LLM", "EMBEDDING":
			return trace.KindLLM, true
		case "TOOL":
			return trace.KindTool, false
		case "RETRIEVER", "RERANKER":
			return trace.KindVectorStore, true
		case "AGENT":
			return trace.KindGeneric, false
		}
		return trace.KindGeneric, true
	}
	if op := a.str(fOperationName); op != "" {
		switch op {
		case "execute_tool":
			return trace.KindTool, false
		case "invoke_agent", "create_agent", "invoke_workflow":
			return trace.KindGeneric, false
		}
		return trace.KindLLM, true
	}
	if strings.EqualFold(a.str(fTraceloopKind), "tool") {
		return trace.KindTool, false
	}
	if a.str(fResponseModel, fRequestModel, fLLMModelName, fLLMModel) != "" || a.str(fLLMRequestType) != "" ||
		a.str(fModel) != "" && (a.has(fProvider) || a.has(fPlainInputTokens) || a.has(fPlainOutputTokens)) {
		return trace.KindLLM, true
	}
	if db := a.str(fDBSystemName, fDBSystem); db != "" {
		if vectorStores[strings.ToLower(db)] {
			return trace.KindVectorStore, true
		}
		return trace.KindDatabase, true
	}
	if a.has(fHTTPRequestMethod) || a.has(fHTTPMethod) {
		return trace.KindHTTP, true
	}
	return trace.KindGeneric, true
}

// vectorStores are the db.system values of vector databases.
var vectorStores = map[string]bool{
	"pinecone": true, "qdrant": true, "weaviate": true, "milvus": true, "chroma": true,
	"chromadb": true, "lancedb": true, "marqo": true, "vespa": true, "zilliz": true,
	"turbopuffer": true, "pgvector": true, "faiss": true,
}

// usage reads the token counts (MAPPING.md, "Usage"). Input counts include the cached and
// cache-write tokens and output counts the reasoning tokens, as trace.LLMUsage documents and
// as the semantic conventions say instrumentations SHOULD report them; when the parts exceed
// the total, the instrumentation counted them apart (Anthropic's raw usage) and they are added.
// inOK and outOK report whether any input or output count was given.
func (a *attrs) usage() (u trace.LLMUsage, inOK, outOK bool) {
	u.InputTokens, inOK = a.count(fInputTokens, fPromptTokens, fOIPromptTokens, fLLMInputTokens, fPlainInputTokens)
	u.OutputTokens, outOK = a.count(fOutputTokens, fCompletionTokens, fOICompletionTokens, fLLMOutputTokens, fPlainOutputTokens)
	cached, cachedOK := a.count(fCacheRead, fCacheReadOld, fInputCached, fOICacheRead)
	written, writtenOK := a.count(fCacheWrite, fCacheWriteOld, fInputCacheWrite, fOICacheWrite)
	reasoning, reasoningOK := a.count(fReasoning, fReasoningOld, fOutputReasoning, fOIReasoning)
	inOK = inOK || cachedOK || writtenOK
	outOK = outOK || reasoningOK
	if cached+written > u.InputTokens {
		u.InputTokens += cached + written
	}
	if reasoning > u.OutputTokens {
		u.OutputTokens += reasoning
	}
	u.CachedInputTokens = min(cached, u.InputTokens)
	u.CacheWriteTokens = min(written, u.InputTokens-u.CachedInputTokens)
	u.ReasoningTokens = min(reasoning, u.OutputTokens)
	return u, inOK, outOK
}

// cost returns the cost the caller supplied (gen_ai.usage.cost, llm.cost.total): a finite,
// non-negative number (others are ignored), checked and rounded by bound.Cost. A cost over
// bound.Cost's maximum rejects the span, as it does on POST /spans: storing it would overflow
// the trace's cost, and dropping it would price the span as if it had none.
func (a *attrs) cost() (float64, bool, error) {
	for _, f := range [...]struct {
		f    field
		name string
	}{{fCost, "gen_ai.usage.cost"}, {fOICost, "llm.cost.total"}} {
		if v, ok := a.get(f.f); ok {
			if c, ok := valueFloat(v); ok && c >= 0 {
				c, err := bound.Cost.Check(c)
				if err != nil {
					return 0, false, fmt.Errorf("%s: %v", f.name, err)
				}
				return c, true, nil
			}
		}
	}
	return 0, false, nil
}

// session sets SessionID, SessionName and SessionTags.
func (m *mapper) session(s *trace.Span, a *attrs) {
	id := a.str(fZeroevalSessionID, fSessionID, fConversationID)
	if id == "" {
		return
	}
	if id != m.lastSession || m.lastSessionID == "" {
		m.lastSession, m.lastSessionID = id, trace.SessionIDOf(id)
	}
	s.SessionID = m.strs.ref(m.lastSessionID)
	s.SessionName = m.optional(m.cut("session_name", a.str(fZeroevalSessionName, fSessionName), trace.MaxNameLen))
	if tv, ok := a.get(fZeroevalSessionTags); ok {
		var t tagSet
		t.add(tv)
		s.SessionTags = t.tags
		m.notes.tags += t.dropped
	}
}

// tags sets Tags and TraceTags.
func (m *mapper) tags(s *trace.Span, a *attrs) {
	var t tagSet
	if user := a.str(fUserID, fEndUserID); user != "" {
		t.put("user_id", user)
	}
	for _, f := range [...]field{fTagTags, fZeroevalTags} {
		if tv, ok := a.get(f); ok {
			t.add(tv)
		}
	}
	s.Tags = t.tags
	m.notes.tags += t.dropped
	if tv, ok := a.get(fZeroevalTraceTags); ok {
		var tt tagSet
		tt.add(tv)
		s.TraceTags = tt.tags
		m.notes.tags += tt.dropped
	}
}

// errors sets ErrorCode, ErrorMessage and ErrorStack from the status and the last exception
// event. An exception event makes the span fail (HasError) even when its status is unset.
func (m *mapper) errors(s *trace.Span, a *attrs, statusMessage string) {
	ev := &m.ev
	var code, msg, stack string
	if ev.exception {
		code, msg, stack = ev.exceptionType, ev.exceptionMessage, ev.stacktrace
		if code == "" && msg == "" {
			code = eventException
		}
	}
	if *s.Status == trace.StatusError {
		msg = cmp.Or(msg, validUTF8(statusMessage))
		code = cmp.Or(code, a.str(fErrorType))
	}
	s.ErrorCode = m.optional(m.cut("error_code", code, trace.MaxNameLen))
	s.ErrorMessage = m.optional(m.cut("error_message", msg, trace.MaxErrorBytes))
	s.ErrorStack = m.optional(m.cut("error_stack", stack, trace.MaxErrorBytes))
}
