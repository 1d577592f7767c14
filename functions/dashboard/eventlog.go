package dashboard

import (
	"net/http"
	"net/url"
	"slices"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/textcut"
)

// The events page: the project's event log (GET /projects/{project_id}/events), newest first,
// filtered by type and paged by the API's cursor, read by admin and member keys.

// eventRoutes registers the events page: /ui/events.
func (s *server) eventRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /ui/events", s.events)
}

const (
	eventsPerPage = 50
	// eventDataShown is the most characters of an event's body a row shows.
	eventDataShown = 300
)

type eventsData struct {
	Type   string
	Types  []string
	Events []eventRow
	pager
}

// eventRow is an event as the page lists it: its body as JSON, cut to eventDataShown.
type eventRow struct {
	api.Event
	Body string
}

// events serves GET /ui/events?type=&cursor=&row=: a page of 50 events, one read of the log
// whatever it holds.
func (s *server) events(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d := eventsData{Type: q.Get("type"), Types: api.EventTypes}
	if d.Type != "" && !slices.Contains(api.EventTypes, d.Type) {
		s.fail(w, r, errs.Invalid("There is no event type %q: choose one from the list.", d.Type))
		return
	}
	at, err := listPageOf(q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if at.Offset > 0 {
		s.fail(w, r, errs.Invalid("The event log pages by cursor: follow its Next page link."))
		return
	}
	eq := client.EventsQuery{Limit: eventsPerPage, Cursor: at.Cursor}
	if d.Type != "" {
		eq.Types = []string{d.Type}
	}
	c, ctx := s.api(r)
	p, err := c.Events(ctx, eq)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	for _, ev := range p.Events {
		d.Events = append(d.Events, eventRow{Event: ev, Body: textcut.Prefix(string(ev.Data), eventDataShown)})
	}
	keep := url.Values{}
	if d.Type != "" {
		keep.Set("type", d.Type)
	}
	d.pager = at.paging(len(p.Events), p.Next, func(cursor string, row int) string { return cursorURL("/ui/events", keep, cursor, row) })
	s.render(w, r, http.StatusOK, "events", page{Title: "Events", Nav: "events", Data: d})
}
