package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// maxDuration bounds a run whatever the flags say.
const maxDuration = 30 * time.Minute

// options are the parsed flags.
type options struct {
	baseURL     string
	key         string
	scenario    string
	concurrency int
	duration    time.Duration
	requests    int64
	warmup      time.Duration
	batch       int
	shape       string // python or typescript (spans)
	projectID   string
	task        string
	timeout     time.Duration
	jsonOut     string
	allowRemote bool
	pprofURL    string
	profileOut  string
	watch       []watchedProcess
	seed        uint64
}

// watchedProcess is a process whose CPU time the report shows (-watch name=pid).
type watchedProcess struct {
	name string
	pid  int
}

// watchFlag collects repeated -watch name=pid flags.
type watchFlag struct{ list *[]watchedProcess }

func (f watchFlag) String() string { return "" }

func (f watchFlag) Set(v string) error {
	name, pidText, ok := strings.Cut(v, "=")
	pid, err := strconv.Atoi(pidText)
	if !ok || name == "" || err != nil || pid <= 0 {
		return fmt.Errorf("want name=pid, not %q", v)
	}
	*f.list = append(*f.list, watchedProcess{name: name, pid: pid})
	return nil
}

func parseOptions(args []string, getenv func(string) string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("plume-load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.baseURL, "url", getenv("PLUME_API_URL"), "base URL of the API (PLUME_API_URL)")
	fs.StringVar(&o.key, "key", getenv("PLUME_API_KEY"), "API key (PLUME_API_KEY)")
	fs.StringVar(&o.scenario, "scenario", "spans", "spans, otlp or prompts")
	fs.IntVar(&o.concurrency, "concurrency", 8, "workers, each with one request in flight")
	fs.DurationVar(&o.duration, "duration", 15*time.Second, "measured phase length (0: only -requests bounds it)")
	fs.Int64Var(&o.requests, "requests", 0, "stop after this many measured requests (0: only -duration bounds it)")
	fs.DurationVar(&o.warmup, "warmup", 2*time.Second, "unmeasured load before the measured phase")
	fs.IntVar(&o.batch, "batch", 0, "spans per request (spans: 20; otlp: 100)")
	fs.StringVar(&o.shape, "shape", "", "span JSON as the python or typescript SDK writes it (default: python up to 20 spans, else typescript)")
	fs.StringVar(&o.projectID, "project-id", getenv("PLUME_PROJECT_ID"), "project of the key (prompts: pins the production tag; without it the by-tag fetch asks for latest)")
	fs.StringVar(&o.task, "task", "load-support-bot", "prompt slug the prompts scenario uses")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Second, "timeout of one request")
	fs.StringVar(&o.jsonOut, "json", "", "also write the report as JSON to this file (-: JSON on stdout instead of the table)")
	fs.BoolVar(&o.allowRemote, "allow-remote", false, "allow a base URL that is not a loopback address")
	fs.StringVar(&o.pprofURL, "pprof-url", "", "the server's net/http/pprof base URL: a CPU profile is taken over the measured phase")
	fs.StringVar(&o.profileOut, "profile-out", "cpu.pprof", "where the server's CPU profile is written (with -pprof-url)")
	fs.Var(watchFlag{&o.watch}, "watch", "name=pid of a local process whose CPU time to report (Linux /proc; repeatable)")
	fs.Uint64Var(&o.seed, "seed", 0, "seed of the generated ids and content (0: from the clock, so that runs against one server never reuse ids)")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return o, err
		}
		return o, &usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return o, &usageError{fmt.Sprintf("unexpected arguments %q", fs.Args())}
	}
	return o, o.check()
}

func (o *options) check() error {
	bad := func(format string, a ...any) error { return &usageError{fmt.Sprintf(format, a...)} }
	if o.baseURL == "" {
		return bad("-url (or PLUME_API_URL) is required")
	}
	if o.key == "" {
		return bad("-key (or PLUME_API_KEY) is required")
	}
	o.baseURL = strings.TrimRight(o.baseURL, "/")
	if err := checkTarget(o.baseURL, o.allowRemote); err != nil {
		return bad("-url: %v", err)
	}
	if o.pprofURL != "" {
		if err := checkTarget(o.pprofURL, false); err != nil {
			return bad("-pprof-url: %v", err)
		}
		if o.duration <= 0 {
			return bad("-pprof-url needs -duration: the profile covers the measured phase")
		}
	}
	switch o.scenario {
	case "spans", "otlp", "prompts":
	default:
		return bad("-scenario must be spans, otlp or prompts, not %q", o.scenario)
	}
	if o.concurrency < 1 || o.concurrency > 1024 {
		return bad("-concurrency must be 1 to 1024, not %d", o.concurrency)
	}
	if o.duration < 0 || o.requests < 0 || o.warmup < 0 || o.timeout <= 0 {
		return bad("-duration, -requests and -warmup cannot be negative; -timeout must be positive")
	}
	if o.duration == 0 && o.requests == 0 {
		return bad("give -duration or -requests: a run must be bounded")
	}
	if o.duration > maxDuration || o.warmup > maxDuration {
		return bad("-duration and -warmup are at most %s", maxDuration)
	}
	if o.seed == 0 {
		o.seed = uint64(time.Now().UnixNano())
	}
	if o.batch == 0 {
		o.batch = map[string]int{"spans": 20, "otlp": 100}[o.scenario]
	}
	if o.scenario != "prompts" && (o.batch < 1 || o.batch > 1000) {
		return bad("-batch must be 1 to 1000 (the server's MaxSpansPerBatch), not %d", o.batch)
	}
	switch o.shape {
	case "":
		o.shape = "python"
		if o.batch > 20 {
			o.shape = "typescript"
		}
	case "python", "typescript":
	default:
		return bad("-shape must be python or typescript, not %q", o.shape)
	}
	return nil
}

// checkTarget accepts an http(s) URL whose host is a loopback address (localhost, 127.0.0.0/8,
// ::1); any host when remote is allowed.
func checkTarget(raw string, allowRemote bool) error {
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("%q is not an http(s) URL", raw)
	}
	if allowRemote {
		return nil
	}
	host := u.Hostname()
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%s is not a loopback address; load tests run against plume-local (pass -allow-remote to aim elsewhere)", host)
}
