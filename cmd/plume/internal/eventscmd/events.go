// Package eventscmd holds `plume events`: the project's event log read over the API (GET
// /projects/{project_id}/events) with an admin or member key, a page at a time (list) or
// followed as it grows (tail). See docs/webhooks.md#the-event-log.
package eventscmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
)

// lag is how far back each poll of tail reads before the newest event it printed: an event's
// time is its change's, and it may be logged up to this much after a later one
// (shared/eventlog.Lag).
const lag = time.Minute

// pageLimit is the page size tail reads with.
const pageLimit = 200

// NewCmdEvents returns the `plume events` command group.
func NewCmdEvents(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "events <command>",
		Short: "Read and follow the project's events (prompt.tag.moved, judge.updated ...)",
		Long: `The project's event log: every event of the last 14 days, once each, as webhooks and
EventBridge receive them (docs/webhooks.md). Admin and member keys.`,
		Args: cmdutil.NoArgs,
		RunE: cmdutil.ShowHelp,
	}
	cmd.AddCommand(newCmdList(f), newCmdTail(f))
	return cmd
}

// listOptions are the flags of list.
type listOptions struct {
	since  string
	types  []string
	limit  int
	cursor string
}

func newCmdList(f *cmdutil.Factory) *cobra.Command {
	var o listOptions
	cmd := &cobra.Command{
		Use:   "list [--since TIME|DURATION] [--type TYPE ...] [--limit N] [--cursor C]",
		Short: "A page of the project's events: newest first, or oldest after --since",
		Example: `  plume events list --type prompt.tag.moved
  plume events list --since 1h --output json`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			since, err := parseSince(o.since, f.Now())
			if err != nil {
				return err
			}
			if o.limit < 1 || o.limit > 200 {
				return cmdutil.FlagErrorf("--limit must be from 1 to 200, got %d", o.limit)
			}
			return f.WithClient(cmd, nil, true, func(ctx context.Context, c *client.Client) error {
				page, err := c.Events(ctx, client.EventsQuery{Since: since, Types: o.types, Limit: o.limit, Cursor: o.cursor})
				if err != nil {
					return err
				}
				if page.Next != "" {
					f.IO.Infof("More events follow: --cursor %s", page.Next)
				}
				return f.IO.PrintList(page.Events, []cmdutil.Column{{Header: "ID", Path: "id"}, {Header: "TYPE", Path: "type"},
					{Header: "TIME", Path: "time"}, {Header: "DATA", Path: "data"}}, (&cmdutil.ListOptions{}).Local())
			})
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.since, "since", "", "only the events after this `time` (RFC 3339) or this long ago (10m, 24h), oldest first")
	fl.StringArrayVar(&o.types, "type", nil, "keep the events of this `type` (repeat)")
	fl.IntVar(&o.limit, "limit", 50, "the most events to print (1 to 200)")
	fl.StringVar(&o.cursor, "cursor", "", "continue where a previous page said")
	return cmd
}

// tailOptions are the flags of tail.
type tailOptions struct {
	since    string
	types    []string
	count    int
	interval time.Duration
}

func newCmdTail(f *cmdutil.Factory) *cobra.Command {
	var o tailOptions
	cmd := &cobra.Command{
		Use:   "tail [--since TIME|DURATION] [--type TYPE ...] [--count N] [--interval D]",
		Short: "Follow the project's events: each one printed once, as a line of JSON, until interrupted",
		Long: `Print the project's new events as they are logged, one JSON object a line, oldest first,
each once, until Ctrl-C (exit 0) or --count events. It asks for the events after the newest
it printed every --interval, reading a minute back for the events logged late.`,
		Example: `  plume events tail
  plume events tail --type prompt.tag.moved --since 1h | jq -r .data.tag`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			start, err := parseSince(o.since, f.Now())
			if err != nil {
				return err
			}
			if start.IsZero() {
				start = f.Now()
			}
			if o.count < 0 || o.interval < 100*time.Millisecond {
				return cmdutil.FlagErrorf("--count must be 0 or more and --interval at least 100ms")
			}
			c, err := f.ProjectClient()
			if err != nil {
				return err
			}
			err = tail(cmd.Context(), c, o, start, func(ev api.Event) error {
				b, err := json.Marshal(ev)
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(f.IO.Out, "%s\n", b)
				return err
			})
			if errors.Is(err, context.Canceled) && cmd.Context().Err() != nil {
				return nil // interrupted: the normal end of a tail
			}
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.since, "since", "", "start after this `time` (RFC 3339) or this long ago (10m); default: now")
	fl.StringArrayVar(&o.types, "type", nil, "keep the events of this `type` (repeat)")
	fl.IntVar(&o.count, "count", 0, "stop after this many events (0: never)")
	fl.DurationVar(&o.interval, "interval", 2*time.Second, "how often to ask for new events")
	return cmd
}

// tail prints (print) the events after start, each once, polling every o.interval until ctx
// ends or o.count are printed. Its memory is bounded: the ids it remembers are those of the
// last lag.
func tail(ctx context.Context, c *client.Client, o tailOptions, start time.Time, print func(api.Event) error) error {
	seen := map[string]time.Time{}
	newest, printed := start, 0
	for {
		from := newest.Add(-lag)
		if from.Before(start) {
			from = start
		}
		cursor := ""
		for {
			page, err := c.Events(ctx, client.EventsQuery{Since: from, Types: o.types, Limit: pageLimit, Cursor: cursor})
			if err != nil {
				return err
			}
			for _, ev := range page.Events {
				if _, ok := seen[ev.ID]; ok {
					continue
				}
				seen[ev.ID] = ev.Time
				if err := print(ev); err != nil {
					return err
				}
				if ev.Time.After(newest) {
					newest = ev.Time
				}
				if printed++; printed == o.count {
					return nil
				}
			}
			if page.Next == "" {
				break
			}
			cursor = page.Next
		}
		for id, t := range seen {
			if t.Before(newest.Add(-lag)) {
				delete(seen, id)
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(o.interval):
		}
	}
}

// parseSince reads --since: an RFC 3339 time, or a duration before now; "" is the zero time.
func parseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, cmdutil.FlagErrorf("--since %q: want an RFC 3339 time (2026-12-02T14:00:00Z) or a duration (10m, 24h)", s)
}
