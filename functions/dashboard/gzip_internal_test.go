package dashboard

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/auth"
)

// largeTracePage is the HTML of the first page of a 10,000-span trace as the trace page renders
// it for a signed-in session: a root and 9,999 children a second apart, with uuid ids, as
// TestLargeTraceInBrowser posts it.
func largeTracePage(tb testing.TB) []byte {
	tb.Helper()
	const n = 10_000
	at := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	traceID, rootID := uuid.NewString(), uuid.NewString()
	spans := make([]api.TreeSpan, spansPerPage)
	for i := range spans {
		id, parent, name := rootID, &rootID, "large"
		start, d := at, time.Duration(n)*time.Second
		if i > 0 {
			id, name = uuid.NewString(), fmt.Sprintf("step %d", i-1)
			start, d = at.Add(time.Duration(i-1)*time.Second), time.Second
		} else {
			parent = nil
		}
		end, status := start.Add(d), "ok"
		spans[i] = api.TreeSpan{SpanSummary: api.SpanSummary{ID: id, TraceID: traceID, ParentSpanID: parent, Name: name, Kind: "generic",
			Status: &status, StartedAt: start, EndedAt: &end}, Depth: min(i, 1), HasChildren: i == 0, Subtree: api.SubtreeTotals{Spans: 1}}
	}
	spans[0].Subtree.Spans = n
	end, ms := at.Add(n*time.Second), float64(n*1000)
	tr := api.Trace{ID: traceID, Name: "large", Status: "ok", StartedAt: &at, EndedAt: &end, DurationMS: &ms, SpanCount: n, RootSpanID: &rootID}
	d := traceData{
		Trace: tr, Rows: rowsOf(tr, spans), SpanTotal: n, Page: 1, Pages: n / spansPerPage, First: 1,
		Next: "/ui/traces/" + traceID + "?page=2",
	}
	sess := &session{WebSession: auth.WebSession{ProjectID: uuid.NewString(), KeyID: uuid.NewString(),
		User: auth.User{Name: "bench"}, CSRF: "csrf-token-of-the-session-0123456789abcdef"}, Role: auth.DefaultRole}
	var buf bytes.Buffer
	if err := pageTemplate("trace").ExecuteTemplate(&buf, "layout.html", page{Title: "Trace large", Nav: "traces", Session: sess, Data: d}); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkGzipTracePage compresses the first page of a 10,000-span trace at the levels worth
// considering for pages, each compressor reused as the pool reuses it; B/page is the body
// sent. web.GzipLevel is chosen from it.
func BenchmarkGzipTracePage(b *testing.B) {
	html := largeTracePage(b)
	levels := []struct {
		name  string
		level int
	}{{"BestSpeed", gzip.BestSpeed}, {"Default", gzip.DefaultCompression}}
	for _, l := range levels {
		b.Run(l.name, func(b *testing.B) {
			zw, err := gzip.NewWriterLevel(io.Discard, l.level)
			if err != nil {
				b.Fatal(err)
			}
			var out bytes.Buffer
			b.SetBytes(int64(len(html)))
			b.ReportAllocs()
			for b.Loop() {
				out.Reset()
				zw.Reset(&out)
				_, _ = zw.Write(html)
				_ = zw.Close()
			}
			b.ReportMetric(float64(out.Len()), "B/page")
			b.ReportMetric(float64(len(html)), "B/html")
		})
	}
}
