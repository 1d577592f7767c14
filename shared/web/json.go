package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/errs"
)

// DefaultBodyLimit caps request bodies that do not choose their own limit.
const DefaultBodyLimit = 1 << 20

// JSON writes v as a JSON answer with the given status.
func JSON(w http.ResponseWriter, status int, v any) {
	body, _ := encode(v) // Go values of the answer types always encode.
	writeJSON(w, status, body)
}

// encode is v as JSON writes it: HTML characters unescaped, a newline at the end.
func encode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return buf.Bytes(), err
}

// writeJSON writes body, a JSON encoding, as the answer with the given status.
func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body) // The status is sent; a failed write means the client left.
}

// OK writes v as a 200 JSON answer, the status the spec gives every success.
func OK(w http.ResponseWriter, v any) { JSON(w, http.StatusOK, v) }

// Decode reads r's body, at most limit bytes, as JSON into v. Unknown fields are ignored (SDKs
// send extras). It returns errs with codes: unsupported_media_type for a non-JSON Content-Type,
// payload_too_large beyond the limit, invalid_request for anything that is not one JSON value
// of v's shape.
func Decode(w http.ResponseWriter, r *http.Request, v any, limit int64) error {
	if err := RequireJSON(r); err != nil {
		return err
	}
	body := http.MaxBytesReader(w, r.Body, limit)
	dec := json.NewDecoder(body)
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return decodeError(err, limit)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if tooLarge := new(http.MaxBytesError); errors.As(err, &tooLarge) {
			return decodeError(err, limit)
		}
		return errs.Invalid("request body must hold a single JSON value")
	}
	return nil
}

// RequireJSON returns an unsupported_media_type error when r has a Content-Type that is not
// JSON. A request without one is taken as JSON, as SDKs and curl users send it.
func RequireJSON(r *http.Request) error {
	if ct := r.Header.Get("Content-Type"); ct != "" && !IsJSON(ct) {
		return errs.Errorf(errs.CodeUnsupportedMedia, "content type %q is not supported; send application/json", ct)
	}
	return nil
}

// ReadBody reads r's body whole, at most limit bytes: the one body reader of every handler
// that needs the raw bytes (Decode streams instead). Only a body over the limit is
// payload_too_large (413); any other failure to read, such as a client that went away, is
// invalid_request.
func ReadBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	return ReadAll(http.MaxBytesReader(w, r.Body, limit), limit)
}

// ReadAll is ReadBody for a reader that wraps the body's http.MaxBytesReader (a decompressor,
// say); limit is the body's cap, for the message.
func ReadAll(rd io.Reader, limit int64) ([]byte, error) {
	body, err := io.ReadAll(rd)
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, errs.Errorf(errs.CodeTooLarge, "request body exceeds %d bytes", limit)
	case err != nil:
		return nil, errs.Invalid("cannot read the request body: %v", err)
	}
	return body, nil
}

// IsJSON reports whether a Content-Type is JSON (application/json or any +json type).
func IsJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// decodeError turns a json or body-limit failure into a client error with a useful message.
func decodeError(err error, limit int64) error {
	var (
		tooLarge  *http.MaxBytesError
		syntax    *json.SyntaxError
		wrongType *json.UnmarshalTypeError
	)
	var (
		coded   *errs.Error
		invalid *api.InvalidError
	)
	switch {
	case errors.As(err, &coded):
		return coded // from a field's own UnmarshalJSON
	case errors.As(err, &invalid):
		return errs.Invalid("%s", invalid.Message) // from an api type's UnmarshalJSON
	case errors.As(err, &tooLarge):
		return errs.Errorf(errs.CodeTooLarge, "request body exceeds %d bytes", limit)
	case errors.Is(err, io.EOF):
		return errs.Invalid("request body is empty; send a JSON value")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errs.Invalid("request body is truncated JSON")
	case errors.As(err, &syntax):
		return errs.Invalid("malformed JSON at byte %d: %s", syntax.Offset, syntax.Error())
	case errors.As(err, &wrongType):
		if wrongType.Field == "" {
			return errs.Invalid("request body must be a JSON %s, not %s", jsonKind(wrongType.Type.Kind().String()), wrongType.Value)
		}
		return errs.Invalid("field %q must be %s, not %s", wrongType.Field, jsonKind(wrongType.Type.Kind().String()), wrongType.Value)
	default:
		return errs.Invalid("invalid JSON: %s", err.Error())
	}
}

// jsonKind names a Go kind the way a JSON user would.
func jsonKind(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "struct", "map":
		return "an object"
	case "slice", "array":
		return "an array"
	case "bool":
		return "a boolean"
	case "ptr", "interface":
		return "a JSON value"
	default:
		return fmt.Sprintf("a number (%s)", kind)
	}
}
