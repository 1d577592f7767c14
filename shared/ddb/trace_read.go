package ddb

import (
	"bytes"
	"container/heap"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/trace"
)

// TraceSpanIDs returns the ids of every span of a trace, from the trace item and its member
// items (one Query of the trace's partition): in the order the trace received them (the ids the
// item lists, then member items by write time, each one's ids in byte order), the same on
// every read, which is what GET /traces/{trace_id}/tree pages a large trace by.
func (s *TraceStore) TraceSpanIDs(ctx context.Context, projectID, traceID string) ([]string, error) {
	var inline, members []string
	err := s.t.query(ctx, partition(tracePK(projectID, traceID)), queryOpts{}, func(item map[string]types.AttributeValue) error {
		sk := strAttr(item, infra.AttrSK)
		switch {
		case sk == skTrace:
			inline = slices.Collect(idsOf(binaryAttr(item, attrInlineSpans)))
		case strings.HasPrefix(sk, prefixMember):
			var m memberItem
			if err := attributevalue.UnmarshalMap(item, &m); err != nil {
				return fmt.Errorf("decode trace members: %w", err)
			}
			members = append(members, memberIDs(m)...)
		}
		return nil
	})
	return once(append(inline, members...)), err
}

// idsOf yields the UUIDs of ids, 16-byte ids one after another.
func idsOf(ids []byte) iter.Seq[string] {
	return func(yield func(string) bool) {
		for c := range slices.Chunk(ids, 16) {
			if u, err := uuid.FromBytes(c); err == nil && !yield(u.String()) {
				return
			}
		}
	}
}

// listsID reports whether ids, 16-byte ids one after another, holds id.
func listsID(ids, id []byte) bool {
	for c := range slices.Chunk(ids, 16) {
		if bytes.Equal(c, id) {
			return true
		}
	}
	return false
}

// memberIDs are the span ids of a member item (or of a completions item), in byte order, which
// is their text order: DynamoDB keeps no order in a set, and readers page by position.
func memberIDs(m memberItem) []string {
	out := make([]string, 0, len(m.Spans))
	slices.SortFunc(m.Spans, bytes.Compare)
	for _, b := range m.Spans {
		if u, err := uuid.FromBytes(b); err == nil {
			out = append(out, u.String())
		}
	}
	return out
}

// SessionTraceIDs returns the ids of the traces of a session: those its item lists, then those
// of its listing items (one Query of the session's partition).
func (s *TraceStore) SessionTraceIDs(ctx context.Context, projectID, sessionID string) ([]string, error) {
	ids, _, err := sessionTraces(ctx, s.t, projectID, sessionID)
	return ids, err
}

// sessionTraces lists the traces of a session, as SessionTraceIDs, and reports whether the
// session exists.
func sessionTraces(ctx context.Context, t *Table, projectID, sessionID string) (ids []string, known bool, err error) {
	var inline, listed []string
	err = t.query(ctx, partition(sessionPK(projectID, sessionID)), queryOpts{}, func(item map[string]types.AttributeValue) error {
		switch sk := strAttr(item, infra.AttrSK); {
		case sk == skSession:
			known = true
			inline = slices.Collect(idsOf(binaryAttr(item, attrInlineTraces)))
		case strings.HasPrefix(sk, prefixSessTrace):
			listed = append(listed, strings.TrimPrefix(sk, prefixSessTrace))
		}
		return nil
	})
	return once(append(inline, listed...)), known, err
}

// once is ids without repetitions, in the order of their first occurrence.
func once(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	return slices.DeleteFunc(ids, func(id string) bool {
		dup := seen[id]
		seen[id] = true
		return dup
	})
}

