package trace

import (
	"encoding/json"
	"time"
)

// Record is one line of a span batch object in S3 (spans/project=<id>/date=<day>/hour=<hh>/
// <batch>.ndjson): the full span as stored, and the schema of the Athena table over the bucket
// (docs/tracing.md, "Querying every span with Athena"). It is its own type, not the API's
// answer, so that a change of the API cannot silently change the table: TestRecordGolden pins
// its bytes.
//
// Span.AppendJSON writes it (byte for byte json.Marshal(RecordOf(span)), several times faster)
// and LoadRecords reads it back. The API's api.Span has today the same bytes, and the tracing
// area's tests hold them equal, so both are written by that one encoder.
type Record struct {
	ID           string            `json:"id"`
	TraceID      string            `json:"trace_id"`
	ParentSpanID *string           `json:"parent_span_id"`
	ProjectID    string            `json:"project_id"`
	Name         string            `json:"name"`
	Kind         string            `json:"kind"`
	Status       *string           `json:"status"`
	StartedAt    time.Time         `json:"started_at"`
	EndedAt      *time.Time        `json:"ended_at"`
	DurationMS   *float64          `json:"duration_ms"`
	Cost         *float64          `json:"cost"`
	CostSource   *string           `json:"cost_source,omitempty"`
	SessionID    *string           `json:"session_id"`
	SessionName  *string           `json:"session_name,omitempty"`
	InputData    *string           `json:"input_data"`
	OutputData   *string           `json:"output_data"`
	Attributes   json.RawMessage   `json:"attributes"`
	Tags         map[string]string `json:"tags"`
	TraceTags    map[string]string `json:"trace_tags,omitempty"`
	SessionTags  map[string]string `json:"session_tags,omitempty"`
	ErrorCode    *string           `json:"error_code"`
	ErrorMessage *string           `json:"error_message"`
	ErrorStack   *string           `json:"error_stack"`
	CodeFilepath *string           `json:"code_filepath"`
	CodeLineno   *int              `json:"code_lineno"`
	PromptLink   *RecordLink       `json:"prompt_link,omitempty"`
	Attachments  []RecordFile      `json:"attachments,omitempty"`
	CreatedAt    time.Time         `json:"created_at"`
	UpdatedAt    time.Time         `json:"updated_at"`
}

// RecordLink is the prompt_link struct of a Record.
type RecordLink struct {
	Task            string `json:"task,omitempty"`
	PromptSlug      string `json:"prompt_slug,omitempty"`
	PromptVersion   int    `json:"prompt_version,omitempty"`
	PromptVersionID string `json:"prompt_version_id,omitempty"`
	ContentHash     string `json:"content_hash,omitempty"`
}

// RecordFile is one element of the attachments array of a Record.
type RecordFile struct {
	Type        string `json:"type"`
	Label       string `json:"label,omitempty"`
	Key         string `json:"key"`
	ContentType string `json:"content_type,omitempty"`
	Size        int64  `json:"size,omitempty"`
}

// RecordOf returns the record of s.
func RecordOf(s *Span) Record {
	r := Record{
		ID: s.ID, TraceID: s.TraceID, ParentSpanID: s.ParentSpanID, ProjectID: s.ProjectID, Name: s.Name,
		Kind: s.Kind, Status: s.Status, StartedAt: s.StartedAt, EndedAt: s.EndedAt, DurationMS: s.DurationMS,
		Cost: s.Cost, CostSource: s.CostSource, SessionID: s.SessionID, SessionName: s.SessionName,
		InputData: s.InputData, OutputData: s.OutputData, Attributes: s.Attributes,
		Tags: s.Tags.Map(), TraceTags: s.TraceTags.Map(), SessionTags: s.SessionTags.Map(),
		ErrorCode: s.ErrorCode, ErrorMessage: s.ErrorMessage, ErrorStack: s.ErrorStack,
		CodeFilepath: s.CodeFilepath, CodeLineno: s.CodeLineno, CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt,
	}
	if r.Tags == nil {
		r.Tags = map[string]string{}
	}
	if l := s.Link; l != nil {
		r.PromptLink = &RecordLink{Task: l.Task, PromptSlug: l.PromptSlug, PromptVersion: l.PromptVersion, PromptVersionID: l.PromptVersionID, ContentHash: l.ContentHash}
	}
	for _, a := range s.Attachments {
		r.Attachments = append(r.Attachments, RecordFile{Type: a.Type, Label: a.Label, Key: a.Key, ContentType: a.ContentType, Size: a.Size})
	}
	return r
}
