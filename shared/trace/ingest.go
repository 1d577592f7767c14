package trace

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"golang.org/x/sync/errgroup"

	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/textcut"
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
// session aggregates change by the difference between the new and the replaced version, so an
// identical re-send adds nothing (though its first round writes a batch object and a pending
// delta that adds nothing: see IngestBatch). Attachments are the exception to "later wins":
// they add up, by key. With WithExtractor, the attachments the spans carry inline are first
// moved to their own objects (Extractor.Extract). A span that names another trace than
// the one it is stored under (or than its first copy in the batch) is refused alone: a span
// cannot move between traces, and the rest of the batch is stored. Its reason names no stored
// value (the trace it is under is not the caller's to learn).
//
// Every trace of the batch is healed at the end (Index.HealTrace), changed or not: a re-send
// of a batch whose request failed half-way finishes its aggregates.
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
	var own []Written     // the writes of this request, all settled once putRound returns
	var written []string  // the traces they wrote pending deltas to
	var notes []WriteNote // the notes listing them for the sweeper
	pending := spans
	for round := 1; len(pending) > 0; round++ {
		if round > maxPutRounds {
			return Ingested{}, errs.Unavailable("spans %v are being written concurrently by other requests; retry", ids(pending))
		}
		// The first round takes every span for new, without reading: an SDK sends a span once,
		// when it ends, so its key almost never exists yet, and a summary put is conditioned on
		// it not existing. A span that does exist (a re-send, a later write of a span) fails that
		// condition and goes round again, read and merged; its change in the round's pending
		// delta is dropped by the heal (its put can never take effect). A batch that names an
		// id under two traces is read first, so that the copy of the stored trace is the one
		// kept.
		r, err := s.putRound(ctx, projectID, pending, round == 1 && len(ids(pending)) == len(pending))
		if err != nil {
			return Ingested{}, err
		}
		own = append(own, r.writes...)
		written = append(written, r.traces...)
		if r.note.ID != "" {
			notes = append(notes, r.note)
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
	traceIDs := make([]string, 0, len(spans))
	for i, sp := range spans {
		if moved[refOf(sp)] {
			for _, p := range pos[i] {
				out.Refused = append(out.Refused, Rejected{Index: p, ID: sp.ID, Error: movedReason(sp)})
			}
			continue
		}
		out.Stored = append(out.Stored, stored[sp.ID])
		out.Sent = append(out.Sent, sp)
		if !slices.Contains(traceIDs, sp.TraceID) {
			traceIDs = append(traceIDs, sp.TraceID)
		}
	}
	for _, id := range written {
		// A trace written only by spans refused as moved (the unread first round wrote them
		// as new): its pending delta adds nothing, and is deleted now rather than swept.
		if !slices.Contains(traceIDs, id) {
			traceIDs = append(traceIDs, id)
		}
	}
	sessionOf := map[string]string{}
	for _, sp := range spans {
		if sp.SessionID != nil && sessionOf[sp.TraceID] == "" {
			sessionOf[sp.TraceID] = *sp.SessionID
		}
	}
	left, err := s.heal(ctx, projectID, bySession(traceIDs, sessionOf), own)
	if err != nil {
		return Ingested{}, err
	}
	if !left {
		// Every delta of the request's writes is applied: the sweeper has nothing to find
		// through its notes. Otherwise they stay, for the sweeper to finish what is left.
		for _, n := range notes {
			if err := s.index.ClearNote(ctx, projectID, n); err != nil {
				return Ingested{}, err
			}
		}
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

// round is what one putRound did: the spans it stored (or found unchanged), its writes, the
// spans that lost a race to another writer (conflicts, to go round again), and the spans
// refused because they name another trace than the one they are stored under.
type round struct {
	done      []written
	writes    []Written
	traces    []string // the traces of writes
	conflicts []string
	moved     []spanRef
	note      WriteNote // the traces of writes, noted for the sweeper (no ID: none)
}

// putRound reads the stored versions of spans (unless unread: then every span is taken for
// new), merges, writes one batch object with every span that changes, then each trace's
// changed spans with their pending delta (Index.WriteTrace).
// It returns the spans stored and the ids of its writes; spans whose summary changed meanwhile
// are returned as conflicts, to go round again. A span id's trace is the one it is stored
// under, else that of its first copy in the batch: a copy naming another is returned as moved.
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
		puts[i] = SummaryPut{Summary: Summarize(w.span, loc)}
		if w.prev != nil {
			puts[i].Prev = w.prev
		}
	}
	if err := s.blobs.Put(ctx, key, body, "application/x-ndjson"); err != nil {
		return round{}, fmt.Errorf("write batch object: %w", err)
	}

	writes := traceWrites(toWrite, puts, batchID, now)
	// The note first: a request that fails after it leaves the sweeper a way to its deltas.
	r.note = WriteNote{ID: batchID, At: now}
	for i := range writes {
		writes[i].Noted = true
		r.note.Traces = append(r.note.Traces, writes[i].Delta.TraceID)
	}
	if err := s.index.NoteWrites(ctx, projectID, r.note); err != nil {
		return round{}, err
	}
	conflicted := make([][]string, len(writes))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(writeConcurrency)
	for i, w := range writes {
		g.Go(func() (err error) {
			conflicted[i], err = s.index.WriteTrace(gctx, projectID, w)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return round{}, err
	}
	r.conflicts = slices.Concat(conflicted...)
	for _, w := range toWrite {
		if !slices.Contains(r.conflicts, w.span.ID) {
			r.done = append(r.done, w)
		}
	}
	r.writes = make([]Written, len(writes))
	for i, w := range writes {
		r.writes[i].WriteID = w.ID
		r.traces = append(r.traces, w.Delta.TraceID)
		for _, p := range w.Puts {
			if !slices.Contains(conflicted[i], p.Summary.SpanID) {
				r.writes[i].Stored = append(r.writes[i].Stored, p.Summary.SpanID)
			}
		}
	}
	return r, nil
}

// traceWrites groups the changed spans by trace, in writes of at most MaxSpansPerWrite spans,
// each with the delta it adds to its trace.
func traceWrites(changed []written, puts []SummaryPut, batchID string, now time.Time) []TraceWrite {
	byTrace := map[string][]int{}
	var order []string
	for i, w := range changed {
		id := w.span.TraceID
		if _, ok := byTrace[id]; !ok {
			order = append(order, id)
		}
		byTrace[id] = append(byTrace[id], i)
	}
	var out []TraceWrite
	for _, traceID := range order {
		for chunk := range slices.Chunk(byTrace[traceID], MaxSpansPerWrite) {
			first := changed[chunk[0]].span
			w := TraceWrite{
				ID:    uuid.Must(uuid.NewV7()).String(),
				Delta: TraceDelta{TraceID: traceID, FirstName: first.Name, MinStart: first.StartedAt, Batch: batchID, At: now},
			}
			for _, i := range chunk {
				addSpan(&w.Delta, changed[i].span, changed[i].prev)
				addListings(&w.Delta, changed[i], puts[i].Summary)
				w.Puts = append(w.Puts, puts[i])
			}
			out = append(out, w)
		}
	}
	return out
}

// addListings adds what a written span lists besides the aggregates: a prompt's completions,
// and its session's name and tags. Every write of an llm span linked to a prompt lists it by
// its batch, so that its listing lives as long as the span (retention); readers keep the
// listing by the batch that last wrote it (ddb's PromptCompletions).
func addListings(d *TraceDelta, w written, sum Summary) {
	sp := w.span
	if sum.Kind == KindLLM && sum.PromptSlug != "" {
		d.Changes[len(d.Changes)-1].Completion = sum.PromptSlug
	}
	if sp.SessionName != nil {
		d.SessionName = *sp.SessionName
	}
	d.SessionTags = withTags(d.SessionTags, sp.SessionTags)
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

// bySession groups traceIDs by their session (a trace of none, or of one this request does not
// name, is a group of its own), in order.
func bySession(traceIDs []string, sessionOf map[string]string) [][]string {
	var out [][]string
	at := map[string]int{}
	for _, id := range traceIDs {
		session := sessionOf[id]
		if i, ok := at[session]; ok && session != "" {
			out[i] = append(out[i], id)
			continue
		}
		at[session] = len(out)
		out = append(out, []string{id})
	}
	return out
}

// heal applies the pending deltas of traces, then of their sessions. own are the writes of the
// calling request, whose summary puts are all done.
//
// The traces of one session heal one after another: each heal updates the session in its own
// transaction, under the session's version, so two at once would cancel one of them (billed in
// full) and route its delta through a pending item of the session and a second transaction.
// An index that can heals them together instead, writing the session once (GroupHealer).
//
// Heals that keep losing to concurrent writers of the same trace or session are not failures:
// the Index leaves their deltas to the next healer and succeeds (HealTrace); left reports
// that some of own's deltas are among them, so the request's notes stay for the sweeper. What fails here is
// storage itself, and the request with it. Its cause travels in the error and is logged once,
// where the request is answered (shared/web.Error, the OTLP handler: 500s and 503s).
func (s *Service) heal(ctx context.Context, projectID string, groups [][]string, own []Written) (left bool, err error) {
	found := make([][]string, len(groups))
	var anyLeft atomic.Bool
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(writeConcurrency)
	for i, traceIDs := range groups {
		found[i] = make([]string, len(traceIDs))
		g.Go(func() error {
			healed, err := s.healGroup(gctx, projectID, traceIDs, own)
			if err != nil {
				return err
			}
			for j, h := range healed {
				found[i][j] = h.Session
				if h.Left {
					anyLeft.Store(true)
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return false, err
	}
	sessions := slices.Concat(found...)
	slices.Sort(sessions)
	sessions = slices.Compact(sessions)
	g, gctx = errgroup.WithContext(ctx)
	g.SetLimit(writeConcurrency)
	for _, id := range sessions {
		if id != "" {
			g.Go(func() error { return s.index.HealSession(gctx, projectID, id) })
		}
	}
	if err := g.Wait(); err != nil {
		return false, err
	}
	slog.DebugContext(ctx, "batch aggregated", "traces", len(slices.Concat(groups...)), "sessions", len(sessions))
	return anyLeft.Load(), nil
}

// healGroup heals traces of one session one after another (HealTrace), or together when the
// index can (GroupHealer).
func (s *Service) healGroup(ctx context.Context, projectID string, traceIDs []string, own []Written) ([]Healed, error) {
	if g, ok := s.index.(GroupHealer); ok && len(traceIDs) > 1 {
		return g.HealTraces(ctx, projectID, traceIDs, own...)
	}
	out := make([]Healed, len(traceIDs))
	for i, id := range traceIDs {
		h, err := s.index.HealTrace(ctx, projectID, id, own...)
		if err != nil {
			return nil, err
		}
		out[i] = h
	}
	return out, nil
}

// addSpan adds one written span to its trace's delta.
func addSpan(d *TraceDelta, sp Span, prev *Summary) {
	c := SpanChange{SpanID: sp.ID, New: prev == nil, Errors: btoi(sp.HasError()), Cost: deref(sp.Cost)}
	if prev != nil {
		c.Prev = prev.WriteID
		c.Errors -= btoi(prev.HasError)
		c.Cost -= deref(prev.Cost)
		// A minimum and a maximum cannot be undone by a difference: a span that starts later or
		// ends earlier than before makes the heal recompute the trace's extent.
		end, prevEnd := spanEnd(sp), prev.End()
		d.Shrink = d.Shrink || sp.StartedAt.After(prev.StartedAt) || (prevEnd != nil && (end == nil || end.Before(*prevEnd)))
	}
	d.Changes = append(d.Changes, c)
	d.MinStart = minTime(d.MinStart, sp.StartedAt)
	d.MaxEnd = maxTime(d.MaxEnd, spanEnd(sp))
	if d.SessionID == "" && sp.SessionID != nil {
		d.SessionID = *sp.SessionID
	}
	d.Tags = withTags(d.Tags, sp.TraceTags)
	if sp.ParentSpanID == nil {
		root := &RootSpan{SpanID: sp.ID, Name: sp.Name}
		if sp.Status != nil {
			root.Status = *sp.Status
		}
		if sp.InputData != nil {
			root.Input, _ = textcut.Cut(*sp.InputData, rootPreviewBytes)
		}
		if sp.OutputData != nil {
			root.Output, _ = textcut.Cut(*sp.OutputData, rootPreviewBytes)
		}
		d.Root = root
	}
}

// spanEnd is ended_at, else started_at plus duration_ms, else nil.
func spanEnd(sp Span) *time.Time {
	if sp.EndedAt != nil {
		return sp.EndedAt
	}
	if sp.DurationMS != nil {
		t := sp.StartedAt.Add(time.Duration(*sp.DurationMS * float64(time.Millisecond)))
		return &t
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

func minTime(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

func maxTime(a, b *time.Time) *time.Time {
	if a == nil || (b != nil && b.After(*a)) {
		return b
	}
	return a
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func deref(f *float64) float64 {
	if f == nil {
		return 0
	}
	return *f
}

func ptr[T any](v T) *T { return &v }
