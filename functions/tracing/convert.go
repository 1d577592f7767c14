package tracing

import (
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
