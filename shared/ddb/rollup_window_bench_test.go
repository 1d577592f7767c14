package ddb

import (
	"context"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/plumehq/plume/internal/cputime"
	"github.com/plumehq/plume/shared/blob/blobtest"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/trace"
)

// BenchmarkRollupWindow is RollupFunction's rollups over one shard-minute of a busy project:
// the stream records of 1,200 spans (icProject, SDK batches of 20), cut into the 12 batches of
// 100 records of one tumbling window (icWindowBatches). Each iteration is the next window of
// one shard (its records numbered after the last window's). Compare runs with benchstat:
//
//	go test -run '^$' -bench RollupWindow -cpu 1 -count 6 ./shared/ddb/ | benchstat -
//
// Its parts:
//
//   - window: RollupStore.ApplyWindow against DynamoDB Local, as Lambda invokes it: eleven
//     invocations that read the shard's window item and answer the state, and the last one,
//     which writes the window. cpu-ns/op is the process's CPU time per window (DynamoDB Local
//     runs in a process of its own, so this is the function's share), cpu-ns/record the same
//     per stream record, requests/op the DynamoDB requests per window.
//   - state: the same window's state alone, without DynamoDB: what each of the eleven
//     invocations does to it (decoded, the batch counted into it, encoded again), and the last
//     one's decoding; state-bytes is the state the last invocation is handed.
func BenchmarkRollupWindow(b *testing.B) {
	client, counter, table := ddbtest.NewStreamTable(b)
	blobs, _, _ := blobtest.New(b)
	var clock atomic.Pointer[time.Time]
	svc := trace.NewService(NewTraceStore(NewTable(client, table)), blobs, nil, trace.WithClock(func() time.Time { return *clock.Load() }))
	icIngest(b, svc, &clock, icProject(1200, "sdk", 20))
	_, records := captureRecordsIn(b, client, table, nil, icStreamBatch)
	batches := slices.Collect(slices.Chunk(records, icStreamBatch))
	if len(batches) < icWindowBatches {
		b.Fatalf("%d records make %d batches, want at least a window's %d", len(records), len(batches), icWindowBatches)
	}
	batches = batches[:icWindowBatches]
	n := 0
	for _, batch := range batches {
		n += len(batch)
	}
	// renumber gives window i's records the sequence numbers after window i-1's.
	renumber := func(i int) {
		seq := i * n
		for _, batch := range batches {
			for j := range batch {
				seq++
				batch[j].Sequence = strconv.Itoa(seq)
			}
		}
	}

	b.Run("window", func(b *testing.B) {
		ctx := context.Background()
		rollups := NewRollupStore(NewTable(client, table), 0)
		shard := "shardId-bench-" + table
		b.ReportAllocs()
		counter.Reset()
		cpu := cputime.Process()
		for i := 0; b.Loop(); i++ {
			renumber(i)
			var state map[string]string
			for j, batch := range batches {
				var err error
				if state, err = rollups.ApplyWindow(ctx, shard, batch, StreamWindow{State: state, Final: j == len(batches)-1}); err != nil {
					b.Fatal(err)
				}
			}
			if state != nil {
				b.Fatalf("the final invocation answered a state: %v", state)
			}
		}
		spent := float64(cputime.Process() - cpu)
		b.ReportMetric(spent/float64(b.N), "cpu-ns/op")
		b.ReportMetric(spent/float64(b.N*n), "cpu-ns/record")
		b.ReportMetric(float64(counter.Total())/float64(b.N), "requests/op")
	})

	b.Run("state", func(b *testing.B) {
		renumber(0)
		b.ReportAllocs()
		cpu := cputime.Process()
		var last string // the state the last invocation decodes
		for b.Loop() {
			var encoded string
			for j, batch := range batches {
				state, err := decodeRollupWindow(encoded)
				if err != nil {
					b.Fatal(err)
				}
				if j == len(batches)-1 {
					break // the last invocation writes the state with its batch
				}
				encoded = state.add(batch, "", nil).encode()
			}
			if last = encoded; len(last) > rollupStateMax {
				b.Fatalf("state of %d bytes, over %d", len(last), rollupStateMax)
			}
		}
		b.ReportMetric(float64(cputime.Process()-cpu)/float64(b.N), "cpu-ns/op")
		b.ReportMetric(float64(len(last)), "state-bytes")
	})
}
