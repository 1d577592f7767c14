package web

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"reflect"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// This file writes the process's log lines. Every request logs a line (accessLog) and the
// gateway a metrics record per call (shared/metrics); through slog's JSON handler each costs
// a float encoded by encoding/json and a JSON marshaler through an encoder made for it, a
// few microseconds of every call (issue 31). lineHandler writes such records itself, byte for
// byte what the JSON handler writes (TestLogLinesAreTheJSONHandlers holds the two equal), and
// hands the JSON handler every record it does not write itself.

// lineHandler is the handler of NewLogger: records at level or above, the request id of the
// context added, written by hand when their attributes are strings, numbers, booleans,
// durations or JSON marshalers that are not pointers (copied as they append themselves, else
// compacted), else by the JSON handler.
type lineHandler struct {
	out   *lockedWriter
	level slog.Leveler
	// json is the JSON handler writing to out, for the records lineHandler does not write.
	json slog.Handler
}

// lockedWriter is the log's writer, written a line at a time by both handlers.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func newLineHandler(w io.Writer, level slog.Leveler) *lineHandler {
	out := &lockedWriter{w: w}
	return &lineHandler{out: out, level: level, json: slog.NewJSONHandler(out, &slog.HandlerOptions{Level: level})}
}

func (h *lineHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level.Level() }

func (h *lineHandler) Handle(ctx context.Context, rec slog.Record) error {
	if id := RequestID(ctx); id != "" {
		rec.AddAttrs(slog.String("request_id", id))
	}
	buf := linePool.Get().(*[]byte)
	defer linePool.Put(buf)
	line, ok := appendLine((*buf)[:0], rec)
	if !ok {
		return h.json.Handle(ctx, rec)
	}
	*buf = line
	_, err := h.out.Write(line)
	return err
}

// WithAttrs and WithGroup hand the JSON handler every later record of the logger they return.
func (h *lineHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return contextHandler{h.json.WithAttrs(attrs)}
}

func (h *lineHandler) WithGroup(name string) slog.Handler {
	return contextHandler{h.json.WithGroup(name)}
}

// linePool holds the buffers of lines being written.
var linePool = sync.Pool{New: func() any { return new([]byte) }}

// appendLine appends rec as the JSON handler (without options but its level) writes it: the
// time (RFC 3339 with nanoseconds), level and message, then the attributes in order. It
// reports false when an attribute is one it leaves to the JSON handler: a time, a group, a
// LogValuer, an error or a value that is not a JSON marshaler, a pointer, a float written
// with an exponent or not finite, or a marshaler that fails; or the time's year is outside
// 0-9999.
func appendLine(b []byte, rec slog.Record) ([]byte, bool) {
	b = append(b, '{')
	if !rec.Time.IsZero() {
		t := rec.Time.Round(0)
		if y := t.Year(); y < 0 || y >= 10000 {
			return b, false
		}
		b = append(b, `"time":"`...)
		b = append(t.AppendFormat(b, time.RFC3339Nano), `",`...)
	}
	b = appendLogString(append(b, `"level":`...), rec.Level.String())
	b = appendLogString(append(b, `,"msg":`...), rec.Message)
	ok := true
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == "" && a.Value.Kind() == slog.KindAny && a.Value.Any() == nil {
			return true // an empty attribute, which the handler leaves out
		}
		b = append(appendLogString(append(b, ','), a.Key), ':')
		b, ok = appendLogValue(b, a.Value)
		return ok
	})
	return append(b, "}\n"...), ok
}

// appendLogValue appends v as the JSON handler does, or reports false (appendLine).
func appendLogValue(b []byte, v slog.Value) ([]byte, bool) {
	switch v.Kind() {
	case slog.KindString:
		return appendLogString(b, v.String()), true
	case slog.KindInt64:
		return strconv.AppendInt(b, v.Int64(), 10), true
	case slog.KindUint64:
		return strconv.AppendUint(b, v.Uint64(), 10), true
	case slog.KindBool:
		return strconv.AppendBool(b, v.Bool()), true
	case slog.KindDuration:
		return strconv.AppendInt(b, int64(v.Duration()), 10), true
	case slog.KindFloat64: // json.Marshal's form, without an exponent from 1e-6 to 1e21
		f := v.Float64()
		if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) || math.IsNaN(f) {
			return b, false
		}
		return strconv.AppendFloat(b, f, 'f', -1, 64), true
	case slog.KindAny:
		m, ok := v.Any().(json.Marshaler)
		if !ok || reflect.TypeOf(m).Kind() == reflect.Pointer {
			return b, false
		}
		if a, ok := m.(jsonAppender); ok {
			return a.AppendJSON(b), true
		}
		raw, err := m.MarshalJSON()
		if err != nil {
			return b, false
		}
		out := bytes.NewBuffer(b)
		if json.Compact(out, raw) != nil {
			return b, false
		}
		return out.Bytes(), true
	}
	return b, false
}

// jsonAppender is a JSON marshaler that appends its JSON, compact: what json.Compact makes of
// its MarshalJSON (the metrics record's directive).
type jsonAppender interface {
	AppendJSON(b []byte) []byte
}

// appendLogString appends s as a JSON string as the JSON handler escapes it: a quote, a
// backslash and the control characters (\n, \r and \t by name, others as \u00XX), U+2028 and
// U+2029; a byte that is not UTF-8 is U+FFFD. HTML's characters are left as they are.
func appendLogString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(append(b, s[start:i]...), `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(append(b, s[start:i]...), '\\', 'u', '2', '0', '2', hex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(append(b, s[start:]...), '"')
}
