package dashboard

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"

	"github.com/google/uuid"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/web"
)

// The pages that change something, and most that read judges, runs, feedback and settings,
// call the REST API through the Go client, served in this process by the API's own handlers
// (Deps.API) on behalf of the session's key: every rule of the API (validation, roles, project
// scope, idempotency) applies to the dashboard as it does to any client, and nothing is
// written twice.

// inProcessBase is the base URL of the in-process API: never dialled.
const inProcessBase = "http://api.in-process"

// api returns a client of the REST API for the request's session, and the context to make its
// calls with: the session's project, and its key's role checked by the API's router as any
// key's (auth.Authenticator.Delegate).
func (s *server) api(r *http.Request) (*client.Client, context.Context) {
	sess := sessionOf(r)
	c, err := client.New(
		client.WithBaseURL(inProcessBase),
		// Not a key: the API's Authenticator takes the delegated principal and never reads it.
		client.WithAPIKey("session"),
		client.WithProject(sess.ProjectID),
		client.WithHTTPClient(s.apiHTTP),
		client.WithoutPromptCache(),
		client.WithRetries(0),
		client.WithEnv(func(string) string { return "" }),
	)
	if err != nil {
		panic(err) // every option is fixed above
	}
	return c, s.d.Authn.Delegate(r.Context(), sess.principal())
}

// spansByID reads the summaries of spans (GET /spans/summaries), by id: what links an
// evaluation or an example to its span's page. An id that is not a UUID names no span (an
// example of a data set) and is left out, as an unknown one is.
func spansByID(ctx context.Context, c *client.Client, ids []string) (map[string]api.SpanSummary, error) {
	spanIDs := slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return uuid.Validate(id) != nil })
	list, err := c.SpanSummaries(ctx, spanIDs)
	out := make(map[string]api.SpanSummary, len(list))
	for _, s := range list {
		out[s.ID] = s
	}
	return out, err
}

// apiError is err as the dashboard shows it: a client error keeps the API's code and message.
func apiError(err error) error {
	var ce *client.Error
	if errors.As(err, &ce) {
		return &errs.Error{Code: errs.Code(ce.Code), Message: ce.Message}
	}
	return err
}

// formError is how a form shows err: the API refusing the form's input (invalid_request 400,
// conflict 409, payload_too_large 413) with the API's message and status; ok is false for
// anything else, which is the error page.
func formError(err error) (status int, msg string, ok bool) {
	var e *errs.Error
	if !errors.As(apiError(err), &e) {
		return 0, "", false
	}
	switch e.Code {
	case errs.CodeInvalid, errs.CodeConflict, errs.CodeTooLarge:
		return web.Status(e.Code), e.Message, true
	}
	return 0, "", false
}

// readNote is what a page shows in place of a part it could not read (the span's attachments,
// its feedback): the API's message for a refusal; for anything else a line with the request id,
// the cause logged once here and never shown.
func readNote(r *http.Request, what string, err error) string {
	var e *errs.Error
	if errors.As(apiError(err), &e) && e.Code != errs.CodeInternal {
		return "The " + what + " could not be read: " + e.Message
	}
	slog.ErrorContext(r.Context(), "read part of a page", "part", what, "error", err)
	return "The " + what + " could not be read; quote the request id " + web.RequestID(r.Context()) + " when reporting it."
}
