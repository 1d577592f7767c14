package trace

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// AppendJSON appends s as one JSON object, byte for byte what json.Marshal(s) writes (a test
// holds them equal), several times faster: it is the NDJSON line of every ingested span.
// Attributes, already compact and valid (DecodeBatch and Merge guarantee it), are copied as they
// are instead of being validated and compacted again.
func (s *Span) AppendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, s.ID)
	b = append(b, `,"trace_id":`...)
	b = appendString(b, s.TraceID)
	b = appendOptString(b, `,"parent_span_id":`, s.ParentSpanID, false)
	b = append(b, `,"project_id":`...)
	b = appendString(b, s.ProjectID)
	b = append(b, `,"name":`...)
	b = appendString(b, s.Name)
	b = append(b, `,"kind":`...)
	b = appendString(b, s.Kind)
	b = appendOptString(b, `,"status":`, s.Status, false)
	b = append(b, `,"started_at":`...)
	b = appendTime(b, s.StartedAt)
	b = append(b, `,"ended_at":`...)
	if s.EndedAt == nil {
		b = append(b, "null"...)
	} else {
		b = appendTime(b, *s.EndedAt)
	}
	b = appendOptFloat(b, `,"duration_ms":`, s.DurationMS)
	b = appendOptFloat(b, `,"cost":`, s.Cost)
	b = appendOptString(b, `,"cost_source":`, s.CostSource, true)
	b = appendOptString(b, `,"session_id":`, s.SessionID, false)
	b = appendOptString(b, `,"session_name":`, s.SessionName, true)
	b = appendOptString(b, `,"input_data":`, s.InputData, false)
	b = appendOptString(b, `,"output_data":`, s.OutputData, false)
	b = append(b, `,"attributes":`...)
	if len(s.Attributes) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, s.Attributes...)
	}
	b = append(b, `,"tags":`...)
	b = appendMap(b, s.Tags, false)
	if len(s.TraceTags) > 0 {
		b = append(b, `,"trace_tags":`...)
		b = appendMap(b, s.TraceTags, false)
	}
	if len(s.SessionTags) > 0 {
		b = append(b, `,"session_tags":`...)
		b = appendMap(b, s.SessionTags, false)
	}
	b = appendOptString(b, `,"error_code":`, s.ErrorCode, false)
	b = appendOptString(b, `,"error_message":`, s.ErrorMessage, false)
	b = appendOptString(b, `,"error_stack":`, s.ErrorStack, false)
	b = appendOptString(b, `,"code_filepath":`, s.CodeFilepath, false)
	b = append(b, `,"code_lineno":`...)
	if s.CodeLineno == nil {
		b = append(b, "null"...)
	} else {
		b = strconv.AppendInt(b, int64(*s.CodeLineno), 10)
	}
	if s.Link != nil || len(s.Attachments) > 0 {
		// Rare and small: the standard encoder is fine here.
		if s.Link != nil {
			link, _ := json.Marshal(s.Link)
			b = append(append(b, `,"prompt_link":`...), link...)
		}
		if len(s.Attachments) > 0 {
			att, _ := json.Marshal(s.Attachments)
			b = append(append(b, `,"attachments":`...), att...)
		}
	}
	b = append(b, `,"created_at":`...)
	b = appendTime(b, s.CreatedAt)
	b = append(b, `,"updated_at":`...)
	b = appendTime(b, s.UpdatedAt)
	return append(b, '}')
}

func appendOptString(b []byte, key string, v *string, omitEmpty bool) []byte {
	if v == nil {
		if omitEmpty {
			return b
		}
		return append(append(b, key...), "null"...)
	}
	return appendString(append(b, key...), *v)
}

func appendOptFloat(b []byte, key string, v *float64) []byte {
	b = append(b, key...)
	if v == nil {
		return append(b, "null"...)
	}
	return appendFloat(b, *v)
}

// appendFloat writes a float as encoding/json does.
func appendFloat(b []byte, f float64) []byte {
	abs := f
	if abs < 0 {
		abs = -abs
	}
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9, as encoding/json does
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

func appendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

func appendMap(b []byte, m map[string]string, _ bool) []byte {
	if m == nil {
		return append(b, "null"...)
	}
	b = append(b, '{')
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, k)
		b = append(b, ':')
		b = appendString(b, m[k])
	}
	return append(b, '}')
}

const hexDigits = "0123456789abcdef"

// AppendJSONString appends s as a JSON string exactly as encoding/json writes it (HTML-safe
// escaping, invalid UTF-8 as U+FFFD, U+2028 and U+2029 escaped). Every hand-written JSON
// encoder of Plume uses it.
func AppendJSONString(b []byte, s string) []byte { return appendString(b, s) }

// appendString is AppendJSONString.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
