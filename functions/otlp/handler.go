package otlp

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/metrics"
	otlpmap "github.com/plumehq/plume/shared/otlp"
	"github.com/plumehq/plume/shared/trace"
	"github.com/plumehq/plume/shared/web"
)

const (
	contentProtobuf = "application/x-protobuf"
	contentJSON     = "application/json"
)

type server struct {
	svc   *trace.Service
	authn *auth.Authenticator
	// decode is otlpmap.Decode unless a test replaces it.
	decode func(body []byte, contentType string) (*otlpmap.Export, error)
}

// encoding returns the request's OTLP encoding, or "" when it is neither.
func encoding(r *http.Request) string {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return ""
	}
	switch mt {
	case contentProtobuf, contentJSON:
		return mt
	}
	return ""
}

// traces serves POST /v1/traces. An export of more than otlpmap.MaxExportBytes bytes
// (gunzipped) is refused as it is read, one of more than otlpmap.MaxSpansPerExport spans by the
// decoder, counted as it reads: both with 413 and a google.rpc.Status naming the limit, nothing
// of the export mapped or stored (the limits' docs say why).
func (s *server) traces(w http.ResponseWriter, r *http.Request) {
	enc := encoding(r)
	if enc == "" {
		writeStatus(w, r, contentJSON, errs.Errorf(errs.CodeUnsupportedMedia, "content type %q is not supported; send %s or %s", r.Header.Get("Content-Type"), contentProtobuf, contentJSON))
		return
	}
	p, err := s.authn.Authenticate(r.Context(), r.Header.Get("Authorization"))
	if err != nil {
		writeStatus(w, r, enc, err)
		return
	}
	body, err := readBody(w, r)
	if err != nil {
		writeStatus(w, r, enc, err)
		return
	}
	decode := s.decode
	if decode == nil {
		decode = otlpmap.Decode
	}
	// body is this request's own and is not changed from here on: the export and its spans
	// refer to its bytes (Decode's contract).
	td, err := decode(body, r.Header.Get("Content-Type"))
	if err != nil {
		writeStatus(w, r, enc, err)
		return
	}
	spans, rejected, reasons := otlpmap.Map(td, p.ProjectID, s.svc.Now())
	stored := 0
	if len(spans) > 0 {
		res, err := s.svc.IngestBatch(r.Context(), p.ProjectID, spans)
		if err != nil {
			writeStatus(w, r, enc, err)
			return
		}
		stored = len(res.Stored)
		rejected, reasons = otlpmap.AddRefused(rejected, reasons, res.Refused)
	}
	metrics.Emit(r.Context(), nil, s.svc.Now(), p.ProjectID, metrics.Count(metrics.SpansIngested, stored), metrics.Count(metrics.SpansRejected, rejected))
	var message string
	if rejected > 0 {
		// https://opentelemetry.io/docs/specs/otlp/#partial-success-1
		message = strings.Join(reasons, "; ")
	}
	w.Header().Set("Content-Type", enc)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(exportResponse(enc, int64(rejected), message))
}

// discard serves /v1/metrics and /v1/logs: authenticated, answered with an empty export
// response, the data dropped.
func (s *server) discard(w http.ResponseWriter, r *http.Request) {
	enc := encoding(r)
	if enc == "" {
		writeStatus(w, r, contentJSON, errs.Errorf(errs.CodeUnsupportedMedia, "content type %q is not supported", r.Header.Get("Content-Type")))
		return
	}
	if _, err := s.authn.Authenticate(r.Context(), r.Header.Get("Authorization")); err != nil {
		writeStatus(w, r, enc, err)
		return
	}
	_, _ = io.Copy(io.Discard, http.MaxBytesReader(w, r.Body, otlpmap.MaxExportBytes))
	w.Header().Set("Content-Type", enc)
	w.WriteHeader(http.StatusOK)
	if enc == contentJSON {
		_, _ = w.Write([]byte("{}"))
	}
}

// readBody reads the body, gunzipping it as it reads when Content-Encoding says gzip: at most
// otlpmap.MaxExportBytes bytes as sent and as gunzipped, POST /spans's bound. A larger body is
// refused (otlpmap.BodyTooLarge) once a byte past the limit is read, so that a gzip bomb costs
// what the largest export accepted costs.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	const limit = otlpmap.MaxExportBytes
	var rd io.Reader = http.MaxBytesReader(w, r.Body, limit)
	switch strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding"))) {
	case "", "identity":
	case "gzip":
		gz, err := gzip.NewReader(rd)
		if err != nil {
			return nil, errs.Invalid("body is not valid gzip: %v", err)
		}
		defer gz.Close()
		rd = io.LimitReader(gz, limit+1)
	default:
		return nil, errs.Errorf(errs.CodeUnsupportedMedia, "content encoding %q is not supported; send gzip or none", r.Header.Get("Content-Encoding"))
	}
	body, err := web.ReadAll(rd, limit)
	if errs.CodeOf(err) == errs.CodeTooLarge || len(body) > limit {
		return nil, otlpmap.BodyTooLarge()
	}
	return body, err
}

// grpcCode maps Plume's error codes to the google.rpc.Code the Status carries.
var grpcCode = map[errs.Code]int32{
	errs.CodeInvalid: 3, errs.CodeUnauthenticated: 16, errs.CodeForbidden: 7, errs.CodeNotFound: 5,
	errs.CodeTooLarge: 3, errs.CodeUnsupportedMedia: 3, errs.CodeRateLimited: 8, errs.CodeUnavailable: 14,
	errs.CodeInternal: 13, errs.CodeConflict: 10,
}

// writeStatus answers an error as OTLP/HTTP requires: the HTTP status of the error code and a
// google.rpc.Status body in the request's encoding; 401 carries WWW-Authenticate as the JSON
// API's do, 429 and 503 Retry-After. Internal errors, decoder panics among them, are logged
// once here with the request id (and the stack of a panic) and answered with a generic
// message: 500, google.rpc.Code INTERNAL; the cause of a 503 is logged as a warning.
func writeStatus(w http.ResponseWriter, r *http.Request, enc string, err error) {
	code := errs.CodeOf(err)
	msg := "internal error"
	var e *errs.Error
	if errors.As(err, &e) && code != errs.CodeInternal {
		msg = e.Message
	} else {
		args := []any{"error", err}
		if p := (*otlpmap.PanicError)(nil); errors.As(err, &p) {
			args = append(args, "stack", string(p.Stack))
		}
		slog.ErrorContext(r.Context(), "otlp export failed", args...)
	}
	if code == errs.CodeUnavailable {
		// The exporter retries; why is the operator's to know (shared/web logs the same).
		slog.WarnContext(r.Context(), "otlp export unavailable", "error", err)
	}
	msg = fmt.Sprintf("%s (request id %s)", msg, web.RequestID(r.Context()))
	body := statusBody(enc, grpcCode[code], msg)
	httpStatus := web.Status(code)
	if httpStatus == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", auth.Challenge)
	}
	if httpStatus == http.StatusTooManyRequests || httpStatus == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", strconv.Itoa(web.RetryAfterSeconds))
	}
	w.Header().Set("Content-Type", enc)
	w.WriteHeader(httpStatus)
	_, _ = w.Write(body)
}
