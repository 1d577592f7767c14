package trace_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/shared/blob/blobtest"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/trace"
)

// faultyHeals is DynamoDB whose transactions (in ingestion only heals send them) lose their
// race where lose says: lose is given the transaction's number, from 1, and returns the index
// of its write whose condition fails, or -1 to let it through. A transaction that loses takes
// no effect.
type faultyHeals struct {
	ddb.API
	lose func(n int64, in *dynamodb.TransactWriteItemsInput) int
	n    atomic.Int64
}

func (f *faultyHeals) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, o ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	if i := f.lose(f.n.Add(1), in); i >= 0 {
		return nil, cancelled(in, i, "ConditionalCheckFailed")
	}
	return f.API.TransactWriteItems(ctx, in, o...)
}

// cancelled is DynamoDB's answer to a transaction whose i-th write failed with code, as
// ConditionalCheckFailed does when another healer changed the trace first.
func cancelled(in *dynamodb.TransactWriteItemsInput, i int, code string) error {
	reasons := make([]types.CancellationReason, len(in.TransactItems))
	for j := range reasons {
		reasons[j].Code = aws.String("None")
	}
	reasons[i].Code = aws.String(code)
	return &types.TransactionCanceledException{
		Message:             aws.String("Transaction cancelled, please refer cancellation reasons for specific reasons [" + code + "]"),
		CancellationReasons: reasons,
	}
}

// updateOf returns the index of the transaction's update of an item whose key names id, or -1.
func updateOf(in *dynamodb.TransactWriteItemsInput, id string) int {
	for i, w := range in.TransactItems {
		if w.Update == nil {
			continue
		}
		if pk, ok := w.Update.Key[infra.AttrPK].(*types.AttributeValueMemberS); ok && strings.HasSuffix(pk.Value, id) {
			return i
		}
	}
	return -1
}

// logRecords collects what the default logger writes until t ends.
func logRecords(t *testing.T) func() []map[string]any {
	t.Helper()
	var mu sync.Mutex
	var buf bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewJSONHandler(lockedWriter{&mu, &buf}, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(prev) })
	return func() []map[string]any {
		mu.Lock()
		defer mu.Unlock()
		var out []map[string]any
		for line := range strings.Lines(buf.String()) {
			var rec map[string]any
			require.NoError(t, json.Unmarshal([]byte(line), &rec))
			out = append(out, rec)
		}
		return out
	}
}

// lockedWriter lets the test read what the handler writes from many goroutines.
type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// TestHotTrace sends 100 batches of new spans of one trace and one session, 8 at a time, as an
// SDK flushing a long agent run does. Their heals contend for the trace and the session: one
// that keeps losing leaves its pending deltas to the next healer and says why, so every
// request succeeds, and once the sweeper has run, the trace and the session count every span
// once. DynamoDB Local's own races are left to chance; the other cases make heals lose, so that
// heals that must leave their deltas are certain: the first requests', when nothing is applied
// until the 80th transaction; every request's; or the session's.
func TestHotTrace(t *testing.T) {
	const concurrency, perBatch = 8, 3
	never := func(int64, *dynamodb.TransactWriteItemsInput, string) int { return -1 }
	tests := []struct {
		name    string
		batches int
		// lose is faultyHeals.lose, given the id of the session too.
		lose func(n int64, in *dynamodb.TransactWriteItemsInput, sessionID string) int
		// left is how many heals of the trace ("trace_id") or its session ("session_id") must
		// have been left to the next healer, at least.
		left    int
		leftKey string
		// pending is whether every delta of the trace is left to the sweeper.
		pending bool
	}{
		{name: "races as they come", batches: 100, lose: never},
		{
			// Nothing is applied until the 80th transaction: the first requests (8 at once,
			// each trying 9 times) lose every heal, and some of the pending deltas they leave
			// are applied by the requests after.
			name: "the first 80 heals lose", batches: 40, left: 1, leftKey: "trace_id",
			lose: func(n int64, _ *dynamodb.TransactWriteItemsInput, _ string) int {
				if n <= 80 {
					return 0
				}
				return -1
			},
		},
		{
			// A trace whose heals all lose: every request succeeds, and the sweeper applies all.
			name: "every heal loses", batches: 16, left: 16, leftKey: "trace_id", pending: true,
			lose: func(int64, *dynamodb.TransactWriteItemsInput, string) int { return 0 },
		},
		{
			// The trace's heals update the session in their own transaction until that loses;
			// then they give it pending deltas, whose heals lose too, until the sweeper.
			name: "every update of the session loses", batches: 24, left: 1, leftKey: "session_id",
			lose: func(_ int64, in *dynamodb.TransactWriteItemsInput, sessionID string) int {
				return updateOf(in, sessionID)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client, _, name := ddbtest.NewTable(t)
			blobs, _, _ := blobtest.New(t)
			healthy := ddb.NewTraceStore(ddb.NewTable(client, name))
			project, traceID, sessionID := uuid.NewString(), uuid.NewString(), uuid.NewString()
			api := &faultyHeals{API: client, lose: func(n int64, in *dynamodb.TransactWriteItemsInput) int {
				return tt.lose(n, in, sessionID)
			}}
			svc := trace.NewService(ddb.NewTraceStore(ddb.NewTable(api, name)), blobs, nil)
			logs := logRecords(t)
			start := time.Now().UTC().Add(-time.Hour).Truncate(time.Millisecond)

			lanes := make(chan struct{}, concurrency)
			var wg sync.WaitGroup
			failed := make([]error, tt.batches)
			for i := range tt.batches {
				lanes <- struct{}{}
				wg.Go(func() {
					defer func() { <-lanes }()
					ctx := context.Background()
					batch := make([]trace.Span, perBatch)
					for j := range batch {
						sp := span(traceID, fmt.Sprintf("step %d.%d", i, j), ptr(uuid.NewString()), start.Add(time.Duration(i*perBatch+j)*time.Second), 500)
						sp.SessionID, sp.Cost = &sessionID, ptr(0.25)
						if j == 0 {
							sp.Status = ptr("error")
						}
						batch[j] = sp
					}
					_, failed[i] = svc.Ingest(ctx, project, batch)
				})
			}
			wg.Wait()
			for i, err := range failed {
				assert.NoError(t, err, "batch %d (%s)", i, errs.CodeOf(err))
			}

			left := 0
			for _, rec := range logs() {
				if rec["level"] != "WARN" {
					continue
				}
				assert.Contains(t, rec["msg"], "left to the next healer", "%v", rec)
				assert.Contains(t, []any{traceID, sessionID}, cmp.Or(rec["trace_id"], rec["session_id"]), "%v", rec)
				assert.Contains(t, rec["cause"], "ConditionalCheckFailed", "%v", rec)
				assert.Greater(t, rec["attempts"], 1.0, "%v", rec)
				if rec[tt.leftKey] != nil {
					left++
				}
			}
			assert.GreaterOrEqual(t, left, tt.left, "heals left to the next healer, and said so")
			ctx := context.Background()
			if tt.pending {
				r, err := healthy.RecountTrace(ctx, project, traceID)
				require.NoError(t, err)
				assert.Equal(t, tt.batches, r.Pending, "each request's delta is left as written")
			}

			sweep(t, healthy, tt.name)
			checkExact(t, healthy, project, []string{traceID}, sessionID, tt.name)
			r, err := healthy.RecountTrace(ctx, project, traceID)
			require.NoError(t, err)
			assert.Equal(t, tt.batches*perBatch, r.Stored.Count)
			assert.Equal(t, tt.batches, r.Stored.Errors)
			assert.InDelta(t, float64(tt.batches*perBatch)*0.25, r.Stored.Cost, 1e-9)
			r, err = healthy.RecountSession(ctx, project, sessionID)
			require.NoError(t, err)
			assert.Equal(t, 1, r.Stored.Count)
			assert.Equal(t, tt.batches, r.Stored.Errors)
			assert.InDelta(t, float64(tt.batches*perBatch)*0.25, r.Stored.Cost, 1e-9)
		})
	}
}

