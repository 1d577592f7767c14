package tracing

import (
	"encoding/json"
	"time"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/trace"
)

// toSpans is the API form of spans; never nil, so that none encodes as [].
func toSpans(spans []trace.Span) []api.Span {
	out := make([]api.Span, len(spans))
	for i := range spans {
		out[i] = toSpan(&spans[i])
	}
	return out
}

// toSpan is the API form of a span (SpanRead).
func toSpan(s *trace.Span) api.Span {
	out := api.Span{
		ID: s.ID, TraceID: s.TraceID, ParentSpanID: s.ParentSpanID, ProjectID: s.ProjectID, Name: s.Name,
		Kind: s.Kind, Status: s.Status, StartedAt: s.StartedAt, EndedAt: s.EndedAt, DurationMS: s.DurationMS,
		Cost: s.Cost, CostSource: s.CostSource, SessionID: s.SessionID, SessionName: s.SessionName,
		InputData: s.InputData, OutputData: s.OutputData, Attributes: s.Attributes,
		Tags: s.Tags.Map(), TraceTags: s.TraceTags.Map(), SessionTags: s.SessionTags.Map(),
		ErrorCode: s.ErrorCode, ErrorMessage: s.ErrorMessage, ErrorStack: s.ErrorStack,
		CodeFilepath: s.CodeFilepath, CodeLineno: s.CodeLineno, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt,
	}
	if out.Tags == nil {
		out.Tags = map[string]string{}
	}
	if l := s.Link; l != nil {
		out.PromptLink = &api.PromptLink{
			Task: l.Task, PromptSlug: l.PromptSlug, PromptVersion: l.PromptVersion,
			PromptVersionID: l.PromptVersionID, ContentHash: l.ContentHash,
		}
	}
	for _, a := range s.Attachments {
		out.Attachments = append(out.Attachments, api.SpanAttachment{
			Type: a.Type, Label: a.Label, Key: a.Key, ContentType: a.ContentType, Size: a.Size,
		})
	}
	return out
}

// toTraces is the API form of traces; never nil.
func toTraces(traces []trace.Trace) []api.Trace {
	out := make([]api.Trace, len(traces))
	for i, t := range traces {
		out[i] = api.Trace{
			ID: t.ID, ProjectID: t.ProjectID, SessionID: t.SessionID, Name: t.Name, Status: t.Status,
			StartedAt: t.StartedAt, EndedAt: t.EndedAt, DurationMS: t.DurationMS, Cost: t.Cost,
			SpanCount: t.SpanCount, ErrorCount: t.ErrorCount, RootSpanID: t.RootSpanID,
			RootSpanInput: t.RootSpanInput, RootSpanOutput: t.RootSpanOutput, Tags: t.Tags,
			Attributes: t.Attributes, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt,
		}
	}
	return out
}

// toSessions is the API form of sessions; never nil.
func toSessions(sessions []trace.Session) []api.Session {
	out := make([]api.Session, len(sessions))
	for i, s := range sessions {
		out[i] = api.Session{
			ID: s.ID, ProjectID: s.ProjectID, Name: s.Name, TraceCount: s.TraceCount, ErrorCount: s.ErrorCount,
			Cost: s.Cost, Duration: s.Duration, StartedAt: s.StartedAt, EndedAt: s.EndedAt, Tags: s.Tags,
			Attributes: s.Attributes, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt,
		}
	}
	return out
}

// sentTraces is the API form of traces as a POST /traces request sent them, at now: the answer
// to a caller that may not read the project's traces, which must not learn what its spans or
// others' added (counts, root span input and output).
func sentTraces(in []trace.TraceInput, projectID string, now time.Time) []api.Trace {
	out := make([]api.Trace, len(in))
	for i, t := range in {
		out[i] = api.Trace{
			ID: t.ID, ProjectID: projectID, Name: t.Name, Status: t.Status, StartedAt: &t.StartedAt,
			EndedAt: t.EndedAt, DurationMS: t.DurationMS, Tags: tagsOrEmpty(t.Tags), Attributes: attributes(t.Attributes),
			CreatedAt: now, UpdatedAt: now,
		}
		if t.SessionID != "" {
			out[i].SessionID = &t.SessionID
		}
		if t.Cost != nil {
			out[i].Cost = *t.Cost
		}
	}
	return out
}

// sentSessions is the API form of sessions as a POST /sessions request sent them, at now: the
// answer to a caller that may not read the project's sessions.
func sentSessions(in []trace.SessionInput, now time.Time) []api.Session {
	out := make([]api.Session, len(in))
	for i, s := range in {
		out[i] = api.Session{
			ID: s.ID, ProjectID: s.ProjectID, Tags: tagsOrEmpty(s.Tags), Attributes: attributes(s.Attributes),
			CreatedAt: now, UpdatedAt: now,
		}
		if s.Name != "" {
			out[i].Name = &s.Name
		}
	}
	return out
}

func tagsOrEmpty(tags map[string]string) map[string]string {
	if tags == nil {
		return map[string]string{}
	}
	return tags
}

// attributes is a request's attributes object as the API answers it; nil when there is none.
func attributes(raw json.RawMessage) map[string]any {
	var out map[string]any
	if len(raw) > 0 && json.Unmarshal(raw, &out) != nil {
		return nil
	}
	return out
}
