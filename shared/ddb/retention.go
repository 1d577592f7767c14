package ddb

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/plumehq/plume/infra"
)

// Span retention (PLUME_SPAN_RETENTION_DAYS, TraceStore's WithRetention): the bucket's
// lifecycle rules expire the span batches (spans/) and attachments (attachments/) that many
// days after they are written, and the tracing index in the table follows with DynamoDB's TTL
// (infra.AttrTTL, epoch seconds). Every tracing index item gets, on every write of it, the time
// of that write plus the retention:
//
//   - a span summary: the write of the batch that stored its current version, whose object
//     expires with it (S3 counts from the object's creation, which is not before the batch's
//     time, and rounds up to the next midnight, so the object never goes before its summary);
//   - a trace item and a session item: the latest expiry of what they aggregate (a trace's
//     spans, a session's traces), never lowered (the change stream's consumer reads the item
//     it updates), so a trace or session still receiving spans lives on, and one silent for
//     the retention goes, with its time-index entry (GSI2 keys are its own);
//   - a member item of a trace (the spans a batch added, and their GSI2 time-index entry) and a
//     completions item of a prompt (PC#: the llm spans a batch linked): their batch's write, so
//     they go with the batch object they point into;
//   - a session's per-trace item (T#<trace>): the end of the day the trace expires (linkTTL),
//     so it lives as long as the trace does, and a few hours more (it is written again once a
//     day of the trace's life, not at each of its records).
//
// Not expired, on purpose:
//
//   - the day registry (DAYS#<index>, one small item per project and index): expiring it would
//     drop the days of entries that still live (a trace's time-index entry stays in the day it
//     was created on while the trace keeps receiving spans). A day whose entries all expired
//     costs an empty Query per shard when a walk crosses it, nothing else;
//   - human feedback (FB#) and judge evaluations (EVAL#) in a span's partition: the spec says
//     nothing about data retention, and says that feedback on completions drives prompt
//     optimization; feedback and calibrations are what people said, small and few, and an
//     evaluation is what a calibration corrects. They outlive the span (its trace's feedback
//     stays readable through GSI3), and optimization examples whose span expired have no
//     input or output to show. Claims (CLAIM#) keep their own ClaimTTL.
//
// A span updated after it was first written keeps its member item of the first write, which
// expires with that write: the span is then still found by id until its own summary expires,
// but no longer listed in its trace. Trace and session aggregates (span_count, cost, ...) are
// not decreased by expiry: they count every span the trace ever had.
//
// With retention off (0, the default) no item carries the attribute and no request is added.

// WithRetention makes a TraceStore set the TTL of every tracing index item it writes to the
// time of the write plus d (0: never expire, the default). See retention.go.
func WithRetention(d time.Duration) TraceOption {
	return func(s *TraceStore) { s.retention = d }
}

// TraceOption configures a TraceStore.
type TraceOption func(*TraceStore)

// expiry is the TTL of an item written at at: epoch seconds, 0 with retention off.
func (s *TraceStore) expiry(at time.Time) int64 {
	if s.retention <= 0 {
		return 0
	}
	if at.IsZero() {
		at = time.Now()
	}
	return at.Add(s.retention).Unix()
}

// laterExpiry is the TTL of an item read as cur and written at at: never earlier than the one
// stored, so a write of old fields after newer ones does not shorten the item's life.
func (s *TraceStore) laterExpiry(cur map[string]types.AttributeValue, at time.Time) int64 {
	ttl := s.expiry(at)
	if old, ok := intAttr(cur, infra.AttrTTL); ok && ttl != 0 && old > ttl {
		return old
	}
	return ttl
}
