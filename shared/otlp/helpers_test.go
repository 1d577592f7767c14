package otlp

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/plumehq/plume/shared/trace"
)

// testNow is the server clock of the tests; testStart is a little before it.
var (
	testNow   = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	testStart = time.Date(2025, 6, 1, 11, 59, 0, 123456789, time.UTC)
)

const testProject = "proj-1"

func traceIDOf(t testing.TB, s string) pcommon.TraceID {
	t.Helper()
	b, err := hex.DecodeString(s)
	require.NoError(t, err)
	require.Len(t, b, 16)
	return pcommon.TraceID(b)
}

func spanIDOf(t testing.TB, s string) pcommon.SpanID {
	t.Helper()
	b, err := hex.DecodeString(s)
	require.NoError(t, err)
	require.Len(t, b, 8)
	return pcommon.SpanID(b)
}

// mapTraces maps td as the OTLP endpoint maps its protobuf encoding: Decode, then Map. It
// checks that the export built from td itself, as for OTLP/JSON, maps to the same spans.
func mapTraces(t testing.TB, td ptrace.Traces) (spans []trace.Span, rejected int, reasons []string) {
	t.Helper()
	body, err := (&ptrace.ProtoMarshaler{}).MarshalTraces(td)
	require.NoError(t, err)
	x, err := Decode(body, ContentTypeProtobuf)
	require.NoError(t, err)
	spans, rejected, reasons = Map(x, testProject, testNow)
	fromTraces, err := exportOf(td)
	require.NoError(t, err)
	wantSpans, wantRejected, wantReasons := Map(fromTraces, testProject, testNow)
	assert.Equal(t, wantSpans, spans)
	assert.Equal(t, wantRejected, rejected)
	assert.Equal(t, wantReasons, reasons)
	return spans, rejected, reasons
}

// oneSpan returns traces holding one span with the given attributes (pcommon.Map.FromRaw
// values), under a resource with service.name and a scope.
func oneSpan(t testing.TB, attrs map[string]any) (ptrace.Traces, ptrace.Span) {
	t.Helper()
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "svc")
	ss := rs.ScopeSpans().AppendEmpty()
	ss.Scope().SetName("test-scope")
	ss.Scope().SetVersion("1.0.0")
	sp := ss.Spans().AppendEmpty()
	sp.SetTraceID(traceIDOf(t, "0af7651916cd43dd8448eb211c80319c"))
	sp.SetSpanID(spanIDOf(t, "b7ad6b7169203331"))
	sp.SetName("span")
	sp.SetStartTimestamp(pcommon.NewTimestampFromTime(testStart))
	sp.SetEndTimestamp(pcommon.NewTimestampFromTime(testStart.Add(1500 * time.Millisecond)))
	require.NoError(t, sp.Attributes().FromRaw(attrs))
	return td, sp
}

var (
	uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	kindRE = regexp.MustCompile(`^[a-z0-9_-]{1,64}$`)
)

