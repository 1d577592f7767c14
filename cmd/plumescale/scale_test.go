package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Lines as ddbtap writes them: a phase of two requests (a query and a transaction cancelled by
// its condition), another of one, and a line still being written.
const tapLog = `{"t": 1.0, "phase": "q01@0", "op": "Query", "status": 200, "cls": "GSI1:P#_#SPANS#_", "lw": 0, "lr": 12.5, "aw": 0, "gw": 0, "ar": 12.5, "fail": 0, "n": 1}
{"t": 1.1, "phase": "q01@0", "op": "TransactWriteItems", "status": 400, "cls": "tx[U:T#_|TRACE]", "lw": 0, "lr": 0, "aw": 2, "gw": 0, "ar": 0, "fail": 1, "n": 1}
{"t": 1.2, "phase": "ingest-1", "op": "PutItem", "status": 200, "cls": "P#_#S#_|SPAN", "lw": 1, "lr": 0, "aw": 3, "gw": 2, "ar": 0, "fail": 0, "n": 1}
{"t": 1.3, "phase": "q01@0", "op": "GetItem", "sta`

func TestSumPhases(t *testing.T) {
	sums, read, err := sumPhases(strings.NewReader(tapLog))
	require.NoError(t, err)
	assert.Equal(t, int64(strings.LastIndex(tapLog, "\n")+1), read, "the unfinished line is left for the next read")
	q := sums["q01@0"]
	assert.Equal(t, 2, q.Requests)
	assert.InDelta(t, 12.5, q.ReadUnits, 1e-9)
	assert.InDelta(t, 2, q.WriteUnits, 1e-9, "a cancelled transaction is billed")
	assert.Equal(t, 1, q.Failed)
	assert.Equal(t, 0, q.Errors, "a failed condition is not an error")
	assert.Equal(t, map[string]int{"Query": 1, "TransactWriteItems": 1}, q.ByOp)
	in := sums["ingest-1"]
	assert.Equal(t, 1, in.Requests)
	assert.InDelta(t, 3, in.WriteUnits, 1e-9)
	assert.InDelta(t, 2, in.GSIWrites, 1e-9)

	_, _, err = sumPhases(strings.NewReader("not json\n"))
	assert.Error(t, err, "a line that is not ddbtap's is an error, not a zero")
}

// TestTapCostReadsOn reads a log as ddbtap appends to it: each call adds what was appended,
// and a line finished later is counted once.
func TestTapCostReadsOn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tap.jsonl")
	require.NoError(t, os.WriteFile(path, []byte(tapLog), 0o644))
	tp := newTap("http://unused", path)
	c, err := tp.cost("q01@0")
	require.NoError(t, err)
	assert.Equal(t, 2, c.Requests)

	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(`tus": 200, "cls": "P#_#T#_|TRACE", "lw": 0, "lr": 0.5, "aw": 0, "gw": 0, "ar": 1, "fail": 0, "n": 1}` + "\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	c, err = tp.cost("q01@0")
	require.NoError(t, err)
	assert.Equal(t, 3, c.Requests)
	assert.InDelta(t, 13.5, c.ReadUnits, 1e-9)
	c, err = tp.cost("q01@0")
	require.NoError(t, err)
	assert.Equal(t, 3, c.Requests, "nothing counted twice")
}

func TestPhaseName(t *testing.T) {
	assert.Equal(t, "ingest:load_100k", phaseName("ingest:load 100k"))
	assert.Equal(t, "q07@1", phaseName("q07@1"))
	assert.Equal(t, "judge:load_1M:_a_b", phaseName("judge:load 1M: a/b"))
}

func TestRatio(t *testing.T) {
	tests := []struct {
		a, b, want float64
	}{
		{10, 15, 1.5},
		{10, 5, 0.5},
		{0, 0, 1},
		{0, 3, math.Inf(1)},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, ratio(tt.a, tt.b), "%v -> %v", tt.a, tt.b)
	}
}

func TestFlags(t *testing.T) {
	at := func(ru float64, req int) measure { return measure{Cost: cost{ReadUnits: ru, Requests: req}} }
	tests := []struct {
		name string
		row  row
		want string
	}{
		{"flat", row{At: [2]measure{at(100, 5), at(150, 7)}}, ""},
		{"read units grow", row{At: [2]measure{at(100, 5), at(151, 5)}}, "RU"},
		{"requests grow", row{At: [2]measure{at(100, 4), at(100, 7)}}, "REQ"},
		{"both", row{At: [2]measure{at(2290.5, 29), at(22945, 251)}}, "RU REQ"},
		{"from nothing", row{At: [2]measure{at(0, 0), at(0.5, 1)}}, "RU REQ"},
		{"failed and cut", row{At: [2]measure{{Error: "500", Cost: cost{Requests: 1}}, {Truncated: true, Cost: cost{Requests: 1}}}}, "FAILED@1 TRUNCATED@2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, tt.row.flags())
		})
	}
}

