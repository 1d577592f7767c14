package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// report is a run's figures; its JSON form is what -json writes.
type report struct {
	Target      string    `json:"target"`
	Scenario    string    `json:"scenario"`
	Concurrency int       `json:"concurrency"`
	ElapsedS    float64   `json:"elapsed_s"`
	CPUs        int       `json:"cpus"`
	Ops         []opRow   `json:"ops"`
	Total       opRow     `json:"total"`
	CPU         []cpuRow  `json:"cpu"`
	Profile     string    `json:"profile,omitempty"`
	Finished    time.Time `json:"finished"`
}

// opRow is one operation's figures.
type opRow struct {
	Op            string           `json:"op"`
	Requests      int64            `json:"requests"`
	OK            int64            `json:"ok"`
	Errors        map[string]int64 `json:"errors"`
	RequestsPerS  float64          `json:"requests_per_s"`
	Spans         int64            `json:"spans,omitempty"`
	RejectedSpans int64            `json:"rejected_spans,omitempty"`
	SpansPerS     float64          `json:"spans_per_s,omitempty"`
	MBSentPerS    float64          `json:"mb_sent_per_s"`
	LatencyMS     latencyMS        `json:"latency_ms"`
}

type latencyMS struct {
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

// cpuRow is the CPU time one process used during the measured phase.
type cpuRow struct {
	Process     string  `json:"process"`
	PID         int     `json:"pid"`
	CPUS        float64 `json:"cpu_s"`
	Cores       float64 `json:"cores"` // CPU seconds per elapsed second
	MSPerReq    float64 `json:"cpu_ms_per_request"`
	MSPerKSpans float64 `json:"cpu_ms_per_1000_spans,omitempty"`
}

func newReport(o options, scenario string, elapsed time.Duration, stats map[string]*opStats) *report {
	r := &report{Target: o.baseURL, Scenario: scenario, Concurrency: o.concurrency,
		ElapsedS: elapsed.Seconds(), CPUs: runtime.NumCPU(), Finished: time.Now().UTC()}
	all := newOpStats()
	for _, op := range slices.Sorted(maps.Keys(stats)) {
		r.Ops = append(r.Ops, row(op, stats[op], elapsed))
		all.merge(stats[op])
	}
	r.Total = row("total", all, elapsed)
	return r
}

func row(op string, st *opStats, elapsed time.Duration) opRow {
	lat := sortedCopy(st.latencies)
	secs := elapsed.Seconds()
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	r := opRow{Op: op, Requests: int64(len(lat)), OK: st.ok, Errors: st.errors,
		Spans: st.spans, RejectedSpans: st.rejected}
	if secs > 0 {
		r.RequestsPerS = float64(len(lat)) / secs
		r.SpansPerS = float64(st.spans) / secs
		r.MBSentPerS = float64(st.bytesSent) / secs / 1e6
	}
	if len(lat) > 0 {
		r.LatencyMS = latencyMS{P50: ms(percentile(lat, 50)), P95: ms(percentile(lat, 95)),
			P99: ms(percentile(lat, 99)), Max: ms(lat[len(lat)-1]), Mean: ms(sum / time.Duration(len(lat)))}
	}
	return r
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func (r *report) addCPU(name string, pid int, used time.Duration) {
	c := cpuRow{Process: name, PID: pid, CPUS: used.Seconds()}
	if r.ElapsedS > 0 {
		c.Cores = used.Seconds() / r.ElapsedS
	}
	if r.Total.Requests > 0 {
		c.MSPerReq = ms(used) / float64(r.Total.Requests)
	}
	if r.Total.Spans > 0 {
		c.MSPerKSpans = ms(used) / float64(r.Total.Spans) * 1000
	}
	r.CPU = append(r.CPU, c)
}

func writeTable(w io.Writer, r *report) {
	fmt.Fprintf(w, "\n%s against %s: %d workers, %.1f s measured, %d CPUs\n", r.Scenario, r.Target, r.Concurrency, r.ElapsedS, r.CPUs)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "op\trequests\treq/s\tspans/s\tp50 ms\tp95 ms\tp99 ms\tmax ms\tMB/s sent\terrors\t")
	rows := r.Ops
	if len(rows) > 1 {
		rows = append(slices.Clone(rows), r.Total)
	}
	for _, o := range rows {
		spans := "-"
		if o.Spans > 0 || o.RejectedSpans > 0 {
			spans = fmt.Sprintf("%.0f", o.SpansPerS)
		}
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%s\t%.1f\t%.1f\t%.1f\t%.1f\t%.2f\t%s\t\n", o.Op, o.Requests, o.RequestsPerS, spans,
			o.LatencyMS.P50, o.LatencyMS.P95, o.LatencyMS.P99, o.LatencyMS.Max, o.MBSentPerS, errorText(o))
	}
	tw.Flush()
	if len(r.CPU) > 0 {
		fmt.Fprintln(w, "CPU used during the measured phase:")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "process\tpid\tCPU s\tcores busy\tCPU ms/request\tCPU ms/1000 spans\t")
		for _, c := range r.CPU {
			per := "-"
			if c.MSPerKSpans > 0 {
				per = fmt.Sprintf("%.1f", c.MSPerKSpans)
			}
			fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.2f\t%.2f\t%s\t\n", c.Process, c.PID, c.CPUS, c.Cores, c.MSPerReq, per)
		}
		tw.Flush()
	}
	if r.Profile != "" {
		fmt.Fprintf(w, "server CPU profile: %s\n", r.Profile)
	}
}

// errorText lists errors by kind, and rejected spans, or "0".
func errorText(o opRow) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(o.Errors)) {
		parts = append(parts, fmt.Sprintf("%s: %d", k, o.Errors[k]))
	}
	if o.RejectedSpans > 0 {
		parts = append(parts, fmt.Sprintf("rejected spans: %d", o.RejectedSpans))
	}
	if len(parts) == 0 {
		return "0"
	}
	return strings.Join(parts, ", ")
}

func writeJSON(path string, stdout io.Writer, r *report) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if path == "-" {
		_, err = stdout.Write(b)
		return err
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("write the JSON report: %w", err)
	}
	return nil
}
