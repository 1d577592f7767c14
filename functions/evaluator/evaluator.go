// Package evaluator is EvaluatorFunction, the judge runner: when a span batch lands in the
// bucket it asks every active judge of the batch's project for a verdict on the llm spans the
// judge takes (shared/judge/run), and writes the verdicts as evaluations. It serves no HTTP
// route; plume-local runs the same Runner in-process on the same trigger.
//
// # The trigger: S3 ObjectCreated on spans/
//
// A batch object (trace.BatchKey) is written by every writer of spans, POST /spans and OTLP
// alike, before their index items. The bucket notifies the evaluator of each one, and Lambda
// invokes it asynchronously. The other choice, an asynchronous Invoke by the ingest functions
// after their writes, was not taken because:
//   - ingestion keeps its latency and its cost: no Invoke call on the request path, no new
//     permission for the functions that face the SDKs, nothing to do when a project has no
//     judge (the evaluator learns that with one Query, off the request path);
//   - every writer of spans, present and future, is covered by one notification, and a batch
//     whose writer crashed after the object was stored is still judged;
//   - the payload is small (an object key), far from the asynchronous payload limit that a
//     batch of spans would exceed.
//
// What it costs: the object lands before its spans are indexed. The runner evaluates a span
// only when the span's summary points at this very object (the span's current version: an
// event for an older version of a span sent again evaluates nothing). A summary that is
// missing is read again for a few seconds (indexWaits), then fails the event while the object
// is younger than IndexGrace, so that Lambda retries it after its index has been written;
// after that, the span is taken to be lost with its failed request, and left.
//
// # Exactly once in effect
//
// S3 delivers a notification at least once, and Lambda retries a failed invocation twice, so
// the same batch can be evaluated several times, at once or later. Before calling a judge's
// model about a span the runner claims the pair (ddb.ClaimStore) for the span's content as the
// judge sees it (ContentHash): a pair already evaluated for that content is skipped, one being
// evaluated by another invocation fails this event (retried later, when the other is done),
// and the evaluation write is idempotent (one item per judge and span, counters changed once).
// So the model is called at most once per (judge, span content), and one evaluation is written,
// however often the event comes. A model call that fails releases its claim, so a retry of the
// event calls again at once.
//
// # Faults
//
// The model client retries 429s and 5xx itself (shared/llm). A span whose evaluation still
// fails fails the event after every other span and judge has been tried (one judge's failure
// never blocks another's), and Lambda retries the event; the spans already evaluated are
// skipped by their claims. After Lambda's retries the event goes to the function's on-failure
// destination, an SQS queue that `plume admin replay-evaluations` replays. Every failed span
// is logged with its judge and error, and every event with its counts (Report).
//
// # Concurrency and the bill
//
// One invocation evaluates one batch, so one project. Its model calls are bounded by
// Config.Concurrency, and those to one provider by Config.ProviderConcurrency; the function's
// reserved concurrency (template parameter EvaluatorConcurrency) bounds the invocations. So at
// most EvaluatorConcurrency × Concurrency calls are in flight in a deployment, and a burst of
// spans queues in Lambda's asynchronous queue rather than in the providers' rate limiters.
// What a judge costs is set by its sample_rate.
package evaluator

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strconv"
	"sync"
	"time"

	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/judge"
	"github.com/plumehq/plume/shared/judge/run"
	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/trace"
)

// Judges reads a project's judges and writes their evaluations (ddb.JudgeStore).
type Judges interface {
	Judges(ctx context.Context, projectID string) ([]judge.Judge, error)
	Judge(ctx context.Context, projectID, judgeID string) (judge.Judge, error)
	PutEvaluations(ctx context.Context, j judge.Judge, evs []judge.Evaluation) ([]judge.Evaluation, error)
}

// Claims are the judge claims that make model calls happen once (ddb.ClaimStore).
type Claims interface {
	Claim(ctx context.Context, projectID, judgeID, spanID, contentHash string, lease time.Duration, now time.Time) (judge.Claim, error)
	Complete(ctx context.Context, projectID, judgeID, spanID, token string) error
	Release(ctx context.Context, projectID, judgeID, spanID, token string) error
}

// Calibrations reads a judge's calibrated evaluations, newest first (ddb.FeedbackStore).
type Calibrations interface {
	Calibrations(ctx context.Context, projectID, judgeID string, q judge.CalibrationQuery) ([]judge.Pair, error)
}

