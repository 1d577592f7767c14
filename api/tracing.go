package api

// RejectedSpan is one entry of the X-Plume-Rejected-Spans header of POST /spans: a span of the
// batch that was not stored (the others were), by its position in the request array, with its
// id when it had a readable one and the reason. The header holds a JSON array of these, ASCII
// only, cut to whole entries at 4 KB; X-Plume-Rejected holds how many spans were rejected.
type RejectedSpan struct {
	Index int    `json:"index"`
	ID    string `json:"id,omitempty"`
	Error string `json:"error"`
}
