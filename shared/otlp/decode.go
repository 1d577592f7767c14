package otlp

import (
	"errors"
	"fmt"
	"mime"
	"runtime/debug"

	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/textcut"
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
// Both encodings are read straight into the Export, each by a decoder of Plume's own
// (protobuf.go, jsondecode.go) that accepts exactly the bodies that the Collector's pdata
// accepts (ptrace.ProtoUnmarshaler, ptrace.JSONUnmarshaler) and reads them as it does, except
// values nested more than 10000 messages deep. OTLP/JSON follows the OTLP rules (hex ids,
// int64 as strings or numbers, enums as numbers or names), and pdata's JSON reading
// (json-iterator's) is laxer than JSON in places: jsonread.go lists them.
//
// Decode does not bound the body's size: its caller does (the OTLP handler reads at most
// MaxExportBytes), and Decode and Map take time about linear in the body, whatever its shape.
//
// An export of more than MaxSpansPerExport spans is refused, counted as it is read: the
// protobuf decoder counts each ScopeSpans' spans before it reads them, the JSON decoder stops
// at the first span past the limit, so a huge export costs no more than the largest accepted
// one. (Spans of the pre-1.0 deprecatedScopeSpans, used only when a resource has no
// scopeSpans, are counted once the body is read: still refused, not early.)
//
// Errors: errs.CodeUnsupportedMedia for any other content type (also a missing or malformed
// one); errs.CodeTooLarge for more than MaxSpansPerExport spans (even when the body is
// malformed past them); errs.CodeInvalid when the body cannot be decoded in its encoding; a
// *PanicError, which has no code (an internal error), when a decoder panics. An empty
// protobuf body is a valid export with no spans.
//
// A protobuf Export refers to body's bytes, and so do the strings of the spans Map makes of
// it (names, ids, attribute values): the caller must not change body once it is decoded. Not
// copying it saves an allocation of the body's size, about a third of what Decode and Map
// allocate. A JSON Export does not retain body.
func Decode(body []byte, contentType string) (x *Export, err error) {
	mediaType, _, perr := mime.ParseMediaType(contentType)
	if perr != nil {
		mediaType = ""
	}
	var (
		decode   func([]byte) (*Export, error)
		encoding string
	)
	switch mediaType {
	case ContentTypeProtobuf:
		decode, encoding = decoders.protobuf, "protobuf"
	case ContentTypeJSON:
		decode, encoding = decoders.json, "JSON"
	default:
		return nil, errs.Errorf(errs.CodeUnsupportedMedia,
			"unsupported content type %q: OTLP/HTTP takes %s or %s", textcut.Quote(contentType, 100), ContentTypeProtobuf, ContentTypeJSON)
	}
	// The decoders are fuzzed, as the Collector fuzzes its own; this guard keeps one
	// malformed request from ever taking the function down with it. A panic is a bug of
	// Plume's: it is answered as an internal error and logged with its stack, not blamed on
	// the body (an exporter drops data refused with 400, and nobody would learn of the bug).
	defer func() {
		if r := recover(); r != nil {
			x, err = nil, &PanicError{Encoding: encoding, Value: r, Stack: debug.Stack()}
		}
	}()
	x, err = decode(body)
	if errors.Is(err, errTooManySpans) {
		return nil, tooManySpans()
	}
	if err != nil {
		return nil, errs.Invalid("invalid OTLP %s body: %s", encoding, textcut.Quote(err.Error(), maxErrorDetail))
	}
	return x, nil
}

// decoders are the decoders of each encoding; tests replace them.
var decoders = struct{ protobuf, json func([]byte) (*Export, error) }{decodeProtobuf, decodeJSON}

// PanicError is a panic of a decoder that Decode recovered: a bug, not a fault of the request.
// It carries no errs code, so that it is answered as an internal error (HTTP 500, logged once
// with Stack).
type PanicError struct {
	Encoding string // "protobuf" or "JSON"
	Value    any    // what the decoder panicked with
	Stack    []byte // the stack of the panic (runtime/debug.Stack)
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("the OTLP %s decoder panicked: %v", e.Encoding, e.Value)
}
