package gateway

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/plumehq/plume/shared/llm/wire"
)

// Error types of OpenAI's error body, by status.
const (
	typeInvalidRequest = "invalid_request_error"
	typeAuthentication = "authentication_error"
	typeRateLimit      = "rate_limit_error"
	typeServer         = "api_error"
)

// writeError answers an error in OpenAI's shape; retryAfter > 0 sets Retry-After.
func writeError(w http.ResponseWriter, status int, typ, code, message string, retryAfter time.Duration) {
	body := wire.ChatErrorBody{Error: wire.ChatError{Message: message, Type: typ}}
	if code != "" {
		body.Error.Code = &code
	}
	if retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int((retryAfter+time.Second-1)/time.Second)))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}
