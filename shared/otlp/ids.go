package otlp

import "go.opentelemetry.io/collector/pdata/pcommon"

// TraceID returns the Plume trace id of an OTLP trace id: the UUID made of the same 16 bytes,
// lowercase and hyphenated (COMPAT.md, "OTLP"). The zeroeval SDKs derive it the same way, so a
// trace that mixes SDK spans and OpenTelemetry spans stays one trace.
//
//	0af7651916cd43dd8448eb211c80319c -> 0af76519-16cd-43dd-8448-eb211c80319c
func TraceID(id pcommon.TraceID) string {
	var b [36]byte
	appendUUID(b[:0], [16]byte(id))
	return string(b[:])
}

// SpanID returns the Plume span id of an OTLP span id: the UUID made of its 8 bytes followed by
// 8 zero bytes, lowercase and hyphenated (COMPAT.md, "OTLP"), as the zeroeval SDKs derive it.
//
//	b7ad6b7169203331 -> b7ad6b71-6920-3331-0000-000000000000
func SpanID(id pcommon.SpanID) string {
	var b [36]byte
	appendUUID(b[:0], spanUUID(id))
	return string(b[:])
}

// spanUUID is the 16 bytes of SpanID.
func spanUUID(id pcommon.SpanID) [16]byte {
	var u [16]byte
	copy(u[:8], id[:])
	return u
}

// hexDigits are the lowercase hexadecimal digits.
const hexDigits = "0123456789abcdef"

// appendUUID appends u in the canonical form xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx.
func appendUUID(b []byte, u [16]byte) []byte {
	var out [36]byte
	j := 0
	for i, c := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out[j] = '-'
			j++
		}
		out[j], out[j+1] = hexDigits[c>>4], hexDigits[c&0x0f]
		j += 2
	}
	return append(b, out[:]...)
}
