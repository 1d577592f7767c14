package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"time"
)

// options are the flags.
type options struct {
	tapURL, tapLog, streamsURL string
	spans, factor              int
	batch, concurrency, days   int
	bigTrace                   int
	jsonOut                    string
	seed                       uint64
}

func parse(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("plumescale", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.tapURL, "tap", "", "ddbtap's URL (the SDK's AWS_ENDPOINT_URL_DYNAMODB must point at it too)")
	fs.StringVar(&o.tapLog, "tap-log", "", "ddbtap's JSONL log")
	fs.StringVar(&o.streamsURL, "streams", "", "DynamoDB Local's own URL: the table is created and its stream read there, unpriced")
	fs.IntVar(&o.spans, "spans", 100_000, "spans of the first size; the second is -factor times as many")
	fs.IntVar(&o.factor, "factor", 10, "the second size over the first")
	fs.IntVar(&o.batch, "batch", 20, "spans per POST /spans (the Python SDK sends 20, the TypeScript SDK 100)")
	fs.IntVar(&o.concurrency, "concurrency", 8, "requests in flight while loading")
	fs.IntVar(&o.bigTrace, "big-trace", 0, "spans of the big traces (one in the first step, two more in the second); 0: 10,000, or a tenth of -spans when that is less, but more than 1,000 (a tree past 1,000 spans is paged)")
	fs.IntVar(&o.days, "days", 10, "the days the whole run's spans are stored over, the first size's in the first of them")
	fs.StringVar(&o.jsonOut, "json", "", "also write every figure to this file as JSON")
	fs.Uint64Var(&o.seed, "seed", 27, "seed of the generated project")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case o.tapURL == "" || o.tapLog == "" || o.streamsURL == "":
		return o, errors.New("-tap, -tap-log and -streams are required (scripts/scale.sh sets them)")
	case o.spans < 1000:
		return o, errors.New("-spans must be at least 1000")
	case o.factor < 2:
		return o, errors.New("-factor must be at least 2")
	case o.batch < 1 || o.batch > 1000:
		return o, errors.New("-batch must be 1 to 1000, as POST /spans takes")
	case o.bigTrace < 0 || 3*o.bigTrace > o.spans*(o.factor-1) || o.bigTrace > o.spans:
		return o, errors.New("-big-trace must fit the steps: at most -spans, and three of them within the second step")
	case o.concurrency < 1 || o.days < 1:
		return o, errors.New("-concurrency and -days must be positive")
	}
	return o, nil
}

// report is everything measured, as -json writes it.
type report struct {
	Options map[string]any `json:"options"`
	Ingest  []ingest       `json:"ingest"`
	Judged  []ingest       `json:"evaluations_and_feedback"`
	Sizes   [2]string      `json:"sizes"`
	Queries []row          `json:"queries"`
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	o, err := parse(args, stderr)
	if err != nil {
		return err
	}
	t := newTap(o.tapURL, o.tapLog)
	if err := t.phase(ctx, "setup"); err != nil {
		return err
	}
	p, err := startPlume(ctx, getenv, o.streamsURL, stderr)
	if err != nil {
		return err
	}
	defer p.close()

	first := int64(o.spans)
	total := first * int64(o.factor)
	l := &loader{p: p, batch: o.batch, concurrency: o.concurrency, out: stdout, total: total, days: o.days}
	p.clock.setLag(time.Duration(o.days) * 24 * time.Hour)
	if err := l.prepare(ctx); err != nil {
		return err
	}
	bigSize := o.bigTrace
	if bigSize == 0 {
		bigSize = min(bigTraceSpans, max(o.spans/10, 1001))
	}
	steps := []step{
		{name: "load " + sizeName(first), spans: o.spans, bigTraces: 1, bigSize: bigSize, sessionTraces: max(10, o.spans/1000)},
		{name: "load " + sizeName(total), spans: o.spans * (o.factor - 1), bigTraces: 2, bigSize: bigSize, sessionTraces: max(10, o.spans/1000) * (o.factor - 1)},
	}
	rep := report{Sizes: [2]string{sizeName(first), sizeName(total)},
		Options: map[string]any{"spans": o.spans, "factor": o.factor, "batch": o.batch, "concurrency": o.concurrency, "days": o.days, "big_trace_spans": bigSize}}
	fmt.Fprintf(stdout, "plumescale: project %s, %s then %s spans in batches of %d, %d in flight, a %d-span trace per size step\n",
		p.project, rep.Sizes[0], rep.Sizes[1], o.batch, o.concurrency, bigSize)

	var f fixture
	qs := queries()
	results := make([][2]measure, len(qs))
	for i, s := range steps {
		from := p.clock.now()
		in, err := loadStep(ctx, p, t, l, s, o, uint64(i)+o.seed*100)
		if err != nil {
			return err
		}
		rep.Ingest = append(rep.Ingest, in)
		judged, err := judgeStep(ctx, p, t, l, s, uint64(i)+o.seed*100)
		if err != nil {
			return err
		}
		rep.Judged = append(rep.Judged, judged)
		if i == 0 {
			to := p.clock.now()
			mid := from.Add(to.Sub(from) / 2).Truncate(time.Minute)
			f = fixture{project: p.project, judge: l.judgeID, sample: l.sample, bigTrace: l.bigTraceIDs[0], bigSession: l.bigSession,
				windowFrom: mid, windowTo: mid.Add(time.Hour), now: p.clock.now}
		}
		if f.dashboardCookie, err = signIn(ctx, p); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "measuring %d queries at %s spans\n", len(qs), rep.Sizes[i])
		for k, q := range qs {
			m, err := measureQuery(ctx, p, t, q, f, fmt.Sprintf("q%02d@%d", k, i))
			if err != nil {
				return fmt.Errorf("%s: %w", q.name, err)
			}
			results[k][i] = m
			fmt.Fprintf(stdout, "  %-45s %9s RU %5d requests %8.1f KB %7d ms %s\n", q.name, units(m.Cost.ReadUnits), m.Cost.Requests,
				float64(m.Bytes)/1000, m.Elapsed.Milliseconds(), m.Error)
		}
		rep.Queries = rep.Queries[:0]
		for k, q := range qs {
			rep.Queries = append(rep.Queries, row{Query: q.name, At: results[k]})
		}
		if err := writeJSON(o.jsonOut, rep); err != nil { // what is measured so far, should the next step fail
			return err
		}
	}

	fmt.Fprintln(stdout, "\nIngest, DynamoDB by AWS's billing rules (ddbtap), the stream consumer's list index and rollups included:")
	printIngest(stdout, rep.Ingest)
	fmt.Fprintln(stdout, "\nEvaluations and feedback posted (not spans; per million of them):")
	printIngest(stdout, rep.Judged)
	fmt.Fprintf(stdout, "\nQueries at %s and %s spans: read units by AWS's rules, DynamoDB requests, answer KB, wall time; x is the ratio:\n", rep.Sizes[0], rep.Sizes[1])
	flagged := printQueries(stdout, rep.Sizes, rep.Queries)
	fmt.Fprintf(stdout, "\n%d of %d queries flagged (a ratio above %.1f, a failed answer or a list cut at its scan bound)\n", flagged, len(rep.Queries), flagRatio)
	if o.jsonOut != "" {
		fmt.Fprintln(stdout, "figures as JSON:", o.jsonOut)
	}
	return nil
}

