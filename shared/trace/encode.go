package trace

import (
	"encoding/json"
	"math/bits"
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
	b = s.Tags.appendJSON(b)
	if len(s.TraceTags) > 0 {
		b = append(b, `,"trace_tags":`...)
		b = s.TraceTags.appendJSON(b)
	}
	if len(s.SessionTags) > 0 {
		b = append(b, `,"session_tags":`...)
		b = s.SessionTags.appendJSON(b)
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
	if s.Link != nil {
		b = append(b, `,"prompt_link":`...)
		b = appendLink(b, s.Link)
	}
	if len(s.Attachments) > 0 {
		// Rare: the standard encoder is fine here.
		att, _ := json.Marshal(s.Attachments)
		b = append(append(b, `,"attachments":`...), att...)
	}
	if len(s.ABChoices) > 0 {
		choices, _ := json.Marshal(s.ABChoices)
		b = append(append(b, `,"ab_choices":`...), choices...)
	}
	b = append(b, `,"created_at":`...)
	start := len(b)
	b = appendTime(b, s.CreatedAt)
	created := b[start:]
	b = append(b, `,"updated_at":`...)
	if s.UpdatedAt == s.CreatedAt { // as every decoded span has them: the same text
		b = append(b, created...)
	} else {
		b = appendTime(b, s.UpdatedAt)
	}
	return append(b, '}')
}

// maxUnix is the Unix time of 10000-01-01T00:00:00Z.
const maxUnix = 253402300800

// civil returns the date of the day that is days (>= 0) after 1970-01-01, by Howard Hinnant's
// days-to-civil algorithm (http://howardhinnant.github.io/date_algorithms.html#civil_from_days).
func civil(days int64) (year, month, day int) {
	z := days + 719468 // days since 0000-03-01
	era := z / 146097
	doe := z - era*146097                                  // day of the 400-year era
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365 // year of the era
	doy := doe - (365*yoe + yoe/4 - yoe/100)               // day of the year, from March 1st
	mp := (5*doy + 2) / 153                                // month, from March
	day = int(doy - (153*mp+2)/5 + 1)
	month = int(mp + 3)
	if month > 12 {
		month -= 12
	}
	year = int(yoe + era*400)
	if month <= 2 {
		year++
	}
	return year, month, day
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
	return AppendJSONFloat(b, *v)
}

// AppendJSONFloat appends the finite f as encoding/json writes a float64. (For NaN and the
// infinities, which JSON has no numbers for, it writes what strconv does.)
func AppendJSONFloat(b []byte, f float64) []byte {
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

// appendLink writes l as encoding/json does: its fields in order, empty ones omitted.
func appendLink(b []byte, l *PromptLink) []byte {
	b = append(b, '{')
	open := len(b)
	key := func(b []byte, k string) []byte {
		if len(b) > open {
			b = append(b, ',')
		}
		return append(b, k...)
	}
	if l.Task != "" {
		b = appendString(key(b, `"task":`), l.Task)
	}
	if l.PromptSlug != "" {
		b = appendString(key(b, `"prompt_slug":`), l.PromptSlug)
	}
	if l.PromptVersion != 0 {
		b = strconv.AppendInt(key(b, `"prompt_version":`), int64(l.PromptVersion), 10)
	}
	if l.PromptVersionID != "" {
		b = appendString(key(b, `"prompt_version_id":`), l.PromptVersionID)
	}
	if l.ContentHash != "" {
		b = appendString(key(b, `"content_hash":`), l.ContentHash)
	}
	return append(b, '}')
}

// appendTime writes t as encoding/json does: RFC 3339 with nanoseconds, trailing zeros trimmed.
func appendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	if t.Location() == time.UTC {
		b = appendUTC(b, t)
	} else {
		b = t.AppendFormat(b, time.RFC3339Nano)
	}
	return append(b, '"')
}

// appendUTC is t.AppendFormat(b, time.RFC3339Nano) for a UTC time, as every decoded span time
// is: in a fraction of the time for the years 1970 to 9999.
func appendUTC(b []byte, t time.Time) []byte {
	unix := t.Unix()
	if unix < 0 || unix >= maxUnix {
		return t.AppendFormat(b, time.RFC3339Nano)
	}
	year, month, day := civil(unix / 86400)
	secs := int(unix % 86400)
	// 2006-01-02T15:04:05.999999999Z, two digits at a time.
	var buf [30]byte
	put2(buf[0:], year/100)
	put2(buf[2:], year%100)
	buf[4] = '-'
	put2(buf[5:], month)
	buf[7] = '-'
	put2(buf[8:], day)
	buf[10] = 'T'
	put2(buf[11:], secs/3600)
	buf[13] = ':'
	put2(buf[14:], secs%3600/60)
	buf[16] = ':'
	put2(buf[17:], secs%60)
	n := 19
	if ns := t.Nanosecond(); ns != 0 {
		buf[19] = '.'
		put2(buf[20:], ns/10000000)
		put2(buf[22:], ns/100000%100)
		put2(buf[24:], ns/1000%100)
		put2(buf[26:], ns/10%100)
		buf[28] = byte('0' + ns%10)
		n = 29
		for buf[n-1] == '0' {
			n--
		}
	}
	buf[n] = 'Z'
	return append(b, buf[:n+1]...)
}

// put2 writes v (0 to 99) as two decimal digits.
func put2(b []byte, v int) {
	const digits = "00010203040506070809101112131415161718192021222324252627282930313233343536373839" +
		"404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"
	b[0], b[1] = digits[2*v], digits[2*v+1]
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
		if i = nextEscaped(s, i); i == len(s) {
			break
		}
		if c := s[i]; c < utf8.RuneSelf {
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

// nextEscaped returns the index of the first byte of s[i:] that escapeMask flags, or len(s).
func nextEscaped(s string, i int) int {
	for ; i+8 <= len(s); i += 8 {
		if m := escapeMask(load64(s, i)); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	if i == len(s) {
		return i
	}
	if len(s) >= 8 {
		// The last bytes, in the word that ends with them, where the bytes before i (which
		// may be special) are replaced by 'a': neither flagged nor flagging others by a borrow.
		before := 8 * (i - (len(s) - 8))
		x := load64(s, len(s)-8)>>before<<before | ones*'a'&(uint64(1)<<before-1)
		if m := escapeMask(x) >> before; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		return len(s)
	}
	for ; i < len(s); i++ { // a short string
		if c := s[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return i
		}
	}
	return i
}

// escapeMask flags (bit 7 of the byte) the bytes of x that appendString does not copy as they
// are: control characters, '"', '\\', '<', '>', '&' and bytes >= 0x80 (UTF-8 is checked). As in
// jsonscan's specialMask, bytes above the lowest flagged one may be flagged falsely, the lowest
// never is.
func escapeMask(x uint64) uint64 {
	return (x | (x-ones*0x20)&^x | zeroByteMask(x^(ones*'\\')) |
		zeroByteMask((x|ones*0x04)^(ones*'&')) | // '"' (0x22) or '&' (0x26): they differ in bit 2 only
		zeroByteMask((x|ones*0x02)^(ones*'>'))) & highs // '<' (0x3c) or '>' (0x3e): bit 1 only
}

// zeroByteMask flags (bit 7) the zero bytes of v, and maybe bytes above the lowest of them.
func zeroByteMask(v uint64) uint64 { return (v - ones) &^ v }

// ones and highs are the byte-wise constants of the eight-bytes-at-a-time scans (escapeMask,
// isLowerHex8): 0x01 and 0x80 in every byte.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// load64 reads s[i:i+8] little-endian, as one load.
func load64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}
