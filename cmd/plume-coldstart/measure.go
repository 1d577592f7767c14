package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"time"
)

// runtimeAPI is the fake Runtime API: it reports each GET /next and holds it open, so the
// runtime under test waits there until it is killed.
type runtimeAPI struct {
	addr string
	next chan time.Time
}

func startRuntimeAPI(ctx context.Context) (*runtimeAPI, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	api := &runtimeAPI{addr: ln.Addr().String(), next: make(chan time.Time, 1)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /2018-06-01/runtime/invocation/next", func(w http.ResponseWriter, r *http.Request) {
		select {
		case api.next <- time.Now():
		default:
		}
		<-r.Context().Done()
	})
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(ln) }()
	context.AfterFunc(ctx, func() { _ = srv.Close() })
	return api, nil
}

// env is a Lambda execution environment's, not this process's: what Lambda sets, the
// configuration every function reads, endpoints that are never called before the first event,
// and the Runtime API. Nothing is inherited: a machine's AWS_CA_BUNDLE alone (set on hosts
// behind a proxy, never in Lambda) costs each start about 4 ms parsing certificates.
func (api *runtimeAPI) env() []string {
	return append([]string{},
		"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=en_US.UTF-8", "TZ=:UTC",
		"LAMBDA_TASK_ROOT=/var/task", "_HANDLER=bootstrap",
		"AWS_LAMBDA_RUNTIME_API="+api.addr,
		"AWS_LAMBDA_FUNCTION_NAME=coldstart", "AWS_LAMBDA_FUNCTION_MEMORY_SIZE=512",
		"AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=coldstart", "AWS_SECRET_ACCESS_KEY=coldstart",
		"AWS_ENDPOINT_URL=http://127.0.0.1:9",
		"TABLE_NAME=coldstart", "BUCKET_NAME=coldstart",
		"PLUME_OPTIMIZATION_QUEUE_URL=http://127.0.0.1:9/000000000000/coldstart",
	)
}

// start runs bin until its first GET /next and returns how long that took.
func (api *runtimeAPI) start(ctx context.Context, bin string, extraEnv ...string) (time.Duration, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.Command(bin)
	cmd.Env = append(api.env(), extraEnv...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	for len(api.next) > 0 { // a late GET of an earlier process
		<-api.next
	}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Kill()
		<-exited
	}()
	select {
	case t := <-api.next:
		return t.Sub(t0), out.Bytes(), nil
	case err := <-exited:
		exited <- err
		return 0, nil, fmt.Errorf("%s exited before its first GET /next (%v):\n%s", bin, err, out.Bytes())
	case <-ctx.Done():
		return 0, nil, fmt.Errorf("%s: no GET /next: %w", bin, ctx.Err())
	}
}

// result is one function's figures.
type result struct {
	binary
	median time.Duration
}

// measure starts every binary once per round, in the same order each round, and takes each
// one's median over the rounds.
func measure(ctx context.Context, bins []binary, runs int) ([]result, error) {
	api, err := startRuntimeAPI(ctx)
	if err != nil {
		return nil, err
	}
	times := make([][]time.Duration, len(bins))
	for range runs {
		for i, b := range bins {
			d, _, err := api.start(ctx, b.host)
			if err != nil {
				return nil, err
			}
			times[i] = append(times[i], d)
		}
	}
	res := make([]result, len(bins))
	for i, b := range bins {
		slices.Sort(times[i])
		res[i] = result{binary: b, median: times[i][len(times[i])/2]}
	}
	return res, nil
}

// Limits of issue 31.
const (
	maxInitRatio = 2.0
	maxSize      = 15 << 20
)

func printTable(w io.Writer, res []result, runs int) {
	floor := res[0].median // the hello world comes first
	fmt.Fprintf(w, "cold start: process start to the first GET /next, median of %d rounds; bootstrap: arm64\n\n", runs)
	fmt.Fprintf(w, "| function | init | x hello world | bootstrap |\n|---|---|---|---|\n")
	for _, r := range res {
		ratio := float64(r.median) / float64(floor)
		mark := ""
		if ratio > maxInitRatio || r.deployed > maxSize {
			mark = " (over)"
		}
		fmt.Fprintf(w, "| %s | %.1f ms | %.2fx | %.1f MB%s |\n", r.name,
			float64(r.median)/float64(time.Millisecond), ratio, float64(r.deployed)/(1<<20), mark)
	}
}

// initLine is one line of GODEBUG=inittrace=1:
// "init net/http @1.2 ms, 0.31 ms clock, 1024 bytes, 12 allocs".
var initLine = regexp.MustCompile(`^init (\S+) @[\d.]+ ms, ([\d.]+) ms clock, (\d+) bytes`)

type pkgInit struct {
	pkg   string
	clock float64
	bytes int
}

// printInitTrace runs each function once with GODEBUG=inittrace=1 and prints its total init
// clock time and its top packages.
func printInitTrace(ctx context.Context, w io.Writer, bins []binary, top int) error {
	api, err := startRuntimeAPI(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "\nGODEBUG=inittrace=1: package init, one run each (ms clock)\n\n")
	for _, b := range bins {
		_, out, err := api.start(ctx, b.host, "GODEBUG=inittrace=1")
		if err != nil {
			return err
		}
		var inits []pkgInit
		var total float64
		sc := bufio.NewScanner(bytes.NewReader(out))
		for sc.Scan() {
			m := initLine.FindStringSubmatch(sc.Text())
			if m == nil {
				continue
			}
			clock, _ := strconv.ParseFloat(m[2], 64)
			n, _ := strconv.Atoi(m[3])
			inits = append(inits, pkgInit{pkg: m[1], clock: clock, bytes: n})
			total += clock
		}
		sort.SliceStable(inits, func(i, j int) bool { return inits[i].clock > inits[j].clock })
		fmt.Fprintf(w, "- %s: %.2f ms in %d inits;", b.name, total, len(inits))
		for _, p := range inits[:min(top, len(inits))] {
			fmt.Fprintf(w, " %s %.2f", p.pkg, p.clock)
		}
		fmt.Fprintln(w)
	}
	return nil
}