// failingHeals is DynamoDB whose transactions fail with what fault returns, without taking
// effect.
type failingHeals struct {
	ddb.API
	fault func(in *dynamodb.TransactWriteItemsInput) error
}

func (f failingHeals) TransactWriteItems(_ context.Context, in *dynamodb.TransactWriteItemsInput, _ ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	return nil, f.fault(in)
}

// TestHealStorageFailureFailsRequest: a heal that fails for a reason other than a lost race
// fails the request, with the storage's code and its cause in the error, which the edge that
// answers the request logs once (shared/web, functions/otlp: 500s and 503s); ingestion itself
// logs nothing. The deltas it could not apply are still there for the sweeper.
func TestHealStorageFailureFailsRequest(t *testing.T) {
	tests := []struct {
		name  string
		fault func(in *dynamodb.TransactWriteItemsInput) error
		code  errs.Code
		cause string
	}{
		{
			name:  "throttled",
			fault: func(in *dynamodb.TransactWriteItemsInput) error { return cancelled(in, 0, "ThrottlingError") },
			code:  errs.CodeUnavailable,
			cause: "ThrottlingError",
		},
		{
			name: "storage error",
			fault: func(*dynamodb.TransactWriteItemsInput) error {
				return &smithy.GenericAPIError{Code: "InternalServerError", Message: "Internal server error"}
			},
			code:  errs.CodeInternal,
			cause: "InternalServerError",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			client, _, name := ddbtest.NewTable(t)
			blobs, _, _ := blobtest.New(t)
			healthy := ddb.NewTraceStore(ddb.NewTable(client, name))
			api := failingHeals{API: client, fault: tt.fault}
			svc := trace.NewService(ddb.NewTraceStore(ddb.NewTable(api, name)), blobs, nil)
			logs := logRecords(t)
			ctx, project, traceID, sessionID := context.Background(), uuid.NewString(), uuid.NewString(), uuid.NewString()
			sp := span(traceID, "root", nil, time.Now().UTC().Add(-time.Hour), 10)
			sp.SessionID, sp.Cost = &sessionID, ptr(0.5)

			_, err := svc.Ingest(ctx, project, []trace.Span{sp})
			require.Error(t, err)
			assert.Equal(t, tt.code, errs.CodeOf(err), "%v", err)
			var logged []map[string]any
			for _, rec := range logs() {
				if rec["level"] != "DEBUG" {
					logged = append(logged, rec)
				}
			}
			assert.Empty(t, logged, "logged by the edge, once")
			assert.ErrorContains(t, err, tt.cause, "the cause, for the edge to log")

			r, err := healthy.RecountTrace(ctx, project, traceID)
			require.NoError(t, err)
			assert.Equal(t, 1, r.Pending, "the delta is left, not lost")
			sweep(t, healthy, tt.name)
			checkExact(t, healthy, project, []string{traceID}, sessionID, tt.name)
			r, err = healthy.RecountTrace(ctx, project, traceID)
			require.NoError(t, err)
			assert.Equal(t, 1, r.Stored.Count)
		})
	}
}