// WalkIndex visits the ids in a time index (IndexSpans: span ids, IndexTraces: trace ids,
// IndexSessions: session ids), newest first, in pages, until visit returns false or the range
// ends. Each day of the range is read from its timeShards partitions, merged in time order.
func (s *TraceStore) WalkIndex(ctx context.Context, projectID, kind string, r trace.TimeRange, visit func(ids []string) (more bool, err error)) error {
	to := r.To
	if to.IsZero() {
		to = time.Now()
	}
	from := r.From
	if from.IsZero() {
		from = to.AddDate(0, 0, -r.MaxDays)
	}
	days, err := s.days.days(ctx, projectID, kind, from, to)
	if err != nil {
		return err
	}
	for _, day := range days {
		more, err := s.walkDay(ctx, projectID, kind, day, from, to, visit)
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// walkPage is how many index entries one Query of one shard reads.
const walkPage = 200

// walkDay merges the shards of one day, newest first.
func (s *TraceStore) walkDay(ctx context.Context, projectID, kind string, day, from, to time.Time, visit func([]string) (bool, error)) (bool, error) {
	h := &cursorHeap{}
	for shard := range timeShards {
		c := &indexCursor{s: s, pk: timeIndexPK(projectID, kind, day, shard), from: from, to: to}
		if err := c.fill(ctx); err != nil {
			return false, err
		}
		if len(c.buf) > 0 {
			heap.Push(h, c)
		}
	}
	for h.Len() > 0 {
		var page []string
		for h.Len() > 0 && len(page) < walkPage {
			c := (*h)[0]
			page = append(page, c.buf[0])
			c.buf = c.buf[1:]
			if len(c.buf) == 0 {
				if err := c.fill(ctx); err != nil {
					return false, err
				}
			}
			if len(c.buf) == 0 {
				heap.Pop(h)
			} else {
				heap.Fix(h, 0)
			}
		}
		ids, err := s.resolveEntries(ctx, projectID, kind, page)
		if err != nil {
			return false, err
		}
		more, err := visit(ids)
		if err != nil || !more {
			return false, err
		}
	}
	return true, nil
}

// resolveEntries turns index sort keys into ids: for traces and sessions the key names the id;
// for spans it names a member item, whose span ids are read.
func (s *TraceStore) resolveEntries(ctx context.Context, projectID, kind string, entries []string) ([]string, error) {
	ids := make([]string, 0, len(entries))
	if kind != trace.IndexSpans {
		for _, e := range entries {
			_, id, _ := strings.Cut(e, "#")
			ids = append(ids, id)
		}
		return ids, nil
	}
	keys := make([]map[string]types.AttributeValue, 0, len(entries))
	for _, e := range entries {
		at, rest, _ := strings.Cut(e, "#")
		traceID, batchID, _ := strings.Cut(rest, "#")
		micros, _ := strconv.ParseInt(at, 10, 64)
		keys = append(keys, key(tracePK(projectID, traceID), memberSK(time.UnixMicro(micros), batchID)))
	}
	items, err := s.t.batchGet(ctx, keys)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		raw, ok := items[keyString(k)]
		if !ok {
			continue
		}
		var m memberItem
		if err := attributevalue.UnmarshalMap(raw, &m); err != nil {
			return nil, fmt.Errorf("decode members: %w", err)
		}
		ids = append(ids, memberIDs(m)...)
	}
	return ids, nil
}

// indexCursor pages through one GSI2 partition newest first.
type indexCursor struct {
	s        *TraceStore
	pk       string
	from, to time.Time
	buf      []string
	last     map[string]types.AttributeValue
	done     bool
}

func (c *indexCursor) fill(ctx context.Context) error {
	for len(c.buf) == 0 && !c.done {
		cond := expression.Key(infra.AttrGSI2PK).Equal(expression.Value(c.pk)).
			And(expression.Key(infra.AttrGSI2SK).Between(
				expression.Value(fmt.Sprintf("%016d", c.from.UnixMicro())),
				expression.Value(fmt.Sprintf("%016d", c.to.UnixMicro()))))
		in, err := c.s.t.queryInput(cond, queryOpts{index: infra.IndexGSI2, reverse: true, limit: walkPage})
		if err != nil {
			return err
		}
		in.ExclusiveStartKey = c.last
		res, err := c.s.t.api.Query(ctx, in)
		if err != nil {
			return storageErr("query time index", err)
		}
		for _, item := range res.Items {
			if sk, ok := item[infra.AttrGSI2SK].(*types.AttributeValueMemberS); ok {
				c.buf = append(c.buf, sk.Value)
			}
		}
		c.last = res.LastEvaluatedKey
		c.done = len(res.LastEvaluatedKey) == 0
	}
	return nil
}

// cursorHeap orders cursors by their next entry, newest (largest sort key) first.
type cursorHeap []*indexCursor

func (h cursorHeap) Len() int           { return len(h) }
func (h cursorHeap) Less(i, j int) bool { return h[i].buf[0] > h[j].buf[0] }
func (h cursorHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *cursorHeap) Push(x any)        { *h = append(*h, x.(*indexCursor)) }
func (h *cursorHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}

// Traces returns the traces with the given ids (unknown ids are left out), in the given order.
func (s *TraceStore) Traces(ctx context.Context, projectID string, ids []string) ([]trace.Trace, error) {
	return getAggregates(ctx, s, ids, func(id string) string { return tracePK(projectID, id) }, skTrace,
		func(id string, it map[string]types.AttributeValue) trace.Trace { return toTrace(projectID, id, it) })
}

// Sessions returns the sessions with the given ids (unknown ids are left out), in order.
func (s *TraceStore) Sessions(ctx context.Context, projectID string, ids []string) ([]trace.Session, error) {
	return getAggregates(ctx, s, ids, func(id string) string { return sessionPK(projectID, id) }, skSession,
		func(id string, it map[string]types.AttributeValue) trace.Session { return toSession(projectID, id, it) })
}

func getAggregates[T any](ctx context.Context, s *TraceStore, ids []string, pk func(string) string, sk string, decode func(string, map[string]types.AttributeValue) T) ([]T, error) {
	keys := make([]map[string]types.AttributeValue, len(ids))
	for i, id := range ids {
		keys[i] = key(pk(id), sk)
	}
	items, err := s.read(ctx, keys)
	if err != nil {
		return nil, err
	}
	out := make([]T, 0, len(items))
	for i, id := range ids {
		if it, ok := items[keyString(keys[i])]; ok {
			out = append(out, decode(id, it))
		}
	}
	return out, nil
}

func toTrace(projectID, id string, it map[string]types.AttributeValue) trace.Trace {
	t := trace.Trace{
		ID: id, ProjectID: projectID, Name: strAttr(it, "n"), SpanCount: int(intOr(it, "sc")), ErrorCount: int(intOr(it, "ec")),
		Cost: floatAttr(it, "cost") + floatAttr(it, "ocost"), Tags: tagsOf(it),
		CreatedAt: timeAttr(it, "ca"), UpdatedAt: timeAttr(it, "ua"),
		StartedAt: optTime(it, "sa"), EndedAt: optTime(it, "ea"),
	}
	if v := strAttr(it, "ss"); v != "" {
		t.SessionID = &v
	}
	if v := strAttr(it, "root"); v != "" {
		t.RootSpanID = &v
		in, out := strAttr(it, "ri"), strAttr(it, "ro")
		t.RootSpanInput, t.RootSpanOutput = &in, &out
	}
	if v := strAttr(it, "xn"); v != "" {
		t.Name = v
	}
	t.Status = trace.StatusOf(t.ErrorCount, strAttr(it, "rst"), strAttr(it, "xst"))
	if t.StartedAt != nil && t.EndedAt != nil {
		d := float64(t.EndedAt.Sub(*t.StartedAt).Microseconds()) / 1000
		t.DurationMS = &d
	}
	if raw := strAttr(it, "attrs"); raw != "" {
		_ = json.Unmarshal([]byte(raw), &t.Attributes)
	}
	return t
}

func toSession(projectID, id string, it map[string]types.AttributeValue) trace.Session {
	s := trace.Session{
		ID: id, ProjectID: projectID, TraceCount: int(intOr(it, "tc")), ErrorCount: int(intOr(it, "ec")),
		Cost: floatAttr(it, "cost") + floatAttr(it, "ocost"), Tags: tagsOf(it), CreatedAt: timeAttr(it, "ca"), UpdatedAt: timeAttr(it, "ua"),
		StartedAt: optTime(it, "sa"), EndedAt: optTime(it, "ea"),
	}
	if v := strAttr(it, "n"); v != "" {
		s.Name = &v
	}
	if s.StartedAt != nil && s.EndedAt != nil {
		d := float64(s.EndedAt.Sub(*s.StartedAt).Microseconds()) / 1000
		s.Duration = &d
	}
	if raw := strAttr(it, "attrs"); raw != "" {
		_ = json.Unmarshal([]byte(raw), &s.Attributes)
	}
	return s
}

func binaryAttr(it map[string]types.AttributeValue, name string) []byte {
	if v, ok := it[name].(*types.AttributeValueMemberB); ok {
		return v.Value
	}
	return nil
}

func strAttr(it map[string]types.AttributeValue, name string) string {
	if v, ok := it[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

func intOr(it map[string]types.AttributeValue, name string) int64 {
	n, _ := intAttr(it, name)
	return n
}

func floatAttr(it map[string]types.AttributeValue, name string) float64 {
	if v, ok := it[name].(*types.AttributeValueMemberN); ok {
		f, _ := strconv.ParseFloat(v.Value, 64)
		return f
	}
	return 0
}

func timeAttr(it map[string]types.AttributeValue, name string) time.Time {
	n, _ := intAttr(it, name)
	return time.UnixMicro(n).UTC()
}

func optTime(it map[string]types.AttributeValue, name string) *time.Time {
	n, ok := intAttr(it, name)
	if !ok {
		return nil
	}
	t := time.UnixMicro(n).UTC()
	return &t
}

func tagsOf(it map[string]types.AttributeValue) map[string]string {
	out := map[string]string{}
	for k, v := range it {
		if name, ok := strings.CutPrefix(k, tagPrefix); ok {
			if s, ok := v.(*types.AttributeValueMemberS); ok {
				out[name] = s.Value
			}
		}
	}
	return out
}
