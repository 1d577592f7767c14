package trace

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
)

// Merge returns the span that a later write of the same span id makes of the stored one: every
// field the later write carries replaces the stored value, fields it leaves out keep it, and
// attributes and tags merge key by key (the later value wins). The kind only moves away from
// "generic", the default of a write that does not name one. CreatedAt stays the first write's.
func Merge(stored, later Span) Span {
	m := stored
	m.TraceID, m.Name, m.StartedAt, m.UpdatedAt = later.TraceID, later.Name, later.StartedAt, later.UpdatedAt
	if later.Kind != KindGeneric || stored.Kind == "" {
		m.Kind = later.Kind
	}
	set(&m.ParentSpanID, later.ParentSpanID)
	set(&m.Status, later.Status)
	set(&m.EndedAt, later.EndedAt)
	set(&m.DurationMS, later.DurationMS)
	if later.Cost != nil {
		m.Cost, m.CostSource = later.Cost, later.CostSource
	}
	set(&m.SessionID, later.SessionID)
	set(&m.SessionName, later.SessionName)
	set(&m.InputData, later.InputData)
	set(&m.OutputData, later.OutputData)
	set(&m.ErrorCode, later.ErrorCode)
	set(&m.ErrorMessage, later.ErrorMessage)
	set(&m.ErrorStack, later.ErrorStack)
	set(&m.CodeFilepath, later.CodeFilepath)
	set(&m.CodeLineno, later.CodeLineno)
	set(&m.LLM, later.LLM)
	set(&m.Link, later.Link)
	m.Attributes = mergeObjects(stored.Attributes, later.Attributes)
	m.Tags = MergeTags(stored.Tags, later.Tags)
	m.TraceTags = MergeTags(stored.TraceTags, later.TraceTags)
	m.SessionTags = MergeTags(stored.SessionTags, later.SessionTags)
	if len(later.Attachments) > 0 {
		m.Attachments = later.Attachments
	}
	m.ABChoices = mergeChoices(stored.ABChoices, later.ABChoices)
	return m
}

func set[T any](dst **T, v *T) {
	if v != nil {
		*dst = v
	}
}

// mergeObjects merges two JSON objects key by key, b winning; either may be empty.
func mergeObjects(a, b json.RawMessage) json.RawMessage {
	if isEmptyObject(b) {
		return a
	}
	if isEmptyObject(a) {
		return b
	}
	var am, bm map[string]json.RawMessage
	if json.Unmarshal(a, &am) != nil {
		return b
	}
	if json.Unmarshal(b, &bm) != nil {
		return a
	}
	if covers(bm, am) {
		return b // the later object already has every key: keep it exactly as sent
	}
	maps.Copy(am, bm)
	keys := slices.Sorted(maps.Keys(am))
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		kj, _ := json.Marshal(k)
		buf.Write(kj)
		buf.WriteByte(':')
		buf.Write(am[k])
	}
	buf.WriteByte('}')
	return buf.Bytes()
}

// covers reports whether every key of a is in b.
func covers(b, a map[string]json.RawMessage) bool {
	for k := range a {
		if _, ok := b[k]; !ok {
			return false
		}
	}
	return true
}

func isEmptyObject(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || bytes.Equal(t, []byte("{}")) || bytes.Equal(t, []byte("null"))
}
