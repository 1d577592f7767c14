package eventbus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/awsjson"
)

// Source is the Source of every entry: a rule matches Plume's events with
// {"source": ["plume"]}.
const Source = "plume"

// MaxEntries is the most entries one PutEvents request takes.
const MaxEntries = 10

// MaxRequestBytes is the largest total size of one PutEvents request's entries, counted as
// EventBridge counts it (entrySize).
// https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-putevent-size.html
const MaxRequestBytes = 256 << 10

// DefaultAttempts is how many times Put sends an entry at most when Bus.Attempts is 0.
const DefaultAttempts = 4

// DefaultBackoff is the wait before the first put again when Bus.Backoff is 0, doubled before
// each next one.
const DefaultBackoff = 100 * time.Millisecond

// API is the part of EventBridge a Bus uses.
type API interface {
	PutEvents(context.Context, *PutEventsInput) (*PutEventsOutput, error)
}

var _ API = (*Client)(nil)

// PutEventsInput is the input of EventBridge's PutEvents.
// https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_PutEvents.html
type PutEventsInput struct {
	Entries []Entry
}

// Entry is one event of a PutEvents request.
type Entry struct {
	EventBusName string     `json:",omitempty"`
	Source       string     `json:",omitempty"`
	DetailType   string     `json:",omitempty"`
	Detail       string     `json:",omitempty"`
	Resources    []string   `json:",omitempty"`
	Time         *EpochTime `json:",omitempty"`
}

// PutEventsOutput is the answer of PutEvents: one result per entry, in the request's order.
type PutEventsOutput struct {
	FailedEntryCount int
	Entries          []EntryResult
}

// EntryResult is the fate of one entry: its event id, or why it was refused.
type EntryResult struct {
	EventID      string `json:"EventId,omitempty"`
	ErrorCode    string `json:",omitempty"`
	ErrorMessage string `json:",omitempty"`
}

// EpochTime is a time as AWS JSON writes a timestamp: seconds since the epoch, a number with
// up to three decimals.
type EpochTime time.Time

// MarshalJSON writes t as seconds with milliseconds.
func (t EpochTime) MarshalJSON() ([]byte, error) {
	ms := time.Time(t).UnixMilli()
	if ms%1000 == 0 {
		return strconv.AppendInt(nil, ms/1000, 10), nil
	}
	return strconv.AppendFloat(nil, float64(ms)/1000, 'f', -1, 64), nil
}

// Client is EventBridge reached through shared/awsjson.
type Client struct{ c *awsjson.Client }

// NewClient returns EventBridge reached with awsCfg's credentials, region and endpoint.
func NewClient(awsCfg aws.Config) *Client {
	return &Client{c: awsjson.New(awsCfg, awsjson.EventBridge)}
}

// PutEvents sends one PutEvents request.
func (c *Client) PutEvents(ctx context.Context, in *PutEventsInput) (*PutEventsOutput, error) {
	var out PutEventsOutput
	if err := c.c.Call(ctx, "PutEvents", in, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Bus is one EventBridge event bus.
type Bus struct {
	api  API
	name string
	// Attempts is how many times an entry is sent at most (0: DefaultAttempts).
	Attempts int
	// Backoff is the wait before the first put again (0: DefaultBackoff), doubled each time.
	Backoff time.Duration
}

// New returns the bus named name (a name such as "default", or its ARN) reached through api.
func New(api API, name string) *Bus {
	return &Bus{api: api, name: name}
}

// Name is the bus's name or ARN, as given to New.
func (b *Bus) Name() string { return b.name }

// Put puts events on the bus, each once when it succeeds. An event whose entry alone is over
// MaxRequestBytes cannot go on any bus: it is logged and left out (Plume's events are a few
// hundred bytes). The error says how many entries were still refused after the last attempt.
func (b *Bus) Put(ctx context.Context, events []api.Event) error {
	entries := make([]Entry, 0, len(events))
	for _, ev := range events {
		e, err := b.entry(ev)
		if err != nil {
			return err
		}
		if size := entrySize(e); size > MaxRequestBytes {
			slog.ErrorContext(ctx, "eventbus: event too large for EventBridge, not put", "event_id", ev.ID, "type", ev.Type, "bytes", size)
			continue
		}
		entries = append(entries, e)
	}
	var errsOf []error
	for _, chunk := range chunks(entries) {
		if err := b.putChunk(ctx, chunk); err != nil {
			errsOf = append(errsOf, err)
		}
	}
	return errors.Join(errsOf...)
}

// putChunk sends one request's entries, then again those refused, until none is or the
// attempts are spent.
func (b *Bus) putChunk(ctx context.Context, entries []Entry) error {
	attempts, wait := b.Attempts, b.Backoff
	if attempts <= 0 {
		attempts = DefaultAttempts
	}
	if wait <= 0 {
		wait = DefaultBackoff
	}
	for attempt := 1; ; attempt++ {
		out, err := b.api.PutEvents(ctx, &PutEventsInput{Entries: entries})
		if err != nil {
			// awsjson has already retried what a whole request may be retried for.
			return fmt.Errorf("put %d events on bus %s: %w", len(entries), b.name, err)
		}
		failed, code := refused(entries, out)
		if len(failed) == 0 {
			return nil
		}
		if attempt >= attempts {
			return fmt.Errorf("put events on bus %s: %d of %d refused after %d attempts (%s)", b.name, len(failed), len(entries), attempt, code)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("put events on bus %s: %w", b.name, ctx.Err())
		case <-time.After(wait):
		}
		entries, wait = failed, wait*2
	}
}

// refused are the entries of a request that its answer refused, and the first error code.
// An answer whose entries do not match the request one for one is taken as refusing all.
func refused(entries []Entry, out *PutEventsOutput) ([]Entry, string) {
	if out.FailedEntryCount == 0 {
		return nil, ""
	}
	if len(out.Entries) != len(entries) {
		return entries, "answer without its entries"
	}
	var failed []Entry
	code := ""
	for i, r := range out.Entries {
		if r.ErrorCode == "" {
			continue
		}
		failed = append(failed, entries[i])
		if code == "" {
			code = r.ErrorCode + ": " + r.ErrorMessage
		}
	}
	return failed, code
}

// entry is ev as an EventBridge entry.
func (b *Bus) entry(ev api.Event) (Entry, error) {
	detail, err := json.Marshal(ev)
	if err != nil {
		return Entry{}, fmt.Errorf("encode event %s: %w", ev.ID, err)
	}
	e := Entry{EventBusName: b.name, Source: Source, DetailType: ev.Type, Detail: string(detail)}
	if !ev.Time.IsZero() {
		t := EpochTime(ev.Time)
		e.Time = &t
	}
	return e, nil
}

// entrySize is the size EventBridge counts for e against a request's 256 KB: 14 bytes for the
// time, the UTF-8 bytes of the source, detail type and detail, and of each resource.
func entrySize(e Entry) int {
	n := len(e.Source) + len(e.DetailType) + len(e.Detail)
	if e.Time != nil {
		n += 14
	}
	for _, r := range e.Resources {
		n += len(r)
	}
	return n
}

// chunks splits entries into requests of at most MaxEntries entries and MaxRequestBytes,
// keeping their order.
func chunks(entries []Entry) [][]Entry {
	var out [][]Entry
	var cur []Entry
	size := 0
	for _, e := range entries {
		n := entrySize(e)
		if len(cur) == MaxEntries || (len(cur) > 0 && size+n > MaxRequestBytes) {
			out = append(out, cur)
			cur, size = nil, 0
		}
		cur = append(cur, e)
		size += n
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}
