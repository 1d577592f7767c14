package main

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"
)

// List prices, us-east-1, on-demand: what the ingest table converts units and requests into.
const (
	usdPerMillionWrites = 0.625 // DynamoDB write request units
	usdPerMillionReads  = 0.125 // DynamoDB read request units
	usdPerMillionS3Puts = 5.0   // S3 PUT, COPY, POST, LIST
	usdPerMillionS3Gets = 0.4   // S3 GET and the other requests
	flagRatio           = 1.5   // a ratio above it is flagged
)

// ingest is what one load step cost.
type ingest struct {
	Step     string        `json:"step"`
	Spans    int64         `json:"spans"`
	Batch    int           `json:"batch"`
	DynamoDB cost          `json:"dynamodb"`
	S3       s3Snapshot    `json:"s3"`
	Elapsed  time.Duration `json:"elapsed_ns"`
}

// perMillion is what a million spans cost at this step's rate: DynamoDB by AWS's rules and S3
// requests, in USD (Lambda's requests and duration not included).
func (i ingest) perMillion() (dynamo, s3 float64) {
	if i.Spans == 0 {
		return 0, 0
	}
	f := 1e6 / float64(i.Spans)
	dynamo = (i.DynamoDB.WriteUnits*usdPerMillionWrites + i.DynamoDB.ReadUnits*usdPerMillionReads) / 1e6 * f
	s3 = (float64(i.S3.Writes)*usdPerMillionS3Puts + float64(i.S3.Reads)*usdPerMillionS3Gets) / 1e6 * f
	return dynamo, s3
}

// printIngest writes the ingest table: one row per load step.
func printIngest(w io.Writer, steps []ingest) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "step\tspans\tbatch\tspans/s\tDDB requests\tWU/span\tRU/span\tfailed writes\tS3 PUT/span\tS3 GET/span\tDDB $/M spans\tS3 $/M spans\tall $/M spans\t")
	for _, s := range steps {
		n := float64(max(s.Spans, 1))
		d, o := s.perMillion()
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.0f\t%d\t%.2f\t%.2f\t%d\t%.3f\t%.3f\t%.2f\t%.2f\t%.2f\t\n", s.Step, s.Spans, s.Batch,
			float64(s.Spans)/max(s.Elapsed.Seconds(), 1e-9), s.DynamoDB.Requests, s.DynamoDB.WriteUnits/n, s.DynamoDB.ReadUnits/n, s.DynamoDB.Failed,
			float64(s.S3.Writes)/n, float64(s.S3.Reads)/n, d, o, d+o)
	}
	_ = tw.Flush()
}

// row is one query at both sizes.
type row struct {
	Query string     `json:"query"`
	At    [2]measure `json:"at"`
}

// ratio is b/a: 1 when both are 0, +Inf when only a is.
func ratio(a, b float64) float64 {
	switch {
	case a == 0 && b == 0:
		return 1
	case a == 0:
		return math.Inf(1)
	}
	return b / a
}

// flags says what grows with the project: the read units' or the requests' ratio above
// flagRatio, a failed answer, or a list cut at its scan bound.
func (r row) flags() string {
	var f []string
	if ratio(r.At[0].Cost.ReadUnits, r.At[1].Cost.ReadUnits) > flagRatio {
		f = append(f, "RU")
	}
	if ratio(float64(r.At[0].Cost.Requests), float64(r.At[1].Cost.Requests)) > flagRatio {
		f = append(f, "REQ")
	}
	for i, m := range r.At {
		if m.Error != "" {
			f = append(f, fmt.Sprintf("FAILED@%d", i+1))
		}
		if m.Truncated {
			f = append(f, fmt.Sprintf("TRUNCATED@%d", i+1))
		}
	}
	return strings.Join(f, " ")
}

// printQueries writes the query table: read units (AWS's rules), requests, answer bytes and
// wall time at both sizes, the ratios, and the flags.
func printQueries(w io.Writer, sizes [2]string, rows []row) (flagged int) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "query\tRU@%[1]s\tRU@%[2]s\tRU x\treq@%[1]s\treq@%[2]s\treq x\tKB@%[1]s\tKB@%[2]s\tms@%[1]s\tms@%[2]s\tflags\n", sizes[0], sizes[1])
	for _, r := range rows {
		a, b := r.At[0], r.At[1]
		fl := r.flags()
		if fl != "" {
			flagged++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t%s\t%.1f\t%.1f\t%d\t%d\t%s\n", r.Query,
			units(a.Cost.ReadUnits), units(b.Cost.ReadUnits), times(ratio(a.Cost.ReadUnits, b.Cost.ReadUnits)),
			a.Cost.Requests, b.Cost.Requests, times(ratio(float64(a.Cost.Requests), float64(b.Cost.Requests))),
			float64(a.Bytes)/1000, float64(b.Bytes)/1000, a.Elapsed.Milliseconds(), b.Elapsed.Milliseconds(), fl)
	}
	_ = tw.Flush()
	return flagged
}

func units(u float64) string {
	if u == math.Trunc(u) {
		return fmt.Sprintf("%.0f", u)
	}
	return fmt.Sprintf("%.1f", u)
}

func times(x float64) string {
	if math.IsInf(x, 1) {
		return "inf"
	}
	return fmt.Sprintf("%.2f", x)
}

// sizeName is a span count as the tables name it: 2k, 100k, 1M.
func sizeName(spans int64) string {
	switch {
	case spans >= 1_000_000 && spans%100_000 == 0:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(spans)/1e6), ".0") + "M"
	case spans >= 1000 && spans%100 == 0:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(spans)/1e3), ".0") + "k"
	}
	return fmt.Sprint(spans)
}
