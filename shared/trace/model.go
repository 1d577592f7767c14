package trace

import "time"

// Trace is a trace as read (spec §2.7): its fields and the aggregates of its spans.
type Trace struct {
	ID             string
	ProjectID      string
	SessionID      *string
	Name           string
	Status         string
	StartedAt      *time.Time
	EndedAt        *time.Time
	DurationMS     *float64
	Cost           float64
	SpanCount      int
	ErrorCount     int
	RootSpanID     *string
	RootSpanInput  *string
	RootSpanOutput *string
	Tags           map[string]string
	Attributes     map[string]any
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// Session is a session as read (spec §2.8).
type Session struct {
	ID         string
	ProjectID  string
	Name       *string
	TraceCount int
	ErrorCount int
	Cost       float64
	Duration   *float64 // milliseconds from the first span's start to the last span's end
	StartedAt  *time.Time
	EndedAt    *time.Time
	Tags       map[string]string
	Attributes map[string]any
	CreatedAt  time.Time
	UpdatedAt  time.Time
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
