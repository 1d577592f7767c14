package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// profileCategory is one line of the profile summary: the samples whose stack contains any of
// markers and no marker of an earlier category.
type profileCategory struct {
	name    string
	markers []string
}

// profileCategories attribute plume-local's CPU to what it was done for, in order: the first
// category with a marker in a sample's stack takes the sample. Signing comes before the clients
// so that it is counted once whichever client signs; the embedded S3 server and the SDK's
// connection goroutines run beside the handlers, not under them.
var profileCategories = []profileCategory{
	{"Go GC (background marking, assists, sweeping)", []string{"runtime.gcBgMarkWorker", "runtime.gcAssistAlloc", "runtime.bgsweep", "runtime.bgscavenge", "runtime.gcStart", "runtime.gcMarkDone"}},
	{"embedded S3 server (gofakes3, plume-local only)", []string{"gofakes3", "plume/shared/blob/s3local"}},
	{"AWS SigV4 signing (DynamoDB and S3 calls)", []string{"aws/signer/v4", "aws/signer/internal"}},
	{"S3 client (AWS SDK)", []string{"service/s3."}},
	{"DynamoDB client (AWS SDK middleware, JSON codec, HTTP)", []string{"service/dynamodb."}},
	{"AWS SDK HTTP connections (read/write goroutines)", []string{"net/http.(*persistConn)"}},
	{"access log (slog)", []string{"log/slog."}},
	{"OTLP decode and mapping", []string{"plume/shared/otlp"}},
	{"JSON (request decode, response encode)", []string{"encoding/json."}},
	{"Plume code (validation, mapping, items)", []string{"github.com/plumehq/plume/"}},
	{"HTTP server (net/http reads and writes)", []string{"net/http.(*conn)"}},
	{"Go runtime (scheduler, netpoll, timers)", []string{"runtime."}},
}

// profileSummary reads `go tool pprof -traces` output on in and writes the CPU of each
// category, as a share and per request (and per 1000 spans) when those counts are given.
func profileSummary(args []string, in io.Reader, out, stderr io.Writer) error {
	fs := flag.NewFlagSet("plume-load profile-summary", flag.ContinueOnError)
	fs.SetOutput(stderr)
	requests := fs.Int64("requests", 0, "requests served during the profile")
	spans := fs.Int64("spans", 0, "spans stored during the profile")
	if err := fs.Parse(args); err != nil {
		return &usageError{err.Error()}
	}
	shares, total, err := categorize(in)
	if err != nil {
		return err
	}
	if total == 0 {
		return fmt.Errorf("the profile has no samples")
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "where plume-local's CPU went\tCPU s\tshare\tms/request\tms/1000 spans\t")
	names := append(profileNames(), "other")
	for _, name := range append(names, "total") {
		d := shares[name]
		if name == "total" {
			d = total
		}
		if d == 0 {
			continue
		}
		perReq, perSpans := "-", "-"
		if *requests > 0 {
			perReq = fmt.Sprintf("%.3f", float64(d.Microseconds())/1000/float64(*requests))
		}
		if *spans > 0 {
			perSpans = fmt.Sprintf("%.1f", float64(d.Microseconds())/float64(*spans))
		}
		fmt.Fprintf(tw, "%s\t%.2f\t%.1f%%\t%s\t%s\t\n", name, d.Seconds(), 100*d.Seconds()/total.Seconds(), perReq, perSpans)
	}
	return tw.Flush()
}

func profileNames() []string {
	names := make([]string, len(profileCategories))
	for i, c := range profileCategories {
		names[i] = c.name
	}
	return names
}

// categorize sums the samples of `pprof -traces` text by category. A sample is a block between
// lines of dashes: its first line is "<value> <leaf function>", the others one caller each.
func categorize(in io.Reader) (map[string]time.Duration, time.Duration, error) {
	shares := map[string]time.Duration{}
	var total, value time.Duration
	var stack []string
	flush := func() {
		if len(stack) > 0 {
			shares[classify(stack)] += value
			total += value
		}
		stack, value = stack[:0], 0
	}
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	inSamples := false
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "-----------+") {
			flush()
			inSamples = true
			continue
		}
		if !inSamples || strings.TrimSpace(line) == "" {
			continue
		}
		fields := strings.Fields(line)
		if len(stack) == 0 {
			if len(fields) < 2 {
				return nil, 0, fmt.Errorf("unexpected sample line %q", line)
			}
			d, err := time.ParseDuration(fields[0])
			if err != nil {
				return nil, 0, fmt.Errorf("sample value in %q: %w", line, err)
			}
			value = d
			stack = append(stack, strings.Join(fields[1:], " "))
			continue
		}
		stack = append(stack, strings.TrimSpace(line))
	}
	flush()
	return shares, total, sc.Err()
}

// classify names the category of one sample's stack.
func classify(stack []string) string {
	for _, c := range profileCategories {
		for _, frame := range stack {
			for _, m := range c.markers {
				if strings.Contains(frame, m) {
					return c.name
				}
			}
		}
	}
	return "other"
}