// checkSpan asserts that s satisfies every invariant of trace.DecodeBatch's output, and that
// POST /spans reads the span back as it is: the span written as JSON (AppendJSON, the stored
// record) and decoded by DecodeBatch is accepted and equal field by field.
func checkSpan(t testing.TB, s trace.Span, now time.Time) {
	t.Helper()
	assert.NoError(t, s.Check(now))
	assert.Regexp(t, uuidRE, s.ID)
	assert.Regexp(t, uuidRE, s.TraceID)
	if s.ParentSpanID != nil {
		assert.Regexp(t, uuidRE, *s.ParentSpanID)
	}
	assert.Equal(t, testProject, s.ProjectID)
	assert.NotEmpty(t, s.Name)
	assert.LessOrEqual(t, len(s.Name), trace.MaxNameLen)
	assert.Regexp(t, kindRE, s.Kind)
	if s.Status != nil {
		assert.Contains(t, []string{trace.StatusUnset, trace.StatusOK, trace.StatusError}, *s.Status)
	}
	minTime := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	checkTime := func(tm time.Time) {
		assert.Equal(t, time.UTC, tm.Location())
		assert.Equal(t, tm, tm.Round(time.Microsecond))
		assert.False(t, tm.Before(minTime), "time %s before 2000", tm)
		assert.False(t, tm.After(now.Add(24*time.Hour)), "time %s in the future", tm)
	}
	checkTime(s.StartedAt)
	if s.EndedAt != nil {
		checkTime(*s.EndedAt)
		assert.False(t, s.EndedAt.Before(s.StartedAt))
		require.NotNil(t, s.DurationMS)
		assert.Equal(t, float64(s.EndedAt.Sub(s.StartedAt))/float64(time.Millisecond), *s.DurationMS)
	}
	if s.Cost != nil {
		assert.False(t, math.IsNaN(*s.Cost) || math.IsInf(*s.Cost, 0) || *s.Cost < 0)
	}
	for _, d := range []*string{s.InputData, s.OutputData} {
		if d != nil {
			assert.NotEmpty(t, *d)
			assert.LessOrEqual(t, len(*d), trace.MaxDataBytes)
			assert.True(t, utf8.ValidString(*d))
		}
	}
	assert.True(t, json.Valid(s.Attributes), "attributes: %s", s.Attributes)
	assert.True(t, utf8.Valid(s.Attributes))
	assert.True(t, bytes.HasPrefix(s.Attributes, []byte("{")))
	var compact bytes.Buffer
	require.NoError(t, json.Compact(&compact, s.Attributes))
	assert.Equal(t, compact.String(), string(s.Attributes))
	assert.LessOrEqual(t, len(s.Attributes), trace.MaxAttributeBytes)
	assert.Equal(t, len(s.Attributes), cap(s.Attributes), "attributes must not share capacity")
	for _, tags := range []trace.Tags{s.Tags, s.TraceTags, s.SessionTags} {
		assert.LessOrEqual(t, len(tags), trace.MaxTagKeys)
		assert.True(t, slices.IsSortedFunc(tags, func(a, b trace.Tag) int { return strings.Compare(a.Key, b.Key) }), "tags in key order")
		for k, v := range tags.All() {
			assert.True(t, len(k) >= 1 && len(k) <= trace.MaxTagKeyLen && utf8.ValidString(k), "tag key %q", k)
			assert.True(t, len(v) <= trace.MaxTagValueLen && utf8.ValidString(v), "tag value %q", v)
		}
	}
	for _, f := range []struct {
		p   *string
		max int
	}{{s.ErrorCode, trace.MaxNameLen}, {s.ErrorMessage, trace.MaxErrorBytes}, {s.ErrorStack, trace.MaxErrorBytes},
		{s.CodeFilepath, trace.MaxErrorBytes}, {s.SessionName, trace.MaxNameLen}} {
		if f.p != nil {
			assert.NotEmpty(t, *f.p)
			assert.LessOrEqual(t, len(*f.p), f.max)
			assert.True(t, utf8.ValidString(*f.p))
		}
	}
	if s.CodeLineno != nil {
		assert.GreaterOrEqual(t, *s.CodeLineno, 0)
	}
	if s.SessionID != nil {
		assert.Regexp(t, uuidRE, *s.SessionID)
	} else {
		assert.Nil(t, s.SessionName)
		assert.Nil(t, s.SessionTags)
	}
	if s.LLM != nil {
		u := s.LLM
		assert.NotEmpty(t, u.Model)
		assert.True(t, u.InputTokens >= 0 && u.OutputTokens >= 0)
		assert.LessOrEqual(t, u.CachedInputTokens+u.CacheWriteTokens, u.InputTokens)
		assert.LessOrEqual(t, u.ReasoningTokens, u.OutputTokens)
	}
	assert.Equal(t, testNow, s.CreatedAt)
	assert.Equal(t, testNow, s.UpdatedAt)

	// POST /spans reads the stored record back as the same span.
	body := append(append([]byte("["), s.AppendJSON(nil)...), ']')
	back, rejected, err := trace.DecodeBatch(body, testProject, now)
	require.NoError(t, err, "%s", body)
	require.Empty(t, rejected)
	require.Len(t, back, 1)
	b := back[0]
	assert.Equal(t, s.ID, b.ID)
	assert.Equal(t, s.TraceID, b.TraceID)
	assert.Equal(t, s.ParentSpanID, b.ParentSpanID)
	assert.Equal(t, s.Name, b.Name)
	assert.Equal(t, s.Kind, b.Kind)
	assert.Equal(t, s.Status, b.Status)
	assert.Equal(t, s.StartedAt, b.StartedAt)
	assert.Equal(t, s.EndedAt, b.EndedAt)
	assert.Equal(t, s.DurationMS, b.DurationMS)
	assert.Equal(t, s.Cost, b.Cost)
	assert.Equal(t, s.SessionID, b.SessionID)
	assert.Equal(t, s.SessionName, b.SessionName)
	assert.Equal(t, s.InputData, b.InputData)
	assert.Equal(t, s.OutputData, b.OutputData)
	assert.Equal(t, string(s.Attributes), string(b.Attributes))
	assert.Equal(t, s.Tags, b.Tags)
	assert.Equal(t, s.TraceTags, b.TraceTags)
	assert.Equal(t, s.SessionTags, b.SessionTags)
	assert.Equal(t, s.ErrorCode, b.ErrorCode)
	assert.Equal(t, s.ErrorMessage, b.ErrorMessage)
	assert.Equal(t, s.ErrorStack, b.ErrorStack)
	assert.Equal(t, s.CodeFilepath, b.CodeFilepath)
	assert.Equal(t, s.CodeLineno, b.CodeLineno)
	if s.LLM != nil {
		require.NotNil(t, b.LLM)
		assert.Equal(t, s.LLM.Provider, b.LLM.Provider)
		assert.Equal(t, s.LLM.Model, b.LLM.Model)
		assert.Equal(t, s.LLM.InputTokens, b.LLM.InputTokens)
		assert.Equal(t, s.LLM.OutputTokens, b.LLM.OutputTokens)
	}
	if !strings.Contains(string(s.Attributes), `"plume.truncated":{`) || !strings.Contains(string(s.Attributes), `"dropped":`) {
		assert.Equal(t, s.Link, b.Link)
	}
	_, err = uuid.Parse(s.ID)
	assert.NoError(t, err)
}

// attrsOf decodes a span's attributes.
func attrsOf(t testing.TB, s trace.Span) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(s.Attributes, &m))
	return m
}

func ptr[T any](v T) *T { return &v }
