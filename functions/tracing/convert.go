package tracing

import (
	"bytes"
	"encoding/json"
	"slices"
	"time"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/textcut"
	"github.com/plumehq/plume/shared/trace"
)

// toSpans is the API form of spans; never nil, so that none encodes as [].
func toSpans(spans []trace.Span) []api.Span {
	out := make([]api.Span, len(spans))
	for i := range spans {
		out[i] = toSpan(&spans[i])
		fitSpan(&out[i], maxSpanBytes)
	}
	return out
}

// maxSpanBytes is the most a span's encoding may take in an answer: a span alone is answered
// within api.MaxAnswerBytes, the array's brackets and newline included.
const maxSpanBytes = api.MaxAnswerBytes - 16

// fitSpan cuts s's largest texts (input_data, output_data, error_stack, error_message), the
// largest first, to a prefix each, until s's JSON encoding is at most limit bytes, and names
// them in s.Cut. A span's other fields are bounded at ingestion far below the limit (tags,
// attributes, name), so its texts are all that can pass it: JSON writes a control character as
// six bytes, so that 1 MB of input can take 6 MB in an answer.
func fitSpan(s *api.Span, limit int) {
	if textBytes(s) < smallTexts {
		return
	}
	size := encodedLen(s)
	texts := []struct {
		name string
		p    **string
	}{{"input_data", &s.InputData}, {"output_data", &s.OutputData}, {"error_stack", &s.ErrorStack}, {"error_message", &s.ErrorMessage}}
	for size > limit {
		largest, at := 0, -1
		for i, t := range texts {
			if *t.p != nil && !slices.Contains(s.Cut, t.name) {
				if n := textcut.JSONLen(**t.p); n > largest {
					largest, at = n, i
				}
			}
		}
		if at < 0 {
			return // nothing left to cut: the other fields are bounded below the limit
		}
		s.Cut = append(s.Cut, texts[at].name) // named first: the name takes room too
		size = encodedLen(s)
		cut := textcut.JSONPrefix(**texts[at].p, max(0, largest-(size-limit)))
		*texts[at].p = &cut
		size = encodedLen(s)
	}
}

// smallTexts bounds the texts of a span that fits whatever they hold, so that fitSpan measures
// only the spans that may not: six times 200 KB (every byte a control character) plus the other
// fields at their largest (attributes 256 KB, three tag sets of 64 tags of 1,152 bytes each
// escaped six times, a name of 1 KB) is under 3 MB.
const smallTexts = 200 << 10

// textBytes is the raw size of s's texts that fitSpan may cut.
func textBytes(s *api.Span) int {
	n := 0
	for _, p := range []*string{s.InputData, s.OutputData, s.ErrorStack, s.ErrorMessage} {
		if p != nil {
			n += len(*p)
		}
	}
	return n
}

// encodedLen is the length of v's JSON encoding as answers write it (HTML escaping off).
func encodedLen(v any) int {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // api types always encode
	return buf.Len() - 1
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
	for _, c := range s.ABChoices {
		out.ABChoices = append(out.ABChoices, api.SpanABChoice{ABChoiceID: c.ID, ChoiceName: c.Name, VariantKey: c.Variant, VariantValue: c.Value})
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
