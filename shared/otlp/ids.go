package otlp

import "encoding/hex"

// TraceID returns the Plume trace id of an OTLP trace id: the UUID made of the same 16 bytes,
// lowercase and hyphenated (COMPAT.md, "OTLP"). The zeroeval SDKs derive it the same way, so a
// trace that mixes SDK spans and OpenTelemetry spans stays one trace.
//
//	0af7651916cd43dd8448eb211c80319c -> 0af76519-16cd-43dd-8448-eb211c80319c
func TraceID(id [16]byte) string {
	var b [36]byte
	appendUUID(b[:0], id)
	return string(b[:])
}

// SpanID returns the Plume span id of an OTLP span id: the UUID made of its 8 bytes followed by
// 8 zero bytes, lowercase and hyphenated (COMPAT.md, "OTLP"), as the zeroeval SDKs derive it.
//
//	b7ad6b7169203331 -> b7ad6b71-6920-3331-0000-000000000000
func SpanID(id [8]byte) string {
	var b [36]byte
	appendUUID(b[:0], spanUUID(id))
	return string(b[:])
}

// spanUUID is the 16 bytes of SpanID.
func spanUUID(id [8]byte) [16]byte {
	var u [16]byte
	copy(u[:8], id[:])
	return u
}

// appendUUID appends u in the canonical form xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx.
func appendUUID(b []byte, u [16]byte) []byte {
	var out [36]byte
	hex.Encode(out[0:8], u[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], u[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], u[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], u[8:10])
	out[23] = '-'
	hex.Encode(out[24:36], u[10:16])
	return append(b, out[:]...)
}
