package client

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
)

// TestSpansAgainstTheAPI: a trace of three spans in a session, sent by the writer and read
// back from the API: parents, kinds, session, tags, input and output, an error.
func TestSpansAgainstTheAPI(t *testing.T) {
	_, c, _ := served(t)
	ctx := WithSession(context.Background(), "conversation-42", "Support chat")
	ctx, root := c.StartSpan(ctx, "answer-ticket", WithTags(map[string]string{"team": "support"}))
	root.SetInput("Where is my order?")
	root.SetTraceTag("customer", "acme")
	root.SetSessionTag("channel", "email")
	toolCtx, tool := c.StartSpan(ctx, "lookup-order", WithKind(KindTool), WithAttributes(map[string]any{"order": 42}))
	_, query := c.StartSpan(toolCtx, "select-order", WithKind(KindDatabase))
	query.RecordError(errors.New("connection reset"))
	query.End()
	tool.SetOutput("shipped")
	tool.End()
	root.SetOutput("It has shipped.")
	root.End()
	require.NoError(t, c.Close(ctx))
	assert.Equal(t, WriterStats{Sent: 3}, c.SpanWriter().Stats())

	assert.Equal(t, root.TraceID(), tool.TraceID())
	assert.Equal(t, root.TraceID(), query.TraceID())
	spans, err := c.Spans(ctx, api.SpanQuery{TraceID: root.TraceID()})
	require.NoError(t, err)
	require.Len(t, spans, 3)
	byName := map[string]api.Span{}
	for _, s := range spans {
		byName[s.Name] = s
	}
	r, tl, q := byName["answer-ticket"], byName["lookup-order"], byName["select-order"]
	assert.Equal(t, root.ID(), r.ID)
	assert.Nil(t, r.ParentSpanID)
	assert.Equal(t, &r.ID, tl.ParentSpanID)
	assert.Equal(t, &tl.ID, q.ParentSpanID)
	assert.Equal(t, []string{"generic", "tool", "database"}, []string{r.Kind, tl.Kind, q.Kind})
	assert.Equal(t, []*string{ptr("ok"), ptr("ok"), ptr("error")}, []*string{r.Status, tl.Status, q.Status})
	assert.Equal(t, ptr("*errors.errorString"), q.ErrorCode)
	assert.Equal(t, ptr("connection reset"), q.ErrorMessage)
	assert.Equal(t, ptr("Where is my order?"), r.InputData)
	assert.Equal(t, ptr("It has shipped."), r.OutputData)
	assert.Equal(t, ptr("shipped"), tl.OutputData)
	assert.JSONEq(t, `{"order": 42}`, string(tl.Attributes))
	assert.Equal(t, map[string]string{"team": "support"}, r.Tags)
	assert.NotNil(t, r.EndedAt)
	require.NotNil(t, r.SessionID, "the session of the context")
	for _, s := range spans {
		assert.Equal(t, r.SessionID, s.SessionID, "every span of the trace is in the session")
	}

	sessions, err := c.Sessions(ctx, api.SessionQuery{ID: *r.SessionID})
	require.NoError(t, err)
	require.Len(t, sessions, 1)
	assert.Equal(t, ptr("Support chat"), sessions[0].Name)
	assert.Equal(t, map[string]string{"channel": "email"}, sessions[0].Tags)
	traces, err := c.Traces(ctx, api.TraceQuery{ID: root.TraceID()})
	require.NoError(t, err)
	require.Len(t, traces, 1)
	assert.Equal(t, 3, traces[0].SpanCount)
	assert.Equal(t, map[string]string{"customer": "acme"}, traces[0].Tags)
}

