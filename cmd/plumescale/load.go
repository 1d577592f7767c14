package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/plumehq/plume/api"
)

// Shapes of the generated project.
const (
	meanTraceSpans   = 10 // traces of 2 to 18 spans
	bigTraceSpans    = 10_000
	sessionShare     = 0.7  // traces that belong to a session
	errorShare       = 0.04 // spans that fail
	evaluationShare  = 0.1  // llm spans a judge evaluates
	feedbackShare    = 0.02 // linked llm spans people give feedback on
	evaluationsBatch = 100  // the most POST .../evaluations takes
)

// step is what one load step adds to the project.
type step struct {
	name string
	// spans is how many spans the step posts in all, the big traces' included.
	spans int
	// bigTraces of bigSize spans each.
	bigTraces, bigSize int
	// sessionTraces are traces of the big session (a few spans each).
	sessionTraces int
}

// loader posts a project's spans, evaluations and feedback through the API.
type loader struct {
	p           *plume
	batch       int
	concurrency int
	out         io.Writer
	// total is every span of the run, both steps; days is how far back the first is stored.
	total int64
	days  int

	slug, versionID, judgeID string
	bigSession               string
	bigTraceIDs              []string

	posted   atomic.Int64
	failures atomic.Int64

	mu        sync.Mutex
	sample    sample
	evaluated []string // llm span ids to evaluate
	feedback  []string // linked llm span ids to give feedback on
}

// sample is a trace of the first step, of a session of a few traces: the ids the queries look up.
type sample struct{ trace, session, root, span string }

// traceSpec is a trace to generate.
type traceSpec struct {
	id, session string
	spans       int
}

// prepare creates the prompt the llm spans are linked to and the judge that evaluates them
// (paused: its evaluations are posted by the loader, as an evaluator elsewhere would).
func (l *loader) prepare(ctx context.Context) error {
	l.slug = "support-bot"
	res := l.p.do(ctx, http.MethodPost, "/v1/tasks/"+l.slug+"/prompt/versions/ensure", mustJSON(map[string]any{
		"content": "You are a helpful support agent for {{product}}."}), nil)
	var v struct{ ID string }
	if err := decode(res, &v); err != nil {
		return fmt.Errorf("ensure a prompt version: %w", err)
	}
	l.versionID = v.ID
	res = l.p.do(ctx, http.MethodPost, "/projects/"+l.p.project+"/judges", mustJSON(map[string]any{
		"name": "helpfulness", "template": "Is the answer helpful? **Helpful**: it answers the question.", "paused": true}), nil)
	var j api.Judge
	if err := decode(res, &j); err != nil {
		return fmt.Errorf("create a judge: %w", err)
	}
	l.judgeID = j.ID
	l.bigSession = uuid.NewString()
	return nil
}

// run posts the step's spans with l.concurrency workers, then its evaluations and feedback.
func (l *loader) run(ctx context.Context, s step, seed uint64) error {
	specs := make(chan traceSpec)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		defer close(specs)
		produce(ctx, s, seed, l.bigSession, specs, func(id string) {
			l.mu.Lock()
			l.bigTraceIDs = append(l.bigTraceIDs, id)
			l.mu.Unlock()
		})
	}()
	start, before := time.Now(), l.posted.Load()
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(10 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				n := l.posted.Load() - before
				fmt.Fprintf(l.out, "  %s: %d of %d spans posted, %.0f spans/s\n", s.name, n, s.spans, float64(n)/time.Since(start).Seconds())
			}
		}
	}()
	var wg sync.WaitGroup
	errc := make(chan error, l.concurrency)
	for w := range l.concurrency {
		wg.Go(func() {
			if err := l.work(ctx, specs, rand.New(rand.NewPCG(seed, uint64(w)+1))); err != nil {
				errc <- err
				cancel()
			}
		})
	}
	wg.Wait()
	close(done)
	select {
	case err := <-errc:
		return err
	default:
	}
	n := l.posted.Load() - before
	fmt.Fprintf(l.out, "  %s: %d spans posted in %s (%.0f spans/s), %d batches sent again after a 5xx\n", s.name, n,
		time.Since(start).Round(time.Second), float64(n)/time.Since(start).Seconds(), l.failures.Load())
	return nil
}

