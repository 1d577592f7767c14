package lambdaemu

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// Runtime API headers and trailers.
const (
	headerRequestID   = "Lambda-Runtime-Aws-Request-Id"
	headerDeadline    = "Lambda-Runtime-Deadline-Ms"
	headerFunctionARN = "Lambda-Runtime-Invoked-Function-Arn"
	headerTraceID     = "Lambda-Runtime-Trace-Id"
	headerErrorType   = "Lambda-Runtime-Function-Error-Type" // also a trailer of /response
	trailerErrorBody  = "Lambda-Runtime-Function-Error-Body"
)

// apiError is the body of a Runtime API error response.
type apiError struct {
	Message string `json:"errorMessage"`
	Type    string `json:"errorType"`
}

var (
	errInvalidRequestID = apiError{Type: "InvalidRequestID", Message: "Invalid request ID"}
	errTooLarge         = apiError{
		Type:    "RequestEntityTooLarge",
		Message: fmt.Sprintf("Exceeded maximum allowed payload size (%d bytes).", maxPayload),
	}
)

// routes returns the handler of the implemented Runtime API endpoints.
func (e *Emulator) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /2018-06-01/runtime/invocation/next", e.next)
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/response", e.response)
	mux.HandleFunc("POST /2018-06-01/runtime/invocation/{id}/error", e.invocationError)
	mux.HandleFunc("POST /2018-06-01/runtime/init/error", e.initError)
	return mux
}

// next long-polls until an Invoke hands over an event, then sends it to the runtime.
func (e *Emulator) next(w http.ResponseWriter, r *http.Request) {
	e.mu.Lock()
	e.started = true
	e.mu.Unlock()

	var inv *invocation
	select {
	case inv = <-e.invokes:
	case <-e.exited:
		return
	case <-r.Context().Done():
		return
	}
	e.mu.Lock()
	e.pending[inv.id] = inv
	e.mu.Unlock()

	h := w.Header()
	h.Set(headerRequestID, inv.id)
	h.Set(headerDeadline, strconv.FormatInt(inv.deadline.UnixMilli(), 10))
	h.Set(headerFunctionARN, e.arn)
	h.Set(headerTraceID, inv.traceID)
	h.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(inv.payload) // if the runtime is gone, Invoke ends with the process or the deadline
}

// response completes an invocation with the body the function returned.
func (e *Emulator) response(w http.ResponseWriter, r *http.Request) {
	if inv := e.streaming(r.PathValue("id")); inv != nil {
		e.streamResponse(w, r, inv)
		return
	}
	body, err := readBody(w, r)
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		res := result{err: &FunctionError{
			Type:    "Function.ResponseSizeTooLarge",
			Message: fmt.Sprintf("Response payload size exceeded maximum allowed payload size (%d bytes).", maxPayload),
		}}
		if !e.complete(r.PathValue("id"), res) {
			writeJSON(w, http.StatusBadRequest, errInvalidRequestID)
			return
		}
		writeJSON(w, http.StatusRequestEntityTooLarge, errTooLarge)
		return
	}
	if err != nil {
		writeBodyError(w, err)
		return
	}
	res := result{body: body}
	// aws-lambda-go reports a response reader that fails midway in trailers.
	if typ := r.Trailer.Get(headerErrorType); typ != "" {
		detail, err := base64.StdEncoding.DecodeString(r.Trailer.Get(trailerErrorBody))
		if err != nil {
			detail = []byte(r.Trailer.Get(trailerErrorBody))
		}
		res = result{err: parseFunctionError(detail, typ)}
	}
	e.accept(w, r, res)
}

// invocationError completes an invocation with the error the function reported.
func (e *Emulator) invocationError(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(w, r)
	if err != nil {
		writeBodyError(w, err)
		return
	}
	e.accept(w, r, result{err: parseFunctionError(body, r.Header.Get(headerErrorType))})
}

