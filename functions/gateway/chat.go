package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/llm"
)

// maxRequestBytes bounds a chat completion request: images inline as base64 make them large.
const maxRequestBytes = 20 << 20

// relay serves one chat completion with a provider API: it sends the request upstream and
// writes the answer, or the error, in OpenAI's shape. fields is the request's JSON object, its
// model already checked.
type relay func(w http.ResponseWriter, r *http.Request, up llm.Upstream, fields map[string]json.RawMessage)

// relays are the provider APIs the gateway serves, by llm API.
var relays = map[string]relay{
	llm.APIChatCompletions: relayChatCompletions,
	llm.APIMessages:        relayMessages,
	llm.APIConverse:        relayConverse,
}

// chatCompletions serves POST /v1/chat/completions: the request read and routed, its prompt
// version's binding checked, admitted by the project's limits, served by its provider's relay,
// then its usage counted.
func (s *server) chatCompletions(w http.ResponseWriter, r *http.Request) {
	fields, model, ok := readChatRequest(w, r)
	if !ok {
		return
	}
	projectID := auth.ProjectID(r)
	if !s.checkBinding(w, r, projectID, fields, model) {
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
	r, out := withOutcome(r)
	serve(w, r, up, fields)
	s.account(r.Context(), projectID, up.Target, out)
}

// readChatRequest reads the request's JSON object and its model, or answers why it cannot.
func readChatRequest(w http.ResponseWriter, r *http.Request) (map[string]json.RawMessage, string, bool) {
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
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		writeError(w, http.StatusBadRequest, typeInvalidRequest, "", "the body must be a chat completion request: a JSON object", 0)
		return nil, "", false
	}
	var model string
	if err := json.Unmarshal(fields["model"], &model); err != nil || strings.TrimSpace(model) == "" {
		writeError(w, http.StatusBadRequest, typeInvalidRequest, "", "model: required, a model id such as openai/gpt-4o-mini", 0)
		return nil, "", false
	}
	return fields, model, true
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

// providerOf names a model's provider for messages ("unknown" when Route cannot place it).
func providerOf(model string) string {
	if t, err := llm.Route(model); err == nil {
		return t.Provider
	}
	return "unknown"
}
