package tracing

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/trace"
	"github.com/plumehq/plume/shared/web"
)

// logCompletion serves POST /projects/{project_id}/prompts/{slug}/completions, zeroeval's
// log_completion (its path keeps the literal {project_id}, auth.KeyProject): the completion
// becomes an llm span linked to the prompt and its version, ingested as POST /spans ingests
// one, so it is listed with the prompt's completions, priced and judged like any other.
func (s *ingestServer) logCompletion(w http.ResponseWriter, r *http.Request) {
	var req api.LogCompletionRequest
	if err := web.Decode(w, r, &req, trace.MaxBatchBytes); err != nil {
		web.Error(w, r, err)
		return
	}
	span, err := completionSpan(r.PathValue("slug"), req, s.svc.Now())
	if err != nil {
		web.Error(w, r, err)
		return
	}
	body, err := json.Marshal([]any{span})
	if err != nil {
		web.Error(w, r, err)
		return
	}
	pid := auth.ProjectID(r)
	spans, rejected, err := trace.DecodeBatch(body, pid, s.svc.Now())
	if err != nil {
		web.Error(w, r, err)
		return
	}
	res, err := s.svc.IngestBatch(r.Context(), pid, spans)
	if err != nil {
		web.Error(w, r, err)
		return
	}
	if len(res.Stored) == 0 {
		web.Error(w, r, trace.NoValidSpan(trace.InRequest(rejected, res.Refused)))
		return
	}
	id := span["id"].(string)
	web.OK(w, api.LoggedCompletion{ID: id, SpanID: id, TraceID: span["trace_id"].(string)})
}

// completionSpan is the span of a logged completion, in the form POST /spans takes.
func completionSpan(slug string, req api.LogCompletionRequest, now time.Time) (map[string]any, error) {
	id := uuid.NewString()
	if req.SpanID != nil && *req.SpanID != "" {
		if _, err := uuid.Parse(*req.SpanID); err != nil {
			return nil, errs.Invalid("span_id must be a UUID, not %q", *req.SpanID)
		}
		id = *req.SpanID
	}
	end := now
	start := end
	if req.DurationMS != nil && *req.DurationMS > 0 {
		start = end.Add(-time.Duration(*req.DurationMS * float64(time.Millisecond)))
	}
	link := map[string]any{"task": slug, "prompt_slug": slug}
	if req.PromptVersionID != nil {
		link["prompt_version_id"] = *req.PromptVersionID
	}
	attrs := map[string]any{"zeroeval": link}
	set := func(k string, v any, ok bool) {
		if ok {
			attrs[k] = v
		}
	}
	set("model", deref(req.ModelID), req.ModelID != nil)
	set("inputTokens", deref(req.PromptTokens), req.PromptTokens != nil)
	set("outputTokens", deref(req.CompletionTokens), req.CompletionTokens != nil)
	set("metadata", req.Metadata, len(req.Metadata) > 0)
	span := map[string]any{
		"id": id, "trace_id": uuid.NewString(), "name": "log_completion", "kind": "llm",
		"started_at": float64(start.UnixMicro()) / 1e6, "ended_at": float64(end.UnixMicro()) / 1e6,
		"status": "ok", "attributes": attrs,
	}
	switch {
	case req.InputText != nil:
		span["input_data"] = *req.InputText
	case len(req.Messages) > 0 && string(req.Messages) != "null":
		span["input_data"] = string(req.Messages)
	}
	if req.OutputText != nil {
		span["output_data"] = *req.OutputText
	}
	if req.Cost != nil {
		span["cost"] = *req.Cost
	}
	if req.HasError != nil && *req.HasError {
		span["status"] = "error"
		if req.ErrorMessage != nil {
			span["error_message"] = *req.ErrorMessage
		}
	}
	return span, nil
}

func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
