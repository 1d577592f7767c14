package eventlog

import (
	"context"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/errs"
)

// Retention is how long an event stays in the log after its time.
const Retention = 14 * 24 * time.Hour

// Lag is how late an event may be logged after the events that follow it in the log, at
// most, for a follower reading on from a time (the stream's usual delay is a second; a failed
// batch is retried for longer, and a follower that must see those reads from further back).
const Lag = time.Minute

// Limits of one page.
const (
	DefaultLimit = 50
	MaxLimit     = 200
)

// MaxCursorBytes bounds a cursor (a sort key: a time and an event id).
const MaxCursorBytes = 128

// Query selects a page of a project's events.
type Query struct {
	// Since, when set, reads the events after it, oldest first; unset, newest first.
	Since *time.Time
	// Types, when set, keeps the events of these types only.
	Types []string
	// Limit is the most events answered (1 to MaxLimit).
	Limit int
	// Cursor continues a previous page where its Next said ("": from the start).
	Cursor string
}

// Page is a page of events and where the log continues ("" when it ends there).
type Page struct {
	Events []api.Event
	Next   string
}

// Store keeps the log.
type Store interface {
	// Append logs events, each once: an event already logged (by its project, time and id)
	// is left as it is.
	Append(ctx context.Context, events []api.Event) error
	// Events reads a page of a project's log. A page may hold fewer than q.Limit events
	// and still have a Next, when q.Types skipped many: read on with it.
	Events(ctx context.Context, projectID string, q Query) (Page, error)
}

// ParseQuery reads a Query from a request's parameters: since (RFC 3339), types
// (comma-separated event types), limit and cursor. A bad value is errs.Invalid.
func ParseQuery(v url.Values) (Query, error) {
	q := Query{Limit: DefaultLimit, Cursor: v.Get("cursor")}
	if s := v.Get("since"); s != "" {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return Query{}, errs.Invalid("since must be an RFC 3339 time such as 2026-12-02T14:03:11Z")
		}
		t = t.UTC()
		q.Since = &t
	}
	if s := v.Get("types"); s != "" {
		for typ := range strings.SplitSeq(s, ",") {
			typ = strings.TrimSpace(typ)
			if !slices.Contains(api.EventTypes, typ) {
				return Query{}, errs.Invalid("types: %q is not an event type (%s)", typ, strings.Join(api.EventTypes, ", "))
			}
			if !slices.Contains(q.Types, typ) {
				q.Types = append(q.Types, typ)
			}
		}
	}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxLimit {
			return Query{}, errs.Invalid("limit must be a number from 1 to %d", MaxLimit)
		}
		q.Limit = n
	}
	if len(q.Cursor) > MaxCursorBytes {
		return Query{}, errs.Invalid("cursor must be at most %d bytes, as an answer's %s gives it", MaxCursorBytes, api.NextCursorHeader)
	}
	return q, nil
}
