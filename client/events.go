package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/plumehq/plume/api"
)

// EventsQuery selects a page of the project's event log.
type EventsQuery struct {
	// Since, when not zero, reads the events after it, oldest first; zero: newest first.
	Since time.Time
	// Types, when set, keeps the events of these types (api.EventTypes) only.
	Types []string
	// Limit is the most events of the page (0: the server's default, 50; at most 200).
	Limit int
	// Cursor continues where a previous page's Next said.
	Cursor string
}

// EventsPage is a page of the event log and the cursor that continues it ("" at its end).
type EventsPage struct {
	Events []api.Event
	Next   string
}

// Events reads a page of the project's event log (the last 14 days; admin and member keys):
// newest first, or oldest after q.Since. A page may be short and still have a Next when
// q.Types skipped many events.
func (c *Client) Events(ctx context.Context, q EventsQuery) (EventsPage, error) {
	path, err := c.projectPath("/events")
	if err != nil {
		return EventsPage{}, err
	}
	v := url.Values{}
	if !q.Since.IsZero() {
		v.Set("since", q.Since.UTC().Format(time.RFC3339Nano))
	}
	if len(q.Types) > 0 {
		v.Set("types", strings.Join(q.Types, ","))
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Cursor != "" {
		v.Set(api.ParamCursor, q.Cursor)
	}
	var (
		h   http.Header
		out EventsPage
	)
	err = c.do(ctx, call{method: http.MethodGet, path: path, query: v, header: &h}, &out.Events)
	if err == nil {
		out.Next = h.Get(api.NextCursorHeader)
	}
	return out, err
}
