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
	"strings"
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
		"PLUME_WEBHOOK_QUEUE_URL=http://127.0.0.1:9/000000000000/coldstart-webhooks",
		"PLUME_WEBHOOK_DLQ_URL=http://127.0.0.1:9/000000000000/coldstart-webhooks-dlq",
		"PLUME_EVENT_BUS_NAME=coldstart",
	)
}

// start runs bin until its first GET /next and returns how long that took and the CPU time
// (user and system) the process had used by then: it waits there, so what it used until it was
// killed is its init's. The CPU time is what a loaded machine changes least.
func (api *runtimeAPI) start(ctx context.Context, bin string, extraEnv ...string) (wall, cpu time.Duration, out []byte, err error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.Command(bin)
	cmd.Env = append(api.env(), extraEnv...)
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	for len(api.next) > 0 { // a late GET of an earlier process
		<-api.next
	}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, nil, err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() time.Duration {
		_ = cmd.Process.Kill()
		<-exited
		return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	select {
	case t := <-api.next:
		wall = t.Sub(t0)
		cpu = stop()
		return wall, cpu, buf.Bytes(), nil
	case err := <-exited:
		return 0, 0, nil, fmt.Errorf("%s exited before its first GET /next (%v):\n%s", bin, err, buf.Bytes())
	case <-ctx.Done():
		stop()
		return 0, 0, nil, fmt.Errorf("%s: no GET /next: %w", bin, ctx.Err())
	}
}

// result is one function's figures.
type result struct {
	binary
	median    time.Duration // wall clock, process start to the first GET /next
	cpuMedian time.Duration // CPU time (user and system) by then
}

// measure starts every binary once per round, in the same order each round, and takes each
// one's medians over the rounds.
func measure(ctx context.Context, bins []binary, runs int) ([]result, error) {
	api, err := startRuntimeAPI(ctx)
	if err != nil {
		return nil, err
	}
	walls := make([][]time.Duration, len(bins))
	cpus := make([][]time.Duration, len(bins))
	for range runs {
		for i, b := range bins {
			wall, cpu, _, err := api.start(ctx, b.host)
			if err != nil {
				return nil, err
			}
			walls[i] = append(walls[i], wall)
			cpus[i] = append(cpus[i], cpu)
		}
	}
	res := make([]result, len(bins))
	for i, b := range bins {
		res[i] = result{binary: b, median: median(walls[i]), cpuMedian: median(cpus[i])}
	}
	return res, nil
}

func median(ds []time.Duration) time.Duration {
	slices.Sort(ds)
	return ds[len(ds)/2]
}

// Limits of issue 31.
const (
	maxInitRatio = 2.0
	maxSize      = 15 << 20
)

// sizeOwed are the functions known to be over maxSize, each with why (docs/performance.md,
// "What is left"): marked, but not failing the run. The list only shrinks.
var sizeOwed = map[string]string{}

// printTable writes the table; over reports whether a row is past a limit.
func printTable(w io.Writer, res []result, runs int) (over []string) {
	floor, cpuFloor := res[0].median, res[0].cpuMedian // the hello world comes first
	fmt.Fprintf(w, "cold start: process start to the first GET /next (wall clock and CPU time), median of %d rounds; bootstrap: arm64\n\n", runs)
	fmt.Fprintf(w, "| function | init | x hello world | init CPU | x hello world | bootstrap |\n|---|---|---|---|---|---|\n")
	for _, r := range res {
		ratio := float64(r.median) / float64(floor)
		cpuRatio := float64(r.cpuMedian) / float64(max(cpuFloor, time.Millisecond))
		mark := ""
		if ratio > maxInitRatio || r.deployed > maxSize {
			mark = " (over)"
		}
		if r.deployed > maxSize && !strings.HasSuffix(r.name, baseSuffix) && sizeOwed[r.name] == "" {
			over = append(over, fmt.Sprintf("%s: bootstrap %.1f MB, over %d MB", r.name, mb(r.deployed), maxSize>>20))
		}
		fmt.Fprintf(w, "| %s | %.1f ms | %.2fx | %.0f ms | %.2fx | %.1f MB%s |\n", r.name,
			ms(r.median), ratio, ms(r.cpuMedian), cpuRatio, mb(r.deployed), mark)
	}
	return over
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func mb(n int64) float64         { return float64(n) / (1 << 20) }

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
		_, _, out, err := api.start(ctx, b.host, "GODEBUG=inittrace=1")
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