// writeJSON writes rep to path ("": nowhere).
func writeJSON(path string, rep report) error {
	if path == "" {
		return nil
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// loadStep posts a step's spans with the stream applied alongside, then drains the stream:
// its phase in ddbtap's log holds every write the spans caused.
func loadStep(ctx context.Context, p *plume, t *tap, l *loader, s step, o options, seed uint64) (ingest, error) {
	phase := "ingest:" + s.name
	if err := t.phase(ctx, phase); err != nil {
		return ingest{}, err
	}
	s3Before, start := p.s3.snapshot(), time.Now()
	p.pollInBackground(ctx)
	if err := l.run(ctx, s, seed); err != nil {
		return ingest{}, err
	}
	drained := time.Now()
	if err := p.drain(ctx, func(n int) { fmt.Fprintf(l.out, "  %s: draining the stream, %d batches applied\n", s.name, n) }); err != nil {
		return ingest{}, err
	}
	fmt.Fprintf(l.out, "  %s: stream drained in %s after the last post\n", s.name, time.Since(drained).Round(time.Second))
	in := ingest{Step: s.name, Spans: int64(s.spans), Batch: o.batch, S3: p.s3.snapshot().since(s3Before), Elapsed: time.Since(start)}
	if err := t.phase(ctx, "idle"); err != nil {
		return ingest{}, err
	}
	c, err := t.cost(phase)
	in.DynamoDB = c
	return in, err
}

// judgeStep posts the evaluations and feedback chosen while loading, then drains the stream.
func judgeStep(ctx context.Context, p *plume, t *tap, l *loader, s step, seed uint64) (ingest, error) {
	phase := "judge:" + s.name
	if err := t.phase(ctx, phase); err != nil {
		return ingest{}, err
	}
	s3Before, start := p.s3.snapshot(), time.Now()
	evaluations, feedback, err := l.judge(ctx, seed)
	if err != nil {
		return ingest{}, fmt.Errorf("post evaluations and feedback: %w", err)
	}
	if err := p.drain(ctx, func(int) {}); err != nil {
		return ingest{}, err
	}
	fmt.Fprintf(l.out, "  %s: %d evaluations and %d feedback posted in %s\n", s.name, evaluations, feedback, time.Since(start).Round(time.Second))
	in := ingest{Step: fmt.Sprintf("%s: %d evaluations, %d feedback", s.name, evaluations, feedback), Spans: int64(evaluations + feedback), Batch: evaluationsBatch,
		S3: p.s3.snapshot().since(s3Before), Elapsed: time.Since(start)}
	if err := t.phase(ctx, "idle"); err != nil {
		return ingest{}, err
	}
	c, err := t.cost(phase)
	in.DynamoDB = c
	return in, err
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// signIn signs in to the dashboard with the project's key and answers the session's cookie.
func signIn(ctx context.Context, p *plume) (string, error) {
	res := p.do(ctx, http.MethodGet, "/ui/login", nil, http.Header{"Cookie": {"none=1"}})
	m := csrfField.FindSubmatch(res.body)
	if m == nil {
		return "", fmt.Errorf("dashboard sign-in page: %d %.200s", res.status, res.body)
	}
	login := cookie(res.header, "plume_login")
	form := url.Values{"api_key": {p.key}, "csrf": {string(m[1])}}.Encode()
	res = p.do(ctx, http.MethodPost, "/ui/login", []byte(form), http.Header{"Cookie": {login},
		"Content-Type": {"application/x-www-form-urlencoded"}, "Origin": {"http://example.com"}})
	session := cookie(res.header, "plume_session")
	if res.status != http.StatusSeeOther || session == "" {
		return "", fmt.Errorf("dashboard sign-in: %d %.200s", res.status, res.body)
	}
	return session, nil
}

// cookie is the name=value of the cookie named name that header sets ("" when none).
func cookie(header http.Header, name string) string {
	for _, c := range (&http.Response{Header: header}).Cookies() {
		if c.Name == name && c.Value != "" {
			return c.Name + "=" + c.Value
		}
	}
	return ""
}