// produce sends the step's traces: its big traces first, then traces of 2 to 18 spans until the
// step's spans are all given, the big session's spread among them, the others in sessions of a
// few traces or in none.
func produce(ctx context.Context, s step, seed uint64, bigSession string, specs chan<- traceSpec, big func(id string)) {
	rng := rand.New(rand.NewPCG(seed, 0))
	send := func(t traceSpec) bool {
		select {
		case specs <- t:
			return true
		case <-ctx.Done():
			return false
		}
	}
	left := s.spans
	for range s.bigTraces {
		id := uuid.NewString()
		big(id)
		if !send(traceSpec{id: id, spans: s.bigSize}) {
			return
		}
		left -= s.bigSize
	}
	traces := max(left/meanTraceSpans, 1)
	every := max(traces/max(s.sessionTraces, 1), 1)
	session, sessionLeft, inBig := "", 0, 0
	for i := 0; left > 0; i++ {
		n := min(2+rng.IntN(2*meanTraceSpans-3), left)
		t := traceSpec{id: uuid.NewString(), spans: n}
		switch {
		case i%every == 0 && inBig < s.sessionTraces:
			t.session = bigSession
			inBig++
		case rng.Float64() < sessionShare:
			if sessionLeft == 0 {
				session, sessionLeft = uuid.NewString(), 1+rng.IntN(8)
			}
			t.session = session
			sessionLeft--
		}
		if !send(t) {
			return
		}
		left -= n
	}
}

// work generates the spans of the traces it takes and posts them in batches of l.batch, in the
// order an SDK sends them (a span when it ends: children before their parents).
func (l *loader) work(ctx context.Context, specs <-chan traceSpec, rng *rand.Rand) error {
	var buf []api.SpanInput
	flush := func() error {
		if len(buf) == 0 {
			return nil
		}
		err := l.post(ctx, buf)
		buf = buf[:0]
		return err
	}
	for t := range specs {
		for _, s := range l.trace(t, rng) {
			buf = append(buf, s)
			if len(buf) == l.batch {
				if err := flush(); err != nil {
					return err
				}
			}
		}
	}
	return flush()
}

