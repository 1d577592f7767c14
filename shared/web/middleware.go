package web

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/awslabs/aws-lambda-go-api-proxy/core"

	"github.com/plumehq/plume/shared/errs"
)

// Middleware wraps a handler.
type Middleware func(http.Handler) http.Handler

// Chain wraps h with the standard stack every area uses, outermost first: request id, access
// log, gzip for the clients that accept it (compress) and panic recovery, then the area's own
// middleware (typically authentication).
func Chain(h http.Handler, mw ...Middleware) http.Handler {
	for i := len(mw) - 1; i >= 0; i-- {
		h = mw[i](h)
	}
	return withRequestID(accessLog(compress(recoverer(h))))
}

type requestIDKey struct{}

// RequestID returns the id of the request being served, or "" outside a request.
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// WithRequestID returns ctx carrying id, for code that runs outside an HTTP request.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// validRequestID is `^[A-Za-z0-9._:=-]{1,128}$` written out: a regexp with a bounded repeat
// compiles to 128 copies of its class, about 0.4 ms of every cold start (issue 31).
func validRequestID(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for i := range len(s) {
		switch c := s[i]; {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', strings.IndexByte("._:=-", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// withRequestID takes the request id from API Gateway's request context in Lambda, else from a
// well-formed X-Request-Id header, else makes one; it is echoed in X-Request-Id.
func withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := ""
		if ev, ok := core.GetAPIGatewayV2ContextFromContext(r.Context()); ok {
			id = ev.RequestID
		}
		if h := r.Header.Get("X-Request-Id"); id == "" && validRequestID(h) {
			id = h
		}
		if id == "" {
			id = NewRequestID()
		}
		w.Header().Set("X-Request-Id", id)
		next.ServeHTTP(w, r.WithContext(WithRequestID(r.Context(), id)))
	})
}

// NewRequestID returns a random 16-byte hex id.
func NewRequestID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// statusRecorder remembers the status written, for the access log.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }

func accessLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		if _, ok := r.Context().Value(logPathKey{}).(*string); !ok {
			r = r.WithContext(context.WithValue(r.Context(), logPathKey{}, new(string)))
		}
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		slog.InfoContext(r.Context(), "request",
			"method", r.Method, "path", loggedPath(r), "status", rec.status,
			"duration_ms", float64(time.Since(start).Microseconds())/1000)
	})
}

// logPathKey carries the *string that LogPathAs sets for the logs of a request.
type logPathKey struct{}

// LogPathAs wraps h so that the logs of the requests it serves show path (a route pattern)
// instead of the request's path: for routes whose path carries a secret, such as the token
// of a feedback-link page.
func LogPathAs(path string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if shown, ok := r.Context().Value(logPathKey{}).(*string); ok {
			*shown = path
		}
		h.ServeHTTP(w, r)
	})
}

// loggedPath is the path the logs of r show: its path, unless LogPathAs says otherwise.
func loggedPath(r *http.Request) string {
	if shown, ok := r.Context().Value(logPathKey{}).(*string); ok && *shown != "" {
		return *shown
	}
	return r.URL.Path
}

// recoverer turns a panic into a logged 500 instead of a crashed Lambda.
func recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				Error(w, r, fmt.Errorf("panic: %v", v))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// NotFound is the catch-all of every area: a JSON 404 rather than the ServeMux's text.
func NotFound(w http.ResponseWriter, r *http.Request) {
	Error(w, r, errs.NotFound("no route for %s %s", r.Method, r.URL.Path))
}

// Health answers GET /healthz without authentication.
func Health(w http.ResponseWriter, _ *http.Request) {
	OK(w, map[string]string{"status": "ok"})
}

// NewLogger returns a JSON slog logger writing to w that adds the request id of the context
// to every record. Lambda and plume-local both log through it.
func NewLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(newLineHandler(w, level))
}

type contextHandler struct{ slog.Handler }

func (h contextHandler) Handle(ctx context.Context, rec slog.Record) error {
	if id := RequestID(ctx); id != "" {
		rec.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, rec)
}

func (h contextHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return contextHandler{h.Handler.WithAttrs(attrs)}
}

func (h contextHandler) WithGroup(name string) slog.Handler {
	return contextHandler{h.Handler.WithGroup(name)}
}
