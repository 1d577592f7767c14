package eventbus_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/eventbus"
)

// fakeBus is an EventBridge endpoint speaking its JSON protocol (awsJson1_1, X-Amz-Target
// AWSEvents.PutEvents) that refuses an entry while refuse says so, and keeps the requests'
// entries and the events it accepted.
type fakeBus struct {
	*httptest.Server
	mu       sync.Mutex
	refuse   func(id string, attempt int) bool
	attempts map[string]int // by event id: the times it was sent
	requests [][]entry
	accepted []string // event ids, in the order accepted
}

type entry struct {
	EventBusName string
	Source       string
	DetailType   string
	Detail       string
	Time         float64
}

func newFakeBus(t *testing.T, refuse func(id string, attempt int) bool) (*fakeBus, *eventbus.Client) {
	f := &fakeBus{refuse: refuse, attempts: map[string]int{}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	client := eventbus.NewClient(aws.Config{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(f.URL),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
	})
	return f, client
}

func (f *fakeBus) serve(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("X-Amz-Target") != "AWSEvents.PutEvents" {
		http.Error(w, `{"__type":"UnknownOperationException"}`, http.StatusBadRequest)
		return
	}
	var in struct{ Entries []entry }
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		http.Error(w, `{"__type":"SerializationException"}`, http.StatusBadRequest)
		return
	}
	type result struct {
		EventId      string `json:",omitempty"`
		ErrorCode    string `json:",omitempty"`
		ErrorMessage string `json:",omitempty"`
	}
	out := struct {
		FailedEntryCount int
		Entries          []result
	}{}
	f.mu.Lock()
	f.requests = append(f.requests, in.Entries)
	for _, e := range in.Entries {
		var ev api.Event
		_ = json.Unmarshal([]byte(e.Detail), &ev)
		f.attempts[ev.ID]++
		if f.refuse(ev.ID, f.attempts[ev.ID]) {
			out.FailedEntryCount++
			out.Entries = append(out.Entries, result{ErrorCode: "ThrottlingException", ErrorMessage: "Rate exceeded"})
			continue
		}
		f.accepted = append(f.accepted, ev.ID)
		out.Entries = append(out.Entries, result{EventId: fmt.Sprintf("eb-%d", len(f.accepted))})
	}
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	_ = json.NewEncoder(w).Encode(out)
}

// events are n events of the project, each with a body of pad bytes.
func events(n, pad int) []api.Event {
	out := make([]api.Event, n)
	data, _ := json.Marshal(map[string]string{"pad": strings.Repeat("x", pad)})
	for i := range out {
		out[i] = api.Event{ID: fmt.Sprintf("evt_%032x", i+1), Type: api.EventPromptTagMoved, Time: time.Date(2026, 12, 2, 14, 3, 11, 0, time.UTC),
			ProjectID: "p-1", Data: data}
	}
	return out
}

func ids(evs []api.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.ID
	}
	return out
}

// TestPutRequests counts the PutEvents requests of a Put: at most 10 entries and 256 KB each.
func TestPutRequests(t *testing.T) {
	tests := []struct {
		name     string
		events   []api.Event
		requests []int // entries per request
	}{
		{"one event", events(1, 10), []int{1}},
		{"ten events: one request", events(10, 10), []int{10}},
		{"25 events: 10 a request", events(25, 10), []int{10, 10, 5}},
		{"100 KB events: two a request", events(5, 100<<10), []int{2, 2, 1}},
		{"none: no request", nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, client := newFakeBus(t, func(string, int) bool { return false })
			require.NoError(t, eventbus.New(client, "plume-bus").Put(context.Background(), tt.events))
			var sizes []int
			for _, r := range f.requests {
				sizes = append(sizes, len(r))
			}
			assert.Equal(t, tt.requests, sizes)
			assert.Equal(t, nilIfEmpty(ids(tt.events)), nilIfEmpty(f.accepted), "every event once, in order")
			for _, r := range f.requests {
				for _, e := range r {
					assert.Equal(t, "plume-bus", e.EventBusName)
					assert.Equal(t, "plume", e.Source)
					assert.Equal(t, api.EventPromptTagMoved, e.DetailType)
					assert.Equal(t, float64(time.Date(2026, 12, 2, 14, 3, 11, 0, time.UTC).Unix()), e.Time)
				}
			}
		})
	}
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// TestPutRetriesRefusedEntries: the entries a request refuses are put again, alone; those it
// accepted are never sent twice.
func TestPutRetriesRefusedEntries(t *testing.T) {
	evs := events(12, 10)
	refusedOnce := map[string]bool{evs[1].ID: true, evs[4].ID: true, evs[11].ID: true}
	f, client := newFakeBus(t, func(id string, attempt int) bool {
		return refusedOnce[id] && attempt == 1 || id == evs[4].ID && attempt == 2
	})
	bus := eventbus.New(client, "default")
	bus.Backoff = time.Millisecond
	require.NoError(t, bus.Put(context.Background(), evs))

	var sizes []int
	for _, r := range f.requests {
		sizes = append(sizes, len(r))
	}
	assert.Equal(t, []int{10, 2, 1, 2, 1}, sizes, "chunk 1: 10, its 2 refused, then evs[4] again; chunk 2: 2, then evs[11]")
	assert.ElementsMatch(t, ids(evs), f.accepted, "each event accepted exactly once")
	assert.Len(t, f.accepted, len(evs))
	for _, id := range ids(evs) {
		want := 1
		if refusedOnce[id] {
			want = 2
		}
		if id == evs[4].ID {
			want = 3
		}
		assert.Equal(t, want, f.attempts[id], "times %s was sent", id)
	}
}

// TestPutGivesUp: an entry refused on every attempt makes Put fail after Attempts requests,
// having put the others once.
func TestPutGivesUp(t *testing.T) {
	evs := events(3, 10)
	f, client := newFakeBus(t, func(id string, _ int) bool { return id == evs[2].ID })
	bus := eventbus.New(client, "default")
	bus.Backoff, bus.Attempts = time.Millisecond, 3
	err := bus.Put(context.Background(), evs)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "1 of 1 refused after 3 attempts (ThrottlingException")
	assert.Len(t, f.requests, 3)
	assert.Equal(t, []string{evs[0].ID, evs[1].ID}, f.accepted)
}