// post sends one batch; every span must be stored. Then the clock moves on.
func (l *loader) post(ctx context.Context, spans []api.SpanInput) error {
	body := mustJSON(spans)
	for attempt := 0; ; attempt++ {
		res := l.p.do(ctx, http.MethodPost, "/spans", body, nil)
		if res.status == http.StatusOK && res.header.Get("X-Plume-Rejected") == "" {
			break
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if res.status >= 500 && attempt < 5 { // a retry, as the SDKs retry
			l.failures.Add(1)
			time.Sleep(time.Duration(attempt+1) * 200 * time.Millisecond)
			continue
		}
		return fmt.Errorf("POST /spans: %d %s %.300s", res.status, res.header.Get("X-Plume-Rejected-Spans"), res.body)
	}
	done := l.posted.Add(int64(len(spans)))
	day := 24 * time.Hour
	l.p.clock.setLag(time.Duration(float64(time.Duration(l.days)*day) * (1 - float64(done)/float64(l.total))))
	return nil
}

var (
	rootNames  = []string{"agent.run", "chat.turn", "rag.answer", "support.ticket"}
	toolNames  = []string{"tool.search", "tool.calculator", "tool.weather", "tool.crm_lookup"}
	errorCodes = []string{"timeout", "rate_limited", "tool_error"}
	models     = []string{"gpt-4o-mini", "gpt-4o-mini", "gpt-4o-mini", "gpt-4o"}
)

// trace generates a trace's spans in the order an SDK sends them: grandchildren, children,
// then the root. Its times end now (the stack's clock) and spread over a few seconds.
func (l *loader) trace(t traceSpec, rng *rand.Rand) []api.SpanInput {
	now := l.p.clock.now()
	rootStart := now.Add(-time.Duration(1+rng.IntN(30)) * time.Second)
	env := "prod"
	if rng.Float64() < 0.2 {
		env = "staging"
	}
	traceTags := map[string]string{"env": env, "customer": fmt.Sprintf("c-%02d", rng.IntN(50))}
	root := api.SpanInput{ID: uuid.NewString(), TraceID: t.id, Name: rootNames[rng.IntN(len(rootNames))], Kind: api.SpanKindGeneric,
		Status: "ok", StartedAt: rootStart, EndedAt: now, TraceTags: traceTags, Tags: map[string]string{"env": env}}
	if t.session != "" {
		root.Session = &api.SessionRef{ID: t.session, Name: "conversation " + t.session[:8]}
		plan := "free"
		if t.session[0] < '4' {
			plan = "pro"
		}
		root.SessionTags = map[string]string{"plan": plan}
	}
	input := chat(rng, 80, 400)
	root.InputData = &input
	out := sentence(rng, 40, 300)
	root.OutputData = &out

	children := make([]api.SpanInput, 0, t.spans-1)
	var parents []string
	for i := 1; i < t.spans; i++ {
		parent := root.ID
		if len(parents) > 0 && rng.IntN(3) == 0 {
			parent = parents[rng.IntN(len(parents))]
		}
		start := rootStart.Add(time.Duration(rng.IntN(int(now.Sub(rootStart)/time.Millisecond))) * time.Millisecond)
		end := start.Add(time.Duration(20+rng.IntN(4000)) * time.Millisecond)
		if end.After(now) {
			end = now
		}
		s := api.SpanInput{ID: uuid.NewString(), TraceID: t.id, ParentSpanID: parent, StartedAt: start, EndedAt: end,
			Status: "ok", Tags: map[string]string{"env": env}}
		switch r := rng.Float64(); {
		case r < 0.4:
			l.llmSpan(&s, rng, t.session == l.bigSession)
		case r < 0.75:
			s.Kind, s.Name = api.SpanKindTool, toolNames[rng.IntN(len(toolNames))]
			in, o := sentence(rng, 20, 120), sentence(rng, 20, 300)
			s.InputData, s.OutputData = &in, &o
		case r < 0.9:
			s.Kind, s.Name = "vector_store", "retriever.query"
			in := sentence(rng, 20, 80)
			s.InputData = &in
		default:
			s.Kind, s.Name = "http", "http.get"
		}
		if rng.Float64() < errorShare {
			s.Status, s.ErrorCode, s.ErrorMessage = "error", errorCodes[rng.IntN(len(errorCodes))], "the call failed"
		}
		if s.Kind != api.SpanKindLLM && rng.IntN(4) == 0 {
			parents = append(parents, s.ID)
		}
		children = append(children, s)
	}
	// An SDK sends a span when it ends: the latest ends go last, the root after all.
	slicesSortByEnd(children)
	if t.session != "" && t.session != l.bigSession && len(children) > 0 {
		l.mu.Lock()
		if l.sample.trace == "" {
			l.sample = sample{trace: t.id, session: t.session, root: root.ID, span: children[0].ID}
		}
		l.mu.Unlock()
	}
	return append(children, root)
}

// llmSpan makes s a model call, priced by its model and tokens; half are linked to the prompt
// (its completions), some of those chosen for an evaluation or feedback.
func (l *loader) llmSpan(s *api.SpanInput, rng *rand.Rand, bigSession bool) {
	s.Kind, s.Name = api.SpanKindLLM, "openai.chat"
	in, o := chat(rng, 200, 1500), sentence(rng, 50, 800)
	s.InputData, s.OutputData = &in, &o
	attrs := map[string]any{"provider": "openai", "model": models[rng.IntN(len(models))],
		"inputTokens": 100 + rng.IntN(2000), "outputTokens": 10 + rng.IntN(500)}
	linked := rng.IntN(2) == 0 || bigSession
	if linked {
		attrs["zeroeval"] = map[string]any{"task": l.slug, "prompt_slug": l.slug, "prompt_version_id": l.versionID}
	}
	s.Attributes = attrs
	evaluate, feedback := rng.Float64() < evaluationShare || bigSession, linked && (rng.Float64() < feedbackShare || bigSession)
	if evaluate || feedback {
		l.mu.Lock()
		if evaluate {
			l.evaluated = append(l.evaluated, s.ID)
		}
		if feedback {
			l.feedback = append(l.feedback, s.ID)
		}
		l.mu.Unlock()
	}
}

// judge posts the evaluations and feedback chosen since the last call: evaluations in batches
// of 100, feedback one by one, with l.concurrency requests at a time.
func (l *loader) judge(ctx context.Context, seed uint64) (evaluations, feedback int, err error) {
	l.mu.Lock()
	evaluated, given := l.evaluated, l.feedback
	l.evaluated, l.feedback = nil, nil
	l.mu.Unlock()
	var jobs []func() error
	for i := 0; i < len(evaluated); i += evaluationsBatch {
		ids := evaluated[i:min(i+evaluationsBatch, len(evaluated))]
		jobs = append(jobs, func() error {
			rng := rand.New(rand.NewPCG(seed, uint64(i)))
			reqs := make([]api.EvaluationRequest, len(ids))
			for k, id := range ids {
				pass := rng.Float64() < 0.8
				reqs[k] = api.EvaluationRequest{SpanID: id, EvaluationResult: &pass, EvaluationReason: "the answer addresses the question", ModelUsed: "gpt-4o-mini"}
			}
			return expectOK(l.p.do(ctx, http.MethodPost, "/projects/"+l.p.project+"/judges/"+l.judgeID+"/evaluations", mustJSON(reqs), nil))
		})
	}
	for i, id := range given {
		jobs = append(jobs, func() error {
			up := i%3 != 0
			reason := "thanks"
			return expectOK(l.p.do(ctx, http.MethodPost, "/v1/prompts/"+l.slug+"/completions/"+id+"/feedback",
				mustJSON(api.FeedbackRequest{ThumbsUp: &up, Reason: &reason}), nil))
		})
	}
	next := make(chan func() error)
	var wg sync.WaitGroup
	var first atomic.Value
	for range l.concurrency {
		wg.Go(func() {
			for job := range next {
				if err := job(); err != nil {
					first.CompareAndSwap(nil, err)
				}
			}
		})
	}
	for _, job := range jobs {
		next <- job
	}
	close(next)
	wg.Wait()
	if err, ok := first.Load().(error); ok {
		return 0, 0, err
	}
	return len(evaluated), len(given), nil
}

func slicesSortByEnd(spans []api.SpanInput) {
	slices.SortStableFunc(spans, func(a, b api.SpanInput) int { return a.EndedAt.Compare(b.EndedAt) })
}

var words = strings.Fields("the order shipped yesterday and should arrive within three business days please check " +
	"tracking number account refund policy allows returns thirty days after delivery invoice customer support " +
	"weather forecast tomorrow rain temperature search results document relevant answer question summary")

// sentence is text of lo to hi bytes.
func sentence(rng *rand.Rand, lo, hi int) string {
	n := lo + rng.IntN(hi-lo+1)
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(words[rng.IntN(len(words))])
	}
	return b.String()
}

// chat is a chat completion's messages, as the SDKs record an llm span's input.
func chat(rng *rand.Rand, lo, hi int) string {
	return string(mustJSON([]map[string]string{
		{"role": "system", "content": "You are a helpful support agent."},
		{"role": "user", "content": sentence(rng, lo, hi)},
	}))
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only the harness's own values are encoded
	}
	return b
}

func expectOK(res response) error {
	if res.status != http.StatusOK && res.status != http.StatusCreated {
		return fmt.Errorf("status %d: %.300s", res.status, res.body)
	}
	return nil
}

func decode(res response, v any) error {
	if err := expectOK(res); err != nil {
		return err
	}
	return json.Unmarshal(res.body, v)
}
