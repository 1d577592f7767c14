package trace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/plumehq/plume/shared/bound"
	"github.com/plumehq/plume/shared/errs"
)

// TraceInput is a trace created through POST /traces (spec §2.7 create fields).
type TraceInput struct {
	ID         string
	SessionID  string
	Name       string
	StartedAt  time.Time
	Status     string
	EndedAt    *time.Time
	DurationMS *float64
	Cost       *float64
	Attributes json.RawMessage
	Tags       map[string]string
}

// SessionInput is a session created through POST /sessions (spec §2.8 create fields).
type SessionInput struct {
	ID         string
	ProjectID  string
	Name       string
	Attributes json.RawMessage
	Tags       map[string]string
}

type traceWire struct {
	ID         json.RawMessage `json:"id"`
	SessionID  json.RawMessage `json:"session_id"`
	Name       json.RawMessage `json:"name"`
	StartedAt  json.RawMessage `json:"started_at"`
	Status     json.RawMessage `json:"status"`
	EndedAt    json.RawMessage `json:"ended_at"`
	DurationMS json.RawMessage `json:"duration_ms"`
	Cost       json.RawMessage `json:"cost"`
	Attributes json.RawMessage `json:"attributes"`
	Tags       json.RawMessage `json:"tags"`
}

type sessionWire struct {
	ID         json.RawMessage `json:"id"`
	ProjectID  json.RawMessage `json:"project_id"`
	Name       json.RawMessage `json:"name"`
	Attributes json.RawMessage `json:"attributes"`
	Tags       json.RawMessage `json:"tags"`
}

// DecodeTraces parses a POST /traces body: a JSON array of traces. Any invalid trace makes the
// whole request invalid (errs.CodeInvalid naming its index): traces are few and created on
// purpose, so a partial write would only surprise.
func DecodeTraces(body []byte, now time.Time) ([]TraceInput, error) {
	var wire []traceWire
	if err := decodeArray(body, &wire); err != nil {
		return nil, err
	}
	out := make([]TraceInput, len(wire))
	for i, w := range wire {
		t, err := w.validate(now)
		if err != nil {
			return nil, errs.Invalid("trace %d: %s", i, err.Error())
		}
		out[i] = t
	}
	return out, nil
}

func (w traceWire) validate(now time.Time) (TraceInput, error) {
	var t TraceInput
	var err error
	var text spanText // no span text: every string is a copy
	if t.ID, err = text.uuidField("id", w.ID); err != nil {
		return t, err
	}
	if t.ID == "" {
		t.ID = uuid.NewString()
	}
	sid, err := text.stringField("session_id", w.SessionID, MaxIDLen)
	if err != nil {
		return t, err
	}
	if sid == "" {
		return t, errors.New("session_id: required")
	}
	t.SessionID = SessionIDOf(sid)
	if t.Name, err = text.stringField("name", w.Name, MaxNameLen); err != nil {
		return t, err
	}
	if t.Name == "" {
		return t, errors.New("name: required")
	}
	if isAbsent(w.StartedAt) {
		return t, errors.New("started_at: required")
	}
	if t.StartedAt, err = timeField("started_at", w.StartedAt, now); err != nil {
		return t, err
	}
	if !isAbsent(w.EndedAt) {
		end, err := timeField("ended_at", w.EndedAt, now)
		if err != nil {
			return t, err
		}
		if end.Before(t.StartedAt) {
			return t, errors.New("ended_at: before started_at")
		}
		t.EndedAt = &end
	}
	if t.Status, err = text.statusField(w.Status); err != nil {
		return t, err
	}
	if d, ok, err := boundedField("duration_ms", w.DurationMS, bound.DurationMS); err != nil {
		return t, err
	} else if ok {
		t.DurationMS = &d
	}
	if c, ok, err := boundedField("cost", w.Cost, bound.Cost); err != nil {
		return t, err
	} else if ok {
		t.Cost = &c
	}
	if t.EndedAt == nil && t.DurationMS != nil {
		end := t.StartedAt.Add(time.Duration(*t.DurationMS * float64(time.Millisecond)))
		t.EndedAt = &end
	}
	if t.Attributes, err = objectField("attributes", w.Attributes); err != nil {
		return t, err
	}
	tags, err := text.tagsField("tags", w.Tags)
	t.Tags = tags.Map()
	return t, err
}

// DecodeSessions parses a POST /sessions body: a JSON array of sessions.
func DecodeSessions(body []byte) ([]SessionInput, error) {
	var wire []sessionWire
	if err := decodeArray(body, &wire); err != nil {
		return nil, err
	}
	out := make([]SessionInput, len(wire))
	for i, w := range wire {
		s, err := w.validate()
		if err != nil {
			return nil, errs.Invalid("session %d: %s", i, err.Error())
		}
		out[i] = s
	}
	return out, nil
}

