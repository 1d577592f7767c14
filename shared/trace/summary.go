package trace

import (
	"cmp"
	"time"

	"github.com/plumehq/plume/shared/prompt"
	"github.com/plumehq/plume/shared/textcut"
)

// Bounds of what a Summary carries, so that an index item stays under 1 KB (one write unit).
// Values beyond them are cut and flagged; filters then check the full span.
const (
	summaryNameBytes      = 160
	summaryErrorCodeBytes = 64
	summaryTagBytes       = 256
	summaryModelBytes     = 64
	rootPreviewBytes      = 256 // root_span_input and root_span_output of a trace
)

// Summarize returns the index entry of s stored at loc.
func Summarize(s Span, loc Location) Summary {
	sum := Summary{
		SpanID: s.ID, TraceID: s.TraceID, Kind: s.Kind, StartedAt: s.StartedAt, EndedAt: s.EndedAt,
		DurationMS: s.DurationMS, Cost: s.Cost, HasError: s.HasError(),
		CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt, Location: loc,
	}
	if s.ParentSpanID != nil {
		sum.ParentSpanID = *s.ParentSpanID
	}
	if s.Status != nil {
		sum.Status = *s.Status
	}
	if s.LLM != nil {
		sum.InputTokens, sum.OutputTokens = s.LLM.InputTokens, s.LLM.OutputTokens
		sum.Model, _ = textcut.Cut(s.LLM.Model, summaryModelBytes)
	}
	if s.SessionID != nil {
		sum.SessionID = *s.SessionID
	}
	if s.Link != nil {
		sum.PromptVersionID = s.Link.PromptVersionID
		if slug := cmp.Or(s.Link.PromptSlug, s.Link.Task); prompt.IsSlug(slug) {
			sum.PromptSlug = slug
		}
		if sum.PromptVersionID == "" {
			sum.PromptHash = s.Link.ContentHash
		}
	}
	for _, c := range s.ABChoices {
		sum.ABChoices = append(sum.ABChoices, ABChoice{Name: c.Name, Variant: c.Variant})
	}
	sum.Name, sum.NameCut = textcut.Cut(s.Name, summaryNameBytes)
	if s.ErrorCode != nil {
		sum.ErrorCode, sum.ErrorCodeCut = textcut.Cut(*s.ErrorCode, summaryErrorCodeBytes)
	}
	// The prompt linkage and the model take room in the item; tags give it up.
	tagBytes := summaryTagBytes - len(sum.PromptSlug) - len(sum.PromptHash) - len(sum.Model)
	sum.Tags, sum.TagsCut = boundTags(s.Tags, tagBytes)
	sum.TraceTags, _ = boundTags(s.TraceTags, summaryTagBytes)
	sum.SessionTags, _ = boundTags(s.SessionTags, summaryTagBytes)
	if s.SessionName != nil {
		sum.SessionName, _ = textcut.Cut(*s.SessionName, summaryNameBytes)
	}
	if s.ParentSpanID == nil {
		if s.InputData != nil {
			sum.RootInput, _ = textcut.Cut(*s.InputData, rootPreviewBytes)
		}
		if s.OutputData != nil {
			sum.RootOutput, _ = textcut.Cut(*s.OutputData, rootPreviewBytes)
		}
	}
	return sum
}

// boundTags keeps whole tags, in key order, while their keys and values fit in n bytes.
func boundTags(tags Tags, n int) (map[string]string, bool) {
	if len(tags) == 0 {
		return nil, false
	}
	out := make(map[string]string, len(tags))
	used := 0
	for _, t := range tags {
		size := len(t.Key) + len(t.Value)
		if used+size > n {
			return out, true
		}
		used += size
		out[t.Key] = t.Value
	}
	return out, false
}

// usage is the model usage the summary keeps: its token counts, nil when it has none.
func (s Summary) usage() *LLMUsage {
	if s.InputTokens == 0 && s.OutputTokens == 0 {
		return nil
	}
	return &LLMUsage{InputTokens: s.InputTokens, OutputTokens: s.OutputTokens}
}

// End is the span's end: ended_at, else started_at plus duration_ms, else nil.
func (s Summary) End() *time.Time {
	if s.EndedAt != nil {
		return s.EndedAt
	}
	if s.DurationMS != nil {
		t := s.StartedAt.Add(time.Duration(*s.DurationMS * float64(time.Millisecond)))
		return &t
	}
	return nil
}