func TestPrintQueries(t *testing.T) {
	rows := []row{
		{Query: "/spans sort cost desc", At: [2]measure{
			{Cost: cost{ReadUnits: 2290.5, Requests: 29}, Bytes: 47_900, Elapsed: 878 * time.Millisecond},
			{Cost: cost{ReadUnits: 22945, Requests: 251}, Bytes: 48_000, Elapsed: 8352 * time.Millisecond}}},
		{Query: "metrics 30d by day", At: [2]measure{
			{Cost: cost{ReadUnits: 0.5, Requests: 1}, Bytes: 9_200, Elapsed: 57 * time.Millisecond},
			{Cost: cost{ReadUnits: 0.5, Requests: 1}, Bytes: 9_300, Elapsed: 52 * time.Millisecond}}},
	}
	var out bytes.Buffer
	flagged := printQueries(&out, [2]string{"100k", "1M"}, rows)
	assert.Equal(t, 1, flagged)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 3)
	assert.Equal(t, []string{"query", "RU@100k", "RU@1M", "RU", "x", "req@100k", "req@1M", "req", "x", "KB@100k", "KB@1M", "ms@100k", "ms@1M", "flags"}, strings.Fields(lines[0]))
	assert.Equal(t, []string{"/spans", "sort", "cost", "desc", "2290.5", "22945", "10.02", "29", "251", "8.66", "47.9", "48.0", "878", "8352", "RU", "REQ"}, strings.Fields(lines[1]))
	assert.Equal(t, []string{"metrics", "30d", "by", "day", "0.5", "0.5", "1.00", "1", "1", "1.00", "9.2", "9.3", "57", "52"}, strings.Fields(lines[2]))
}

func TestIngestPerMillion(t *testing.T) {
	// 1,000 spans: 3,000 write units, 1,000 read units, 60 S3 PUTs and 4 GETs.
	in := ingest{Spans: 1000, DynamoDB: cost{WriteUnits: 3000, ReadUnits: 1000}, S3: s3Snapshot{Writes: 60, Reads: 4}}
	dynamo, s3 := in.perMillion()
	assert.InDelta(t, 3*0.625+1*0.125, dynamo, 1e-9)
	assert.InDelta(t, 0.06*5+0.004*0.4, s3, 1e-9)
	var out bytes.Buffer
	printIngest(&out, []ingest{in})
	assert.Contains(t, out.String(), "3.00")
	assert.Contains(t, out.String(), "2.00", "DynamoDB's $ per million spans")
}

func TestSizeName(t *testing.T) {
	for spans, want := range map[int64]string{2000: "2k", 20_000: "20k", 100_000: "100k", 1_000_000: "1M", 2_500_000: "2.5M", 1500: "1.5k", 999: "999"} {
		assert.Equal(t, want, sizeName(spans))
	}
}

func TestParse(t *testing.T) {
	base := []string{"-tap", "http://t", "-tap-log", "l", "-streams", "http://s"}
	_, err := parse(base, &bytes.Buffer{})
	require.NoError(t, err)
	for _, bad := range [][]string{
		{"-tap", "http://t"},
		append(base[:6:6], "-spans", "10"),
		append(base[:6:6], "-factor", "1"),
		append(base[:6:6], "-batch", "1001"),
		append(base[:6:6], "-spans", "2000", "-big-trace", "3000"),
	} {
		_, err := parse(bad, &bytes.Buffer{})
		assert.Error(t, err, "%v", bad)
	}
}

func TestCountItems(t *testing.T) {
	assert.Equal(t, 2, countItems([]byte(`[{"id":"a","created_by":{"id":"u"}},{"id":"b"}]`)))
	assert.Equal(t, 0, countItems([]byte(`{"buckets":[]}`)))
	assert.Equal(t, 0, countItems(nil))
}

// TestProduce: a step's traces hold its spans exactly, its big traces first, and the big
// session's share spread among the others.
func TestProduce(t *testing.T) {
	s := step{spans: 20_000, bigTraces: 2, bigSize: 1500, sessionTraces: 40}
	specs := make(chan traceSpec)
	var big []string
	go func() {
		defer close(specs)
		produce(t.Context(), s, 1, "BIG", specs, func(id string) { big = append(big, id) })
	}()
	var got []traceSpec
	for spec := range specs {
		got = append(got, spec)
	}
	require.Len(t, big, 2)
	assert.Equal(t, big, []string{got[0].id, got[1].id})
	spans, inBig, sessions := 0, 0, map[string]int{}
	for i, spec := range got {
		spans += spec.spans
		if i >= 2 {
			assert.True(t, spec.spans >= 1 && spec.spans <= 2*meanTraceSpans-2, "a trace of %d spans", spec.spans)
		}
		switch spec.session {
		case "BIG":
			inBig++
		case "":
		default:
			sessions[spec.session]++
		}
	}
	assert.Equal(t, s.spans, spans)
	assert.Equal(t, s.sessionTraces, inBig)
	assert.Greater(t, len(sessions), 100, "other traces come in sessions of a few")
}
