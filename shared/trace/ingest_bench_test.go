package trace_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/plumehq/plume/shared/blob/blobtest"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/trace"
)

// BenchmarkIngest measures Service.Ingest against DynamoDB Local and the embedded S3: batches
// of new spans of new traces, each trace in a session and ending with its root span. Time here is DynamoDB Local's, not AWS's; what carries over is
// what it reports besides: DynamoDB requests per batch and write units per span (transactions
// as AWS bills them).
func BenchmarkIngest(b *testing.B) {
	for _, c := range []struct{ batch, traces int }{{20, 2}, {100, 1}} {
		b.Run(fmt.Sprintf("batch=%d/traces=%d", c.batch, c.traces), func(b *testing.B) {
			client, counter, name := ddbtest.NewTable(b)
			blobs, _, _ := blobtest.New(b)
			svc := trace.NewService(ddb.NewTraceStore(ddb.NewTable(client, name)), blobs, nil)
			ctx, project := context.Background(), uuid.NewString()
			start := time.Now().UTC().Add(-time.Hour)
			batches := make([][]trace.Span, b.N)
			for i := range batches {
				perTrace := c.batch / c.traces
				for range c.traces {
					traceID, sessionID := uuid.NewString(), uuid.NewString()
					root := uuid.NewString()
					for k := range perTrace {
						sp := span(traceID, "tool.search", &root, start.Add(time.Duration(k)*time.Millisecond), 850)
						if k == perTrace-1 {
							sp.ID, sp.ParentSpanID = root, nil
						}
						sp.SessionID, sp.Cost = &sessionID, ptr(0.001)
						batches[i] = append(batches[i], sp)
					}
				}
			}
			counter.Reset()
			b.ResetTimer()
			for i := range b.N {
				if _, err := svc.Ingest(ctx, project, batches[i]); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			_, writes := counter.Units()
			b.ReportMetric(float64(counter.Total())/float64(b.N), "ddb-requests/op")
			b.ReportMetric(writes/float64(b.N*c.batch), "write-units/span")
		})
	}
}
