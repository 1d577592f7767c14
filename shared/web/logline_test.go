package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// marshaler is a JSON marshaler of a value type, as the metrics record's directive is.
type marshaler struct{ raw string }

func (m marshaler) MarshalJSON() ([]byte, error) {
	if m.raw == "fail" {
		return nil, errors.New("fail")
	}
	return []byte(m.raw), nil
}

// selfAppender is a marshaler that appends itself, compact.
type selfAppender struct{ marshaler }

func (a selfAppender) AppendJSON(b []byte) []byte { return append(b, a.raw...) }

// TestLogLinesAreTheJSONHandlers: NewLogger writes every record byte for byte as slog's JSON
// handler (with the request id added, as NewLogger did before it wrote lines itself): crafted
// records (every kind of value, strings with every kind of character, floats on both sides of
// where json.Marshal writes an exponent, marshalers that fail or are not compact) and random
// ones, through Handle and through WithAttrs and WithGroup.
func TestLogLinesAreTheJSONHandlers(t *testing.T) {
	strs := []string{"", "plain", `q"uo\te`, "<b>&amp;", "tab\there\nnew\rret\b\f\x00\x1f\x7f", "é名\u2028\u2029", "bad\xff\xfeutf8", "\xe2\x80"}
	values := []slog.Value{
		slog.IntValue(0), slog.Int64Value(math.MinInt64), slog.Uint64Value(math.MaxUint64), slog.BoolValue(true), slog.BoolValue(false),
		slog.DurationValue(1500 * time.Millisecond), slog.TimeValue(time.Date(2026, 12, 3, 7, 0, 0, 5, time.UTC)),
		slog.GroupValue(slog.Int("a", 1)), slog.AnyValue(errors.New("boom")), slog.AnyValue([]int{1, 2}), slog.AnyValue(nil),
		slog.AnyValue(marshaler{`{"a": [1, 2 ], "b":"<x>"}`}), slog.AnyValue(marshaler{"fail"}), slog.AnyValue(marshaler{"{bad"}),
		slog.AnyValue(&marshaler{`{"p":1}`}), slog.AnyValue(json.RawMessage(nil)), slog.AnyValue(json.RawMessage(`[ 1 ]`)), slog.AnyValue(selfAppender{marshaler{`{"Timestamp":1,"a":["<b>"]}`}}),
	}
	for _, f := range []float64{0, math.Copysign(0, -1), 1, -2.5, 0.0042, 1e-6, 9.99e-7, 1e20, 1e21, 123456789.125, math.MaxFloat64, math.SmallestNonzeroFloat64, math.Inf(1), math.Inf(-1), math.NaN()} {
		values = append(values, slog.Float64Value(f))
	}
	for _, s := range strs {
		values = append(values, slog.StringValue(s))
	}
	rng := rand.New(rand.NewPCG(31, 4))
	alphabet := []rune("aZ09 _<>&\"\\\t\n\b\u2028é名\x7f")
	word := func() string {
		r := make([]rune, rng.IntN(10))
		for i := range r {
			r[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(r)
	}
	random := func() slog.Value {
		switch rng.IntN(5) {
		case 0:
			return slog.StringValue(word())
		case 1:
			return slog.Int64Value(rng.Int64() - rng.Int64())
		case 2:
			return slog.Float64Value(rng.NormFloat64() * math.Pow(10, float64(rng.IntN(50)-25)))
		case 3:
			return slog.BoolValue(rng.IntN(2) == 0)
		}
		return values[rng.IntN(len(values))]
	}

	type record struct {
		at    time.Time
		level slog.Level
		msg   string
		attrs []slog.Attr
	}
	at := time.Date(2026, 12, 3, 7, 0, 0, 123456789, time.FixedZone("x", 3600))
	var records []record
	for i, v := range values {
		records = append(records, record{at, slog.LevelInfo, strs[i%len(strs)], []slog.Attr{{Key: strs[(i+1)%len(strs)], Value: v}}})
	}
	records = append(records,
		record{time.Time{}, slog.LevelWarn, "no time", nil},
		record{time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), slog.LevelError + 2, "far", nil},
		record{at, slog.LevelInfo, "request", []slog.Attr{slog.String("method", "POST"), slog.String("path", "/v1/chat/completions"), slog.Int("status", 200), slog.Float64("duration_ms", 0.125)}},
		record{at, slog.LevelInfo, "empty attr", []slog.Attr{{}, slog.String("", "x")}},
	)
	for range 1000 {
		r := record{at.Add(time.Duration(rng.Int64N(1e12))), slog.Level(rng.IntN(12) - 4), word(), nil}
		for range rng.IntN(6) {
			r.attrs = append(r.attrs, slog.Attr{Key: word(), Value: random()})
		}
		records = append(records, r)
	}

	for _, ctx := range []context.Context{context.Background(), WithRequestID(context.Background(), "req-1")} {
		for _, r := range records {
			var got, want bytes.Buffer
			lines := NewLogger(&got, slog.LevelDebug)
			std := slog.New(contextHandler{slog.NewJSONHandler(&want, &slog.HandlerOptions{Level: slog.LevelDebug})})
			for _, l := range []*slog.Logger{lines, lines.With("k", "v"), lines.WithGroup("g")} {
				rec := slog.NewRecord(r.at, r.level, r.msg, 0)
				rec.AddAttrs(r.attrs...)
				require.NoError(t, l.Handler().Handle(ctx, rec.Clone()))
			}
			for _, l := range []*slog.Logger{std, std.With("k", "v"), std.WithGroup("g")} {
				rec := slog.NewRecord(r.at, r.level, r.msg, 0)
				rec.AddAttrs(r.attrs...)
				require.NoError(t, l.Handler().Handle(ctx, rec.Clone()))
			}
			require.Equal(t, want.String(), got.String())
		}
	}
}

// TestLogLinesWrittenByHand: the request line and a metrics record are written by hand (else
// TestLogLinesAreTheJSONHandlers would hold nothing), and a level below the logger's is not
// written.
func TestLogLinesWrittenByHand(t *testing.T) {
	rec := slog.NewRecord(time.Now(), slog.LevelInfo, "request", 0)
	rec.AddAttrs(slog.String("method", "POST"), slog.String("path", "/v1/chat/completions"), slog.Int("status", 200), slog.Float64("duration_ms", 1.5))
	_, ok := appendLine(nil, rec)
	assert.True(t, ok, "the request line")
	rec = slog.NewRecord(time.Now(), slog.LevelInfo, "metrics", 0)
	rec.AddAttrs(slog.Any("_aws", marshaler{`{"Timestamp":1}`}), slog.String("Function", "local"), slog.Float64("ModelCalls", 1), slog.Float64("ModelCostUSD", 0.0001))
	_, ok = appendLine(nil, rec)
	assert.True(t, ok, "a metrics record")

	var out bytes.Buffer
	l := NewLogger(&out, slog.LevelWarn)
	l.Info("no")
	l.Warn("yes")
	assert.Equal(t, 1, bytes.Count(out.Bytes(), []byte("\n")))
}

// BenchmarkLogLine is the request line of every call.
func BenchmarkLogLine(b *testing.B) {
	l := NewLogger(io.Discard, slog.LevelInfo)
	ctx := WithRequestID(context.Background(), "0123456789abcdef0123456789abcdef")
	b.ReportAllocs()
	for b.Loop() {
		l.InfoContext(ctx, "request", "method", "POST", "path", "/v1/chat/completions", "status", 200, "duration_ms", 1.25)
	}
}