// initError records a failed initialisation and stops the process if it does not exit itself.
func (e *Emulator) initError(w http.ResponseWriter, r *http.Request) {
	body, err := readBody(w, r)
	if err != nil {
		writeBodyError(w, err)
		return
	}
	fe := parseFunctionError(body, r.Header.Get(headerErrorType))
	e.mu.Lock()
	late := e.started || e.initErr != nil
	if !late {
		e.initErr = fe
	}
	e.mu.Unlock()
	if late {
		writeJSON(w, http.StatusForbidden, apiError{
			Type:    "InvalidStateTransition",
			Message: "init error reported after initialization",
		})
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"status": "OK"})
	go e.stopAfter(stopGrace)
}

// accept completes the invocation named in the path with res, answering 202, or 400 if no
// such invocation is waiting for an answer.
func (e *Emulator) accept(w http.ResponseWriter, r *http.Request, res result) {
	if !e.complete(r.PathValue("id"), res) {
		writeJSON(w, http.StatusBadRequest, errInvalidRequestID)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"status": "OK"})
}

// streaming returns the pending invocation id if it was made with InvokeStream and its response
// has not begun, or nil.
func (e *Emulator) streaming(id string) *invocation {
	e.mu.Lock()
	defer e.mu.Unlock()
	inv, ok := e.pending[id]
	if !ok || inv.stream == nil || inv.streaming {
		return nil
	}
	inv.streaming = true
	return inv
}

// complete delivers res to the pending invocation id and reports whether there was one.
func (e *Emulator) complete(id string, res result) bool {
	e.mu.Lock()
	inv, ok := e.pending[id]
	delete(e.pending, id)
	e.mu.Unlock()
	if ok {
		inv.result <- res
	}
	return ok
}

// readBody reads a request body of at most maxPayload bytes, trailers included.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxPayload))
	if err != nil {
		return nil, fmt.Errorf("read request body: %w", err)
	}
	return body, nil
}

// writeBodyError answers a request whose body could not be read.
func writeBodyError(w http.ResponseWriter, err error) {
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		writeJSON(w, http.StatusRequestEntityTooLarge, errTooLarge)
		return
	}
	writeJSON(w, http.StatusBadRequest, apiError{Type: "InvalidRequest", Message: err.Error()})
}

// writeJSON writes v as a JSON response with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// parseFunctionError decodes an error document ({"errorType", "errorMessage", "stackTrace"}).
// A body that is not such a document becomes the message; typ is the type when the body
// has none.
func parseFunctionError(body []byte, typ string) *FunctionError {
	var doc struct {
		Type       string          `json:"errorType"`
		Message    string          `json:"errorMessage"`
		StackTrace json.RawMessage `json:"stackTrace"`
	}
	fe := &FunctionError{Type: typ}
	if err := json.Unmarshal(body, &doc); err != nil {
		fe.Message = string(body)
	} else {
		fe.Message = doc.Message
		if doc.Type != "" {
			fe.Type = doc.Type
		}
		var frames []json.RawMessage
		_ = json.Unmarshal(doc.StackTrace, &frames) // a missing or odd stackTrace is left out
		for _, frame := range frames {
			fe.StackTrace = append(fe.StackTrace, stackFrame(frame))
		}
	}
	if fe.Type == "" {
		fe.Type = "Unhandled"
	}
	return fe
}

// stackFrame formats one stackTrace entry: a string (most runtimes) or an aws-lambda-go
// {"path", "line", "label"} object.
func stackFrame(raw json.RawMessage) string {
	var line string
	if json.Unmarshal(raw, &line) == nil {
		return line
	}
	var frame struct {
		Path  string `json:"path"`
		Line  int    `json:"line"`
		Label string `json:"label"`
	}
	if json.Unmarshal(raw, &frame) == nil && frame.Path != "" {
		return fmt.Sprintf("%s:%d %s", frame.Path, frame.Line, frame.Label)
	}
	return string(raw)
}