// Index reads span summaries by id (ddb.TraceStore) and lists them, newest first, from the
// list index (trace.Queries.SpanSummaries).
type Index interface {
	Summaries(ctx context.Context, projectID string, spanIDs []string) (map[string]trace.Summary, error)
	SpanSummaries(ctx context.Context, projectID string, q trace.SpanQuery) ([]trace.Summary, trace.QueryInfo, error)
}

// Objects reads the bucket (blob.Store).
type Objects interface {
	Get(ctx context.Context, key string) ([]byte, error)
	GetRange(ctx context.Context, key string, offset, length int64) ([]byte, error)
}

// Defaults of Config.
const (
	DefaultConcurrency = 8
	DefaultLease       = 6 * time.Minute
	// DefaultIndexGrace is longer than any request can still be putting the summaries of the
	// batch object it wrote: the API functions' timeouts are under a minute.
	DefaultIndexGrace = 2 * time.Minute
	// DefaultWriteMargin is the time kept at the end of an invocation for writing the
	// evaluations and releasing the claims of the calls that did not finish.
	DefaultWriteMargin = 20 * time.Second
)

// Config tunes a Runner; zero fields take the defaults.
type Config struct {
	// DefaultModel is the model of judges that name none (PLUME_JUDGE_MODEL).
	DefaultModel string
	// Concurrency bounds the model calls in flight in one Runner (DefaultConcurrency).
	Concurrency int
	// ProviderConcurrency bounds those to one provider (Concurrency when 0).
	ProviderConcurrency int
	// Lease is how long a claim holds a (judge, span) for the caller: longer than the
	// function's timeout, so that a lease only expires for a worker that is gone.
	Lease time.Duration
	// IndexGrace is how long after its batch object was stored a span missing from the index
	// is waited for (the event fails, and is retried) rather than skipped.
	IndexGrace time.Duration
	// WriteMargin is kept before the invocation's deadline for the writes (DefaultWriteMargin).
	WriteMargin time.Duration
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Runner evaluates span batches. It is safe for concurrent use: plume-local runs one for every
// project, as a warm Lambda instance runs one for the events it is given, one at a time.
type Runner struct {
	judges       Judges
	claims       Claims
	calibrations Calibrations
	index        Index
	objects      Objects
	model        run.Caller
	cfg          Config

	calls     chan struct{}
	providers sync.Map // provider -> chan struct{}

	// experiments and requestObjects answer judge requests about experiments (WithExperiments).
	experiments    Experiments
	requestObjects RequestObjects
	versions       versionCache
}

// New returns a Runner.
func New(j Judges, c Claims, cal Calibrations, idx Index, obj Objects, model run.Caller, cfg Config) *Runner {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.ProviderConcurrency <= 0 || cfg.ProviderConcurrency > cfg.Concurrency {
		cfg.ProviderConcurrency = cfg.Concurrency
	}
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.IndexGrace <= 0 {
		cfg.IndexGrace = DefaultIndexGrace
	}
	if cfg.WriteMargin <= 0 {
		cfg.WriteMargin = DefaultWriteMargin
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.DefaultModel == "" {
		cfg.DefaultModel = llm.DefaultJudgeModel
	}
	return &Runner{
		judges: j, claims: c, calibrations: cal, index: idx, objects: obj, model: model, cfg: cfg,
		calls: make(chan struct{}, cfg.Concurrency),
	}
}

// Report counts what one event did; the runner logs it.
type Report struct {
	// Spans is the number of spans in the batch (distinct ids).
	Spans int `json:"spans"`
	// Judges is the number of active judges of the project.
	Judges int `json:"judges"`
	// Matched counts the (judge, span) pairs the judges take.
	Matched int `json:"matched"`
	// Superseded counts the matched pairs whose span has a newer version in another batch.
	Superseded int `json:"superseded"`
	// Unindexed counts the matched pairs whose span is not in the index (yet).
	Unindexed int `json:"unindexed"`
	// Done counts the pairs evaluated already for the same content (redeliveries).
	Done int `json:"done"`
	// Busy counts the pairs another invocation is evaluating now.
	Busy int `json:"busy"`
	// ModelCalls counts the judge model calls made (one per evaluation, retries inside).
	ModelCalls int `json:"model_calls"`
	// Evaluated counts the evaluations written.
	Evaluated int `json:"evaluated"`
	// Failed counts the pairs whose evaluation failed.
	Failed int `json:"failed"`
	// Cost is the model cost of the calls, in USD (priced models only).
	Cost float64 `json:"cost_usd"`
}

func (r *Report) add(o Report) {
	r.Spans += o.Spans
	r.Judges = max(r.Judges, o.Judges)
	r.Matched += o.Matched
	r.Superseded += o.Superseded
	r.Unindexed += o.Unindexed
	r.Done += o.Done
	r.Busy += o.Busy
	r.ModelCalls += o.ModelCalls
	r.Evaluated += o.Evaluated
	r.Failed += o.Failed
	r.Cost += o.Cost
}

// ErrRetry is the error (errors.Is) of an event that should be delivered again: some of its
// spans are being evaluated by another invocation, are not indexed yet, or failed.
var ErrRetry = errors.New("the batch is not fully evaluated; deliver the event again")

// Batch evaluates the span batch object at key, stored at storedAt (the notification's event
// time), and reports what it did. An object that is not a span batch, or that is gone, is
// skipped. The error wraps ErrRetry when the event should come again, with what failed.
func (r *Runner) Batch(ctx context.Context, key string, storedAt time.Time) (Report, error) {
	projectID, ok := trace.ParseBatchKey(key)
	if !ok {
		slog.WarnContext(ctx, "evaluator: not a span batch, skipped", "key", key)
		return Report{}, nil
	}
	judges, err := r.activeJudges(ctx, projectID)
	if err != nil || len(judges) == 0 {
		return Report{}, err
	}
	body, err := r.objects.Get(ctx, key)
	if errs.CodeOf(err) == errs.CodeNotFound {
		slog.WarnContext(ctx, "evaluator: batch object is gone, skipped", "key", key)
		return Report{Judges: len(judges)}, nil
	}
	if err != nil {
		return Report{}, fmt.Errorf("read batch %s: %w", key, err)
	}
	spans := decodeBatch(ctx, key, body)
	rep := Report{Spans: len(spans), Judges: len(judges)}

	pairs := matchPairs(judges, spans)
	rep.Matched = len(pairs)
	if len(pairs) == 0 {
		return rep, nil
	}
	waiting := r.cfg.Now().Sub(storedAt) < r.cfg.IndexGrace
	sums, err := r.summaries(ctx, projectID, spanIDs(pairs), waiting)
	if err != nil {
		return rep, fmt.Errorf("read span summaries of %s: %w", key, err)
	}
	current := pairs[:0]
	for _, p := range pairs {
		sum, ok := sums[p.span.ID]
		switch {
		case !ok:
			rep.Unindexed++
			if !waiting {
				slog.WarnContext(ctx, "evaluator: span never indexed, skipped", "key", key, "span_id", p.span.ID, "judge_id", p.judge.ID)
			}
		case sum.Location.Key != key:
			rep.Superseded++
		default:
			current = append(current, p)
		}
	}
	res, err := r.evaluate(ctx, projectID, current)
	rep.add(res)
	if waiting && rep.Unindexed > 0 {
		err = errors.Join(err, fmt.Errorf("%d spans of %s are not indexed yet", rep.Unindexed, key))
	}
	return rep, r.outcome(rep, err)
}

// indexWaits are the pauses before the summaries of a young batch's spans that are not indexed
// yet are read again. The batch object is written before the index items, and its event can
// arrive first (at once in plume-local): a few seconds of waiting spare the event a retry a
// minute later.
var indexWaits = []time.Duration{100 * time.Millisecond, 300 * time.Millisecond, 600 * time.Millisecond, time.Second, 2 * time.Second}

// summaries reads the summaries of ids; while waiting (the batch is younger than IndexGrace),
// it reads those missing again after each of indexWaits, until none is.
func (r *Runner) summaries(ctx context.Context, projectID string, ids []string, waiting bool) (map[string]trace.Summary, error) {
	sums, err := r.index.Summaries(ctx, projectID, ids)
	if err != nil || !waiting {
		return sums, err
	}
	for _, wait := range indexWaits {
		var missing []string
		for _, id := range ids {
			if _, ok := sums[id]; !ok {
				missing = append(missing, id)
			}
		}
		if len(missing) == 0 {
			break
		}
		select {
		case <-ctx.Done():
			return sums, nil // what is missing stays missing: the event is retried
		case <-time.After(wait):
		}
		more, err := r.index.Summaries(ctx, projectID, missing)
		if err != nil {
			return nil, err
		}
		maps.Copy(sums, more)
	}
	return sums, nil
}

// outcome is the error of an event with report rep and failures err: nil, or one that wraps
// ErrRetry and says what failed.
func (r *Runner) outcome(rep Report, err error) error {
	if rep.Busy > 0 {
		err = errors.Join(err, fmt.Errorf("%d evaluations are in progress in another invocation", rep.Busy))
	}
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrRetry, err)
}

// activeJudges are the project's judges that are not paused.
func (r *Runner) activeJudges(ctx context.Context, projectID string) ([]judge.Judge, error) {
	all, err := r.judges.Judges(ctx, projectID)
	if err != nil {
		return nil, fmt.Errorf("list judges of project %s: %w", projectID, err)
	}
	active := all[:0]
	for _, j := range all {
		if !j.Paused {
			active = append(active, j)
		}
	}
	return active, nil
}

// decodeBatch reads the spans of a batch object, one JSON record per line; a span id that
// comes twice is taken once, as its last line (the batch's latest version of it). A line that
// does not decode is logged and left: the object was written by Plume, so it is never
// expected.
func decodeBatch(ctx context.Context, key string, body []byte) []trace.Span {
	var spans []trace.Span
	at := map[string]int{}
	for n, line := range splitLines(body) {
		var sp trace.Span
		if err := json.Unmarshal(line, &sp); err != nil || sp.ID == "" {
			slog.ErrorContext(ctx, "evaluator: undecodable line in batch, skipped", "key", key, "line", n+1, "error", err)
			continue
		}
		if i, ok := at[sp.ID]; ok {
			spans[i] = sp
			continue
		}
		at[sp.ID] = len(spans)
		spans = append(spans, sp)
	}
	return spans
}

// splitLines splits NDJSON into its non-empty lines.
func splitLines(b []byte) [][]byte {
	var lines [][]byte
	for len(b) > 0 {
		i := 0
		for i < len(b) && b[i] != '\n' {
			i++
		}
		if line := b[:i]; len(line) > 0 {
			lines = append(lines, line)
		}
		if i == len(b) {
			break
		}
		b = b[i+1:]
	}
	return lines
}

// pair is one span a judge takes.
type pair struct {
	judge judge.Judge
	span  trace.Span
}

// matchPairs lists, judge by judge, the spans each judge takes (run.Matches).
func matchPairs(judges []judge.Judge, spans []trace.Span) []pair {
	var out []pair
	for _, j := range judges {
		for _, sp := range spans {
			if run.Matches(j, sp) {
				out = append(out, pair{j, sp})
			}
		}
	}
	return out
}

// spanIDs are the distinct span ids of pairs.
func spanIDs(pairs []pair) []string {
	seen := map[string]bool{}
	var ids []string
	for _, p := range pairs {
		if !seen[p.span.ID] {
			seen[p.span.ID] = true
			ids = append(ids, p.span.ID)
		}
	}
	return ids
}

// ContentHash identifies what judge j is shown of span sp with model defaultModel when it
// names none: the verdict request without the corrections (which change as people calibrate,
// and must not make a redelivered event call the model again). A change of the span's input or
// output, of the judge's template, type, range, criteria, temperature or model changes it, and
// the span is evaluated again when its batch is delivered again.
func ContentHash(j judge.Judge, sp trace.Span, defaultModel string) string {
	return newContentHasher(j, defaultModel).sum(sp)
}

// contentHasher computes ContentHash for the spans of one judge: the SHA-256 of the hash of
// the span-independent part of the request (model, temperature, system message, schema), made
// once, the rendered user message and the keys of the span's attachments.
type contentHasher struct {
	prompter *run.Prompter
	base     [sha256.Size]byte
}

func newContentHasher(j judge.Judge, defaultModel string) contentHasher {
	p := run.NewPrompter(j, nil, defaultModel)
	req := p.Request(trace.Span{})
	h := sha256.New()
	// Each part is length-prefixed, so that no two requests give the same bytes.
	for _, part := range []string{req.Model, strconv.FormatFloat(*req.Temperature, 'g', -1, 64), req.System, string(req.Schema.JSON)} {
		h.Write(binary.BigEndian.AppendUint64(nil, uint64(len(part))))
		h.Write([]byte(part))
	}
	c := contentHasher{prompter: p}
	h.Sum(c.base[:0])
	return c
}

func (c contentHasher) sum(sp trace.Span) string {
	h := sha256.New()
	h.Write(c.base[:])
	text := c.prompter.Request(sp).Messages[0].Text
	h.Write(binary.BigEndian.AppendUint64(nil, uint64(len(text))))
	h.Write([]byte(text))
	// The attachments' keys name their content (trace.AttachmentKey), so a changed image
	// changes the hash.
	for _, a := range sp.Attachments {
		h.Write([]byte(a.Key + "\n"))
	}
	return hex.EncodeToString(h.Sum(nil))
}