func (w sessionWire) validate() (SessionInput, error) {
	var s SessionInput
	var err error
	var text spanText // no span text: every string is a copy
	if s.ProjectID, err = text.stringField("project_id", w.ProjectID, MaxIDLen); err != nil {
		return s, err
	}
	if s.ProjectID == "" {
		return s, errors.New("project_id: required")
	}
	id, err := text.stringField("id", w.ID, MaxIDLen)
	if err != nil {
		return s, err
	}
	s.ID = uuid.NewString()
	if id != "" {
		s.ID = SessionIDOf(id)
	}
	if s.Name, err = text.stringField("name", w.Name, MaxNameLen); err != nil {
		return s, err
	}
	if s.Attributes, err = objectField("attributes", w.Attributes); err != nil {
		return s, err
	}
	tags, err := text.tagsField("tags", w.Tags)
	s.Tags = tags.Map()
	return s, err
}

// SessionIDOf returns a session id as stored: a UUID as is (normalised), any other string s as
// uuid5(NAMESPACE_DNS, s), as the Python SDK does.
func SessionIDOf(s string) string {
	if id, ok := normalizeUUID(s); ok {
		return id
	}
	return uuid.NewSHA1(uuid.NameSpaceDNS, []byte(s)).String()
}

// CanonicalID is a span's or trace's id as ingestion stores it: a UUID in any form it takes
// (upper case, no hyphens, braces, urn:uuid:) lowercase and hyphenated; any other string as
// it is.
func CanonicalID(s string) string {
	if id, ok := normalizeUUID(s); ok {
		return id
	}
	return s
}

// objectField returns a JSON object compacted, "" when absent or null.
func objectField(name string, raw []byte) (json.RawMessage, error) {
	if isAbsent(raw) {
		return nil, nil
	}
	if !isObject(raw) {
		return nil, fmt.Errorf("%s: must be an object, got %s", name, jsonKind(raw))
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if buf.Len() > MaxAttributeBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", name, MaxAttributeBytes)
	}
	return buf.Bytes(), nil
}

// ParseTimeString parses a time as the span decoder does (ISO 8601 in its usual forms, or a
// Unix epoch), for query parameters.
func ParseTimeString(s string) (time.Time, error) {
	raw, err := json.Marshal(s)
	if err != nil {
		return time.Time{}, err
	}
	return parseTime(raw)
}

func decodeArray(body []byte, v any) error {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '[' {
		return errs.Invalid("request body must be a JSON array")
	}
	if err := json.Unmarshal(body, v); err != nil {
		return errs.Invalid("invalid JSON: %s", err.Error())
	}
	return nil
}

// PutTraces creates or updates traces and their sessions (Traces reads them back): each
// trace's fields in one write of the trace (Index.PutTrace); a trace that names a session joins
// it as the change stream applies the write, as its spans' aggregates do.
func (s *Service) PutTraces(ctx context.Context, projectID string, traces []TraceInput) error {
	now := s.now().UTC()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(writeConcurrency)
	for _, t := range traces {
		g.Go(func() error {
			return s.index.PutTrace(gctx, projectID, TracePut{
				TraceID: t.ID, SessionID: t.SessionID, Name: t.Name, Status: t.Status, Cost: t.Cost,
				Attributes: string(t.Attributes), Tags: t.Tags, StartedAt: t.StartedAt, EndedAt: t.EndedAt, At: now,
			})
		})
	}
	return g.Wait()
}

// Traces returns the stored traces of ids (Index.Traces).
func (s *Service) Traces(ctx context.Context, projectID string, ids []string) ([]Trace, error) {
	return s.index.Traces(ctx, projectID, ids)
}

// Sessions returns the stored sessions of ids (Index.Sessions).
func (s *Service) Sessions(ctx context.Context, projectID string, ids []string) ([]Session, error) {
	return s.index.Sessions(ctx, projectID, ids)
}

// PutSessions creates or updates sessions of the caller's project (Sessions reads them back).
// A session naming another project is refused (errs.CodeForbidden) before anything is written.
func (s *Service) PutSessions(ctx context.Context, projectID string, sessions []SessionInput) error {
	for _, in := range sessions {
		if in.ProjectID != projectID {
			return errs.Forbidden("session %s names project %s; this API key belongs to another project", in.ID, in.ProjectID)
		}
	}
	now := s.now().UTC()
	for _, in := range sessions {
		if err := s.index.ApplySession(ctx, projectID, SessionDelta{
			SessionID: in.ID, Name: in.Name, Tags: in.Tags, Attributes: string(in.Attributes), At: now,
		}); err != nil {
			return err
		}
	}
	return nil
}
