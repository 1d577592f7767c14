package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/llm"
)

// maxRequestBytes bounds a chat completion request: images inline as base64 make them large.
const maxRequestBytes = 20 << 20

// relay serves one chat completion with a provider API: it sends the request upstream, writes
// the answer, or the error, in OpenAI's shape, and returns what the call came to. req is the
// request, its model already checked; traced says whether the call is recorded (a translating
// relay then reads what it answers, from the values it writes).
type relay func(w http.ResponseWriter, r *http.Request, up llm.Upstream, req *chatRequest, traced bool) outcome

// relays are the provider APIs the gateway serves, by llm API.
var relays = map[string]relay{
	llm.APIChatCompletions: relayChatCompletions,
	llm.APIMessages:        relayMessages,
	llm.APIConverse:        relayConverse,
}

// chatCompletions serves POST /v1/chat/completions: the request read and routed, its prompt
// version's binding checked, admitted by the project's limits, served by its provider's relay,
// then, from the relay's outcome, the call priced once, its usage and cost counted and, when
// traced, its span recorded with that cost.
func (s *server) chatCompletions(w http.ResponseWriter, r *http.Request) {
	started := time.Now()
	req, model, ok := readChatRequest(w, r)
	if !ok {
		return
	}
	projectID := auth.ProjectID(r)
	link, ok := s.checkBinding(w, r, projectID, req, model)
	if !ok {
		return
	}
	up, ok := s.route(w, r, model)
	if !ok {
		return
	}
	serve, ok := relays[up.Target.API]
	if !ok {
		writeError(w, http.StatusBadRequest, typeInvalidRequest, "model_not_available",
			fmt.Sprintf("model %q: the gateway does not serve %s's API (%s) yet", model, up.Target.Provider, up.Target.API), 0)
		return
	}
	if !s.admit(w, r, projectID) {
		return
	}
	tc, traced := traceRequest(r, s.Trace)
	traced = traced && s.Traces != nil
	var answer *answerRecorder
	if traced {
		// Every relay returns what it answered: the recorder notes only how it was written.
		answer = newAnswerRecorder(w, time.Now, false)
		w = answer
		w.Header().Set(SpanIDHeader, tc.spanID)
	}
	messages := req.fields["messages"] // as sent: the relays change only the model and stream options
	out := serve(w, r, up, req, traced)
	// The client may be gone: what it used is counted, and its call recorded, all the same.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), accountTimeout)
	defer cancel()
	price := s.price(ctx, projectID, up.Target, out)
	s.account(ctx, projectID, out, price.cost)
	if traced {
		var stream bool
		_ = json.Unmarshal(req.fields["stream"], &stream)
		s.record(ctx, &gatewayCall{
			ProjectID: projectID, Model: model, Target: up.Target, Messages: messages, Stream: stream,
			Started: started, Ended: time.Now(), Answer: answer, Relayed: out.answer, FirstToken: out.firstToken,
			Usage: out.usage, HasUsage: out.hasUsage, ProviderRequestID: out.requestID, Link: link, Price: price,
		}, tc)
	}
}

// SpanIDHeader carries the id of a traced call's span in its answer: the completion id feedback
// on the call names.
const SpanIDHeader = "X-Plume-Span-Id"

// record writes a traced call's span. A span that cannot be written is logged: the call is
// answered already, and tracing never fails it.
func (s *server) record(ctx context.Context, c *gatewayCall, tc traceContext) {
	if err := recordCall(ctx, s.Traces, c, tc); err != nil {
		slog.ErrorContext(ctx, "gateway: the call's span cannot be recorded", "error", err)
	}
}

// readChatRequest reads the request's JSON object and its model, or answers why it cannot.
func readChatRequest(w http.ResponseWriter, r *http.Request) (*chatRequest, string, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBytes))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeError(w, http.StatusRequestEntityTooLarge, typeInvalidRequest, "request_too_large",
				fmt.Sprintf("the request is larger than %d bytes", maxRequestBytes), 0)
			return nil, "", false
		}
		writeError(w, http.StatusBadRequest, typeInvalidRequest, "", "cannot read the request: "+err.Error(), 0)
		return nil, "", false
	}
	req, ok := readChatBody(body)
	if !ok {
		writeError(w, http.StatusBadRequest, typeInvalidRequest, "", "the body must be a chat completion request: a JSON object", 0)
		return nil, "", false
	}
	model, ok := plainString(req.fields["model"])
	if !ok && json.Unmarshal(req.fields["model"], &model) != nil || strings.TrimSpace(model) == "" {
		writeError(w, http.StatusBadRequest, typeInvalidRequest, "", "model: required, a model id such as openai/gpt-4o-mini", 0)
		return nil, "", false
	}
	return req, model, true
}

// route finds the provider of model, or answers why there is none.
func (s *server) route(w http.ResponseWriter, r *http.Request, model string) (llm.Upstream, bool) {
	models, err := s.Models(r.Context())
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, typeServer, "", "the deployment's model providers cannot be read: "+err.Error(), 0)
		return llm.Upstream{}, false
	}
	up, err := models.Upstream(model)
	switch {
	case errors.Is(err, llm.ErrUnknownModel):
		writeError(w, http.StatusNotFound, typeInvalidRequest, "model_not_found", err.Error(), 0)
		return llm.Upstream{}, false
	case errors.Is(err, llm.ErrNotConfigured):
		writeError(w, http.StatusBadRequest, typeInvalidRequest, "model_not_available",
			fmt.Sprintf("model %q: this deployment has no %s provider configured (%v)", model, providerOf(model), err), 0)
		return llm.Upstream{}, false
	case err != nil:
		writeError(w, http.StatusBadRequest, typeInvalidRequest, "", err.Error(), 0)
		return llm.Upstream{}, false
	}
	return up, true
}

// requestIDHeaders are the headers a provider names its id of a call in: x-request-id
// (OpenAI and most OpenAI-compatible providers), request-id (Anthropic), x-amzn-RequestId (AWS).
var requestIDHeaders = []string{"X-Request-Id", "Request-Id", "X-Amzn-Requestid"}

// sendJSON encodes req and sends it (send); a request that cannot be encoded is answered 400.
func sendJSON(w http.ResponseWriter, r *http.Request, up llm.Upstream, req any, stream bool) (*http.Response, outcome, bool) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, outcome{}.failed(w, http.StatusBadRequest, typeInvalidRequest, "", "the request cannot be encoded: "+err.Error()), false
	}
	return send(w, r, up, body, stream)
}

// send sends body to up, as a stream when stream is set (llm.Upstream.DoStream). It answers
// 502 for a provider that cannot be reached, and then returns false with the failed outcome;
// otherwise the caller reads and closes the answer, whatever its status, and the outcome so
// far has the provider's id of the call.
func send(w http.ResponseWriter, r *http.Request, up llm.Upstream, body []byte, stream bool) (*http.Response, outcome, bool) {
	do := up.Do
	if stream {
		do = up.DoStream
	}
	res, err := do(r.Context(), body)
	if err != nil {
		return nil, outcome{}.failed(w, http.StatusBadGateway, typeServer, "upstream_unreachable", fmt.Sprintf("%s cannot be reached: %v", up.Target.Provider, err)), false
	}
	var out outcome
	for _, h := range requestIDHeaders {
		if id := res.Header.Get(h); id != "" {
			out.requestID = id
			break
		}
	}
	return res, out, true
}

// providerOf names a model's provider for messages ("unknown" when Route cannot place it).
func providerOf(model string) string {
	if t, err := llm.Route(model); err == nil {
		return t.Provider
	}
	return "unknown"
}
