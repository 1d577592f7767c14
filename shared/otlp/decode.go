package otlp

import (
	"fmt"
	"mime"
	"strings"

	"go.opentelemetry.io/collector/pdata/ptrace"

	"github.com/plumehq/plume/shared/errs"
)

// Media types of OTLP/HTTP request bodies (https://opentelemetry.io/docs/specs/otlp/#otlphttp).
const (
	ContentTypeProtobuf = "application/x-protobuf"
	ContentTypeJSON     = "application/json"
)

// maxErrorDetail bounds how much of a codec's error message is quoted back to the client.
const maxErrorDetail = 200

// Decode parses an OTLP/HTTP trace export body (already gunzipped) of content type
// "application/x-protobuf" or "application/json" (parameters such as charset allowed; the type
// is matched case-insensitively). The body is an ExportTraceServiceRequest, which has the wire
// form of TracesData, in the binary protobuf encoding or in OTLP/JSON.
//
// Errors: errs.CodeUnsupportedMedia for any other content type (also a missing or malformed
// one); errs.CodeInvalid when the body cannot be decoded in its encoding. An empty protobuf
// body is a valid export with no spans. The returned Traces does not retain body.
func Decode(body []byte, contentType string) (td ptrace.Traces, err error) {
	mediaType, _, perr := mime.ParseMediaType(contentType)
	if perr != nil {
		mediaType = ""
	}
	var (
		unmarshal func([]byte) (ptrace.Traces, error)
		encoding  string
	)
	switch mediaType {
	case ContentTypeProtobuf:
		unmarshal, encoding = (&ptrace.ProtoUnmarshaler{}).UnmarshalTraces, "protobuf"
	case ContentTypeJSON:
		unmarshal, encoding = (&ptrace.JSONUnmarshaler{}).UnmarshalTraces, "JSON"
	default:
		return ptrace.Traces{}, errs.Errorf(errs.CodeUnsupportedMedia,
			"unsupported content type %q: OTLP/HTTP takes %s or %s", truncateString(contentType, 100), ContentTypeProtobuf, ContentTypeJSON)
	}
	// The codecs are the Collector's and are fuzzed there; this guard keeps one malformed
	// request from ever taking the function down with it.
	defer func() {
		if r := recover(); r != nil {
			td, err = ptrace.Traces{}, errs.Invalid("invalid OTLP %s body: %s", encoding, truncateString(fmt.Sprint(r), maxErrorDetail))
		}
	}()
	td, err = unmarshal(body)
	if err != nil {
		return ptrace.Traces{}, errs.Invalid("invalid OTLP %s body: %s", encoding, truncateString(err.Error(), maxErrorDetail))
	}
	return td, nil
}

// truncateString shortens s to at most max bytes (on a UTF-8 boundary, "..." appended) for a
// message, replacing invalid UTF-8.
func truncateString(s string, max int) string {
	if len(s) > max {
		s = cutUTF8(s, max) + "..."
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
