package dashboard

import (
	"cmp"
	"net/http"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/errs"
)

// spanFeedbackRoutes registers the feedback form of a span (thumbs and reason).
func (s *server) spanFeedbackRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /ui/traces/{trace_id}/spans/{span_id}/feedback", s.spanFeedback)
}

// spanFeedback serves POST /ui/traces/{trace_id}/spans/{span_id}/feedback: the signed-in
// person's thumbs up or down and reason on an llm span linked to a prompt, recorded as the API
// records feedback on a completion (POST /v1/prompts/{slug}/completions/{span_id}/feedback:
// one record per person and completion, sent again it replaces theirs). Then the span's page,
// at its feedback; a refused form is shown again with the API's message and the input kept.
func (s *server) spanFeedback(w http.ResponseWriter, r *http.Request) {
	traceID, spanID := r.PathValue("trace_id"), r.PathValue("span_id")
	d, err := s.spanDetail(r, traceID, spanID, true)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if d.FeedbackURL == "" {
		s.fail(w, r, errs.Invalid("This span takes no feedback: feedback is recorded on llm spans made with a prompt."))
		return
	}
	d.Form = feedbackForm{Thumbs: r.PostForm.Get("thumbs"), Reason: r.PostForm.Get("reason")}
	req := api.FeedbackRequest{}
	switch d.Form.Thumbs {
	case "up", "down":
		up := d.Form.Thumbs == "up"
		req.ThumbsUp = &up
	default:
		d.Form.Error = "Choose thumbs up or thumbs down."
		s.renderSpan(w, r, http.StatusBadRequest, d)
		return
	}
	if d.Form.Reason != "" {
		req.Reason = &d.Form.Reason
	}
	c, ctx := s.api(r)
	if _, err := c.SendFeedback(ctx, cmp.Or(d.Span.PromptLink.PromptSlug, d.Span.PromptLink.Task), spanID, req); err != nil {
		status, msg, ok := formError(err)
		if !ok {
			s.fail(w, r, err)
			return
		}
		d.Form.Error = msg
		s.renderSpan(w, r, status, d)
		return
	}
	http.Redirect(w, r, d.SpanURL+"#span-feedback", http.StatusSeeOther)
}
