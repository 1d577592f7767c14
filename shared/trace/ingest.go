package trace

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/plumehq/plume/shared/errs"
)

// maxPutRounds bounds how often spans that lost a race to another writer are read, merged and
// written again in one request.
const maxPutRounds = 6

// writeConcurrency bounds the parallel aggregate updates of one batch.
const writeConcurrency = 16

// Service ingests span batches.
type Service struct {
	index     Index
	blobs     Blobs
	pricer    Pricer
	extractor *Extractor // nil: attachments stay inline
	now       func() time.Time
}

// Option configures a Service.
type Option func(*Service)

// WithClock makes the Service read the time from now instead of time.Now.
func WithClock(now func() time.Time) Option { return func(s *Service) { s.now = now } }

// NewService returns the tracing service over its stores.
func NewService(index Index, blobs Blobs, pricer Pricer, opts ...Option) *Service {
	s := &Service{index: index, blobs: blobs, pricer: pricer, now: time.Now}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Now is the service's clock.
func (s *Service) Now() time.Time { return s.now() }

// written is a span stored by this request and the summary it replaced (nil: it is new);
// same is true when the write changed nothing (an identical re-send).
type written struct {
	span Span
	prev *Summary
	same bool
}

// Ingested is what IngestBatch did with a batch.
type Ingested struct {
	// Stored are the spans stored, merged with earlier writes of the same ids, in request order
	// (a span sent twice in the batch once, at its first position).
	Stored []Span
	// Sent are the same spans as the request sent them, merged with nothing stored (attachments
	// moved to their objects and costs priced all the same): the answer to a caller that may not
	// read the project's spans.
	Sent []Span
	// Refused are the spans that could not be stored, each alone: the rest of the batch is.
	// Index is the span's position in the batch given to IngestBatch.
	Refused []Rejected
}

// IngestBatch stores a batch of valid spans of one project.
//
// The rule for a span id sent again: the later write wins field by field (Merge); the trace and
// session aggregates, which the change stream's consumer computes from the summaries
// (Index), change by the difference between the new and the replaced version, so an identical
// re-send adds nothing. Attachments are the exception to "later wins": they add up, by key.
// With WithExtractor, the attachments the spans carry inline are first moved to their own
// objects (Extractor.Extract). A span that names another trace than the one it is stored under
// (or than its first copy in the batch) is refused alone: a span cannot move between traces,
// and the rest of the batch is stored. Its reason names no stored value (the trace it is under
// is not the caller's to learn).
func (s *Service) IngestBatch(ctx context.Context, projectID string, spans []Span) (Ingested, error) {
	spans, pos := dedupe(spans)
	if s.extractor != nil {
		if err := s.extractor.Extract(ctx, projectID, spans); err != nil {
			return Ingested{}, err
		}
	}
	if err := s.price(ctx, projectID, spans); err != nil {
		return Ingested{}, err
	}
	stored := make(map[string]Span, len(spans))
	moved := map[spanRef]bool{}
	pending := spans
	for round := 1; len(pending) > 0; round++ {
		if round > maxPutRounds {
			return Ingested{}, errs.Unavailable("spans %v are being written concurrently by other requests; retry", ids(pending))
		}
		// The first round takes every span for new, without reading: an SDK sends a span once,
		// when it ends, so its key almost never exists yet, and a summary put is conditioned on
		// it not existing. A span that does exist (a re-send, a later write of a span) fails that
		// condition and goes round again, read and merged. A batch that names an id under two
		// traces is read first, so that the copy of the stored trace is the one kept.
		r, err := s.putRound(ctx, projectID, pending, round == 1 && len(ids(pending)) == len(pending))
		if err != nil {
			return Ingested{}, err
		}
		for _, w := range r.done {
			stored[w.span.ID] = w.span
		}
		for _, m := range r.moved {
			moved[m] = true
		}
		var again []Span // a new slice: pending shares its array with spans
		for _, sp := range pending {
			if slices.Contains(r.conflicts, sp.ID) && !moved[refOf(sp)] {
				again = append(again, sp)
			}
		}
		pending = again
	}
	var out Ingested
	for i, sp := range spans {
		if moved[refOf(sp)] {
			for _, p := range pos[i] {
				out.Refused = append(out.Refused, Rejected{Index: p, ID: sp.ID, Error: movedReason(sp)})
			}
			continue
		}
		out.Stored = append(out.Stored, stored[sp.ID])
		out.Sent = append(out.Sent, sp)
	}
	slices.SortFunc(out.Refused, func(a, b Rejected) int { return a.Index - b.Index })
	return out, nil
}

// Ingest is IngestBatch for callers whose every span must be stored: it returns the spans as
// stored, in request order, or an errs.CodeInvalid error naming the first refused span (after
// storing the others).
func (s *Service) Ingest(ctx context.Context, projectID string, spans []Span) ([]Span, error) {
	res, err := s.IngestBatch(ctx, projectID, spans)
	if err != nil {
		return nil, err
	}
	if len(res.Refused) > 0 {
		return nil, errs.Invalid("%s", res.Refused[0].Error)
	}
	return res.Stored, nil
}

// spanRef names a span of a batch, where one id may come with two traces (one of them moved).
type spanRef struct{ id, trace string }

func refOf(sp Span) spanRef { return spanRef{sp.ID, sp.TraceID} }

// movedReason is why sp, already stored under another trace, is refused.
func movedReason(sp Span) string {
	return fmt.Sprintf("span %s is stored under another trace; a span cannot move to trace %s", sp.ID, sp.TraceID)
}

// round is what one putRound did: the spans it stored (or found unchanged), the spans that
// lost a race to another writer (conflicts, to go round again), and the spans refused because
// they name another trace than the one they are stored under.
type round struct {
	done      []written
	conflicts []string
	moved     []spanRef
}

// putRound reads the stored versions of spans (unless unread: then every span is taken for
// new), merges, writes one batch object with every span that changes, then their summaries
// (Index.PutSummaries). Spans whose summary changed meanwhile are returned as conflicts, to go
// round again. A span id's trace is the one it is stored under, else that of its first copy in
// the batch: a copy naming another is returned as moved.
func (s *Service) putRound(ctx context.Context, projectID string, spans []Span, unread bool) (round, error) {
	prev := map[string]Summary{}
	if !unread {
		var err error
		if prev, err = s.index.Summaries(ctx, projectID, ids(spans)); err != nil {
			return round{}, err
		}
	}
	var r round
	home := make(map[string]string, len(spans))
	for _, sp := range spans {
		if _, ok := home[sp.ID]; ok {
			continue
		}
		home[sp.ID] = sp.TraceID
		if p, ok := prev[sp.ID]; ok {
			home[sp.ID] = p.TraceID
		}
	}
	olds, err := s.records(ctx, prev)
	if err != nil {
		return round{}, err
	}
	var toWrite []written
	for _, sp := range spans {
		if home[sp.ID] != sp.TraceID {
			r.moved = append(r.moved, refOf(sp))
			continue
		}
		p, ok := prev[sp.ID]
		if !ok {
			toWrite = append(toWrite, written{span: sp})
			continue
		}
		old, ok := olds[sp.ID]
		if !ok {
			// Its record expired with its batch object (span retention; LoadRecords): the span
			// is stored as sent, in place of the summary that outlived it.
			pc := p
			toWrite = append(toWrite, written{span: sp, prev: &pc})
			continue
		}
		// A record does not keep its usage (Span.LLM is parsed from a write, not stored), its
		// summary does: a later write that names none keeps the stored token counts.
		old.LLM = p.usage()
		m := Merge(old, sp)
		m.Attachments = mergeAttachments(old.Attachments, sp.Attachments)
		if sameRecord(old, m) {
			r.done = append(r.done, written{span: old, prev: &p, same: true})
			continue
		}
		pc := p
		toWrite = append(toWrite, written{span: m, prev: &pc})
	}
	if len(toWrite) == 0 {
		return r, nil
	}
	now := s.now().UTC()
	batchID := uuid.Must(uuid.NewV7()).String()
	key := BatchKey(projectID, now, batchID)
	var body []byte
	puts := make([]SummaryPut, len(toWrite))
	for i := range toWrite {
		w := &toWrite[i]
		start := len(body)
		body = w.span.AppendJSON(body)
		loc := Location{Key: key, Offset: int64(start), Length: int64(len(body) - start)}
		body = append(body, '\n')
		puts[i] = SummaryPut{Summary: Summarize(w.span, loc), Prev: w.prev}
	}
	if err := s.blobs.Put(ctx, key, body, "application/x-ndjson"); err != nil {
		return round{}, fmt.Errorf("write batch object: %w", err)
	}
	if r.conflicts, err = s.index.PutSummaries(ctx, projectID, batchID, puts, now); err != nil {
		return round{}, err
	}
	for _, w := range toWrite {
		if !slices.Contains(r.conflicts, w.span.ID) {
			r.done = append(r.done, w)
		}
	}
	return r, nil
}

// records loads the full stored records of the summaries, grouped by batch object.
func (s *Service) records(ctx context.Context, sums map[string]Summary) (map[string]Span, error) {
	if len(sums) == 0 {
		return nil, nil
	}
	locs := make(map[string]Location, len(sums))
	for id, sum := range sums {
		locs[id] = sum.Location
	}
	return LoadRecords(ctx, s.blobs, locs)
}

// sameRecord reports whether merging changed nothing but the update time.
func sameRecord(stored, merged Span) bool {
	merged.UpdatedAt = stored.UpdatedAt
	a, errA := json.Marshal(stored)
	b, errB := json.Marshal(merged)
	return errA == nil && errB == nil && bytes.Equal(a, b)
}

// price fills Cost for llm spans that do not carry one. A span whose CostSource is set was
// priced by the server already (the gateway prices each of its calls once, for its limits and
// its span); the span decoders never set it.
func (s *Service) price(ctx context.Context, projectID string, spans []Span) error {
	for i := range spans {
		sp := &spans[i]
		switch {
		case sp.CostSource != nil:
		case sp.Cost != nil:
			sp.CostSource = ptr("client")
		case sp.LLM != nil && s.pricer != nil:
			cost, source, ok, err := s.pricer.Cost(ctx, projectID, *sp.LLM)
			if err != nil {
				return err
			}
			if ok {
				sp.Cost = &cost
			}
			sp.CostSource = &source
		}
	}
	return nil
}

// dedupe merges the copies of one span (one id and trace) in a batch, in order, at the first
// one's place; pos holds the batch indexes of the copies of each span it returns. Copies of
// one id with different traces stay apart: the one of them that is not moving is stored
// (putRound).
func dedupe(spans []Span) (out []Span, pos [][]int) {
	at := make(map[spanRef]int, len(spans))
	out = spans[:0:0]
	for i, sp := range spans {
		if j, ok := at[refOf(sp)]; ok {
			out[j] = Merge(out[j], sp)
			pos[j] = append(pos[j], i)
			continue
		}
		at[refOf(sp)] = len(out)
		out = append(out, sp)
		pos = append(pos, []int{i})
	}
	return out, pos
}

// ids are the distinct ids of spans, in order (a batch may carry one id with two traces).
func ids(spans []Span) []string {
	out := make([]string, 0, len(spans))
	seen := make(map[string]bool, len(spans))
	for _, sp := range spans {
		if !seen[sp.ID] {
			seen[sp.ID] = true
			out = append(out, sp.ID)
		}
	}
	return out
}

func ptr[T any](v T) *T { return &v }
