package trace

import "time"

// Trace is a trace as read (spec §2.7): its fields and the aggregates of its spans.
type Trace struct {
	ID             string            `json:"id"`
	ProjectID      string            `json:"project_id"`
	SessionID      *string           `json:"session_id"`
	Name           string            `json:"name"`
	Status         string            `json:"status"`
	StartedAt      *time.Time        `json:"started_at"`
	EndedAt        *time.Time        `json:"ended_at"`
	DurationMS     *float64          `json:"duration_ms"`
	Cost           float64           `json:"cost"`
	SpanCount      int               `json:"span_count"`
	ErrorCount     int               `json:"error_count"`
	RootSpanID     *string           `json:"root_span_id"`
	RootSpanInput  *string           `json:"root_span_input"`
	RootSpanOutput *string           `json:"root_span_output"`
	Tags           map[string]string `json:"tags"`
	Attributes     map[string]any    `json:"attributes,omitempty"`
	CreatedAt      time.Time         `json:"created_at"`
	UpdatedAt      time.Time         `json:"updated_at"`
}

// Session is a session as read (spec §2.8).
type Session struct {
	ID         string            `json:"id"`
	ProjectID  string            `json:"project_id"`
	Name       *string           `json:"name"`
	TraceCount int               `json:"trace_count"`
	ErrorCount int               `json:"error_count"`
	Cost       float64           `json:"cost"`
	Duration   *float64          `json:"duration"` // milliseconds from the first span's start to the last span's end
	StartedAt  *time.Time        `json:"started_at"`
	EndedAt    *time.Time        `json:"ended_at"`
	Tags       map[string]string `json:"tags"`
	Attributes map[string]any    `json:"attributes,omitempty"`
	CreatedAt  time.Time         `json:"created_at"`
	UpdatedAt  time.Time         `json:"updated_at"`
}

// StatusOf is the status of a trace: "error" when any of its spans failed, else an explicit
// status set through POST /traces, else its root span's status, else "unset".
func StatusOf(errorCount int, rootStatus, explicit string) string {
	switch {
	case errorCount > 0:
		return StatusError
	case explicit != "":
		return explicit
	case rootStatus != "":
		return rootStatus
	}
	return StatusUnset
}
