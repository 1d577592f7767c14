package feedback

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/functions/judges"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/feedback"
	"github.com/plumehq/plume/shared/prompt"
	"github.com/plumehq/plume/shared/textcut"
	"github.com/plumehq/plume/shared/trace"
	"github.com/plumehq/plume/shared/web"
)

// CompletionPages reads pages of a prompt's completions with their feedback and evaluations.
type CompletionPages interface {
	// PromptCompletions returns a page of the prompt's completions, newest first. Errors:
	// NotFound for an unknown prompt or version, Invalid for a malformed cursor.
	PromptCompletions(ctx context.Context, projectID, slug string, q feedback.CompletionQuery) (feedback.CompletionPage, error)
}

// completions serves GET /projects/{project_id}/prompts/{slug}/completions: a page of the
// prompt's completions (its llm spans), newest first, each with a cut excerpt of its input and
// output, its human feedback and the evaluations of the judges linked to the prompt. Query:
// limit (1-50, default 20), cursor (the next_cursor of the previous page), version (a version
// number: its completions only).
//
// Requests per page without a version filter: 6 DynamoDB requests (ddb.FeedbackStore.
// PromptCompletions; one BatchGetItem more per 100 keys of versions and evaluations beyond the
// first 100, i.e. completions × linked judges) and one ranged S3 GetObject per span batch object
// the page's spans were ingested in; never one request per completion. TestPromptCompletions
// counts them. A page whose answer would pass api.MaxAnswerBytes (feedback of many people, each
// with up to 96 KB of text) is read again with the limit that fits, so that it holds fewer
// completions, its limit their number, and its next_cursor reads on after them: twice the
// requests, for such a page only.
func (s *server) completions(w http.ResponseWriter, r *http.Request) {
	slug := r.PathValue("slug")
	if !prompt.IsSlug(slug) {
		web.Error(w, r, errs.NotFound("prompt %q not found", slug))
		return
	}
	v := r.URL.Query()
	q := feedback.CompletionQuery{Cursor: v.Get("cursor")}
	var err error
	if q.Limit, err = intParam(v.Get("limit"), "limit", api.DefaultCompletionsLimit, 1, api.MaxCompletionsLimit); err != nil {
		web.Error(w, r, err)
		return
	}
	if q.Version, err = intParam(v.Get("version"), "version", 0, 1, 1<<31-1); err != nil {
		web.Error(w, r, err)
		return
	}
	out, err := s.completionList(r.Context(), auth.ProjectID(r), slug, q)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	n, err := web.Fit(out.Completions, 256)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	if n < len(out.Completions) {
		// The page would pass api.MaxAnswerBytes: read it again with the limit that fits, so that
		// its next_cursor starts right after the completions answered. The store lists in a fixed
		// order, so the shorter page is this one's first n; its limit says how many it holds.
		q.Limit = n
		if out, err = s.completionList(r.Context(), auth.ProjectID(r), slug, q); err != nil {
			web.Error(w, r, err)
			return
		}
	}
	web.OK(w, out)
}

// completionList is a page of a prompt's completions in the API's form, their spans' texts
// read from the span batches.
func (s *server) completionList(ctx context.Context, projectID, slug string, q feedback.CompletionQuery) (api.CompletionList, error) {
	page, err := s.d.CompletionPages.PromptCompletions(ctx, projectID, slug, q)
	if err != nil {
		return api.CompletionList{}, err
	}
	locs := make(map[string]trace.Location, len(page.Completions))
	for _, c := range page.Completions {
		if c.Summary.Location.Key != "" {
			locs[c.Summary.SpanID] = c.Summary.Location
		}
	}
	spans := map[string]trace.Span{}
	if len(locs) > 0 {
		if spans, err = trace.LoadRecords(ctx, s.d.Blobs, locs); err != nil {
			return api.CompletionList{}, err
		}
	}
	out := api.CompletionList{Completions: make([]api.Completion, 0, len(page.Completions)), Limit: q.Limit}
	if page.NextCursor != "" {
		out.NextCursor = &page.NextCursor
	}
	for _, c := range page.Completions {
		out.Completions = append(out.Completions, toCompletion(c, spans[c.Summary.SpanID]))
	}
	return out, nil
}

// intParam is the integer query parameter s, def when absent; Invalid outside [lo, hi].
func intParam(s, name string, def, lo, hi int) (int, error) {
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, errs.Invalid("%s must be an integer from %d to %d, got %q", name, lo, hi, s)
	}
	return n, nil
}

// toCompletion is the API form of c, whose span record is span (zero when unread).
func toCompletion(c feedback.Completion, span trace.Span) api.Completion {
	sum := c.Summary
	out := api.Completion{
		SpanID: sum.SpanID, TraceID: sum.TraceID, PromptVersionID: nonEmpty(c.VersionID), StartedAt: sum.StartedAt,
		EndedAt: sum.EndedAt, Cost: sum.Cost, Input: excerptOf(span.InputData), Output: excerptOf(span.OutputData),
		Feedback: make([]api.HumanFeedbackItem, 0, len(c.Feedback)), Evaluations: make([]api.Evaluation, 0, len(c.Evaluations)),
	}
	if c.VersionNumber > 0 {
		out.PromptVersion = &c.VersionNumber
	}
	var attrs struct {
		Model json.RawMessage `json:"model"`
	}
	var model string
	if json.Unmarshal(span.Attributes, &attrs) == nil && json.Unmarshal(attrs.Model, &model) == nil && model != "" {
		out.Model = &model
	}
	for _, f := range c.Feedback {
		out.Feedback = append(out.Feedback, api.HumanFeedbackItem{
			Kind: api.KindHumanFeedback, ID: f.ID, SpanID: f.SpanID, ThumbsUp: f.ThumbsUp, Reason: f.Reason, ExpectedOutput: f.ExpectedOutput,
			CreatedAt: f.CreatedAt, CreatedBy: toUser(f.CreatedBy), SourceType: f.SourceType(), PromptVersionID: nonEmpty(f.PromptVersionID),
		})
	}
	for _, e := range c.Evaluations {
		out.Evaluations = append(out.Evaluations, judges.EvaluationOf(e))
	}
	return out
}

// excerptOf is the first api.CompletionExcerptBytes bytes of s.
func excerptOf(s *string) api.Excerpt {
	if s == nil {
		return api.Excerpt{}
	}
	text, cut := textcut.Cut(*s, api.CompletionExcerptBytes)
	return api.Excerpt{Text: &text, Cut: cut, Bytes: len(*s)}
}