// TestSpanLifecycle: a span changes until End, is sent once, and a nil span does nothing.
func TestSpanLifecycle(t *testing.T) {
	c, sink := sunk(t)
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	ctx, s := c.StartSpan(context.Background(), "work", WithStartTime(start), WithKind(KindLLM))
	assert.Same(t, s, SpanFromContext(ctx))
	assert.Nil(t, SpanFromContext(context.Background()))
	s.SetAttribute("model", "gpt-4o-mini")
	s.Fail("quota", "out of credit")
	s.End()
	s.End()
	s.SetAttribute("late", true)
	s.SetOutput("late")
	assert.Equal(t, 1, c.SpanWriter().Stats().Queued, "ended once")

	var none *Span
	none.SetAttribute("k", "v")
	none.RecordError(errors.New("x"))
	none.End()
	assert.Empty(t, none.ID())
	s.RecordError(nil)

	require.NoError(t, c.Flush(context.Background()))
	batch := <-sink.batches
	require.Len(t, batch, 1)
	got := batch[0]
	assert.Equal(t, s.ID(), got["id"])
	assert.Equal(t, s.TraceID(), got["trace_id"])
	assert.NotContains(t, got, "parent_span_id", "a root span")
	assert.Equal(t, "llm", got["kind"])
	assert.Equal(t, "error", got["status"])
	assert.Equal(t, "quota", got["error_code"])
	assert.Equal(t, "2026-03-01T12:00:00Z", got["started_at"])
	assert.Equal(t, map[string]any{"model": "gpt-4o-mini"}, got["attributes"])
	assert.NotContains(t, got, "output_data")
}

// TestSpanError: RecordError names the API's code for the client's own errors.
func TestSpanError(t *testing.T) {
	c, sink := sunk(t)
	_, s := c.StartSpan(context.Background(), "call")
	s.RecordError(errors.Join(errors.New("while ensuring"), &Error{Status: 404, Code: api.CodeNotFound, Message: "no such prompt"}))
	s.End()
	require.NoError(t, c.Flush(context.Background()))
	got := (<-sink.batches)[0]
	assert.Equal(t, string(api.CodeNotFound), got["error_code"])
}

func TestNewUUID(t *testing.T) {
	format := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 1000 {
		id := newUUID()
		require.Regexp(t, format, id)
		require.False(t, seen[id], "ids repeat")
		seen[id] = true
	}
}

// BenchmarkSpan is the cost of recording a span with a few attributes: in the application
// (start, set, end: the span is encoded and queued), and end to end (also batched and sent,
// in batches of 100, to a server that discards them).
func BenchmarkSpan(b *testing.B) {
	record := func(c *Client, ctx context.Context) {
		ctx, s := c.StartSpan(ctx, "retrieve", WithKind(KindTool))
		s.SetAttribute("query", "shipping delays")
		s.SetAttribute("k", 5)
		s.SetTag("index", "faq")
		s.SetInput("shipping delays")
		s.SetOutput("3 documents")
		s.End()
		_ = ctx
	}
	b.Run("application", func(b *testing.B) {
		c, err := New(WithBaseURL("http://127.0.0.1:9"), WithAPIKey("k"), WithEnv(func(string) string { return "" }),
			withSpanTicks(make(chan time.Time)), WithSpanWriter(WriterConfig{BatchSize: maxBatchSpans}))
		require.NoError(b, err)
		w := c.SpanWriter()
		ctx, root := c.StartSpan(context.Background(), "request")
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			record(c, ctx)
			if i%512 == 511 {
				w.take(maxBatchSpans) // drained without sending: only the application's side is measured
			}
		}
		root.End()
		b.StopTimer()
		_ = c.Close(closed())
	})
	b.Run("sent", func(b *testing.B) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			_, _ = w.Write([]byte("[]"))
		}))
		b.Cleanup(srv.Close)
		c, err := New(WithBaseURL(srv.URL), WithAPIKey("k"), WithEnv(func(string) string { return "" }))
		require.NoError(b, err)
		ctx, root := c.StartSpan(context.Background(), "request")
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			record(c, ctx)
			if i%1000 == 999 {
				// A loop outruns any API: without waiting, the queue fills and spans are
				// dropped, which costs nothing to measure.
				require.NoError(b, c.Flush(ctx))
			}
		}
		root.End()
		require.NoError(b, c.Close(context.Background()))
		b.StopTimer()
		st := c.SpanWriter().Stats()
		require.Zero(b, st.Dropped, "%v", st.LastError)
	})
}

// closed is a context that has ended.
func closed() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

func ptr[T any](v T) *T { return &v }

// decodeBatch reads a POST /spans body.
func decodeBatch(t testing.TB, r io.Reader) []map[string]any {
	t.Helper()
	var batch []map[string]any
	require.NoError(t, json.NewDecoder(r).Decode(&batch))
	return batch
}
