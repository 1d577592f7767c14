package openapi

import (
	"fmt"
	"reflect"

	"github.com/plumehq/plume/api"
)

// routeDoc documents one registered route: the ServeMux pattern its area's router registers,
// what it reads and what it answers. A route whose body is not JSON, or not Plume's, gives its
// content as schemas (BodyContent, ReplyContent) instead of api types.
type routeDoc struct {
	// Route is the ServeMux pattern as the area registers it ("GET /v1/prompts/{slug}").
	Route string
	// Path is the OpenAPI path when it is not the pattern's: a wildcard that carries an action
	// ("{tag_action}" is "{tag}:pin") or the rest of the path ("{model...}").
	Path    string
	ID      string // operationId
	Tag     string // the area
	Summary string
	// Description adds what a client must know beyond the summary.
	Description string
	// Open routes take no API key (auth.Router.HandleOpen). SelfAuth routes are open to the
	// router but take a key all the same: the handler checks it, to answer in its protocol's
	// error shape (OTLP).
	Open     bool
	SelfAuth bool
	Query    []param
	// Body is the JSON request body's type; Required are its required top-level fields.
	Body     reflect.Type
	Required []string
	// Reply is the JSON body of the 200 answer; ReplyHeaders name the headers it may carry
	// (keys of answerHeaders).
	Reply        reflect.Type
	ReplyHeaders []string
	// BodyContent and ReplyContent are the request and answer contents (media type -> media
	// type object) of a route that is not plain JSON; ReplyStatus is its success status when
	// not 200. ErrorContent replaces the JSON error body for routes that answer errors in
	// another protocol's shape.
	BodyContent  map[string]any
	ReplyContent map[string]any
	ReplyStatus  string
	ErrorContent map[string]any
	// Spec is the external specification of a route's protocol.
	Spec string
}

// param is a query parameter.
type param struct {
	Name        string
	Description string
	Schema      map[string]any
}

func typeOf[T any]() reflect.Type { return reflect.TypeFor[T]() }

func limit(def, maxLimit int) param {
	return param{"limit", "page size", map[string]any{"type": "integer", "minimum": 1, "maximum": maxLimit, "default": def}}
}

// listQuery is the query of a tracing list (api.List): its parameters, then tagFilters for
// any other.
func listQuery(l api.List) []param {
	out := make([]param, 0, len(l.Params)+1)
	for _, p := range l.Params {
		out = append(out, param{p.Name, p.Doc, paramSchema(l, p)})
	}
	return append(out, tagFilters)
}

// paramSchema is the schema of a list parameter's value.
func paramSchema(l api.List, p api.Param) map[string]any {
	switch {
	case p.Name == api.ParamSortBy:
		return map[string]any{"type": "string", "enum": anyOf(l.Sorts)}
	case p.Name == api.ParamSortOrder:
		return map[string]any{"type": "string", "enum": []any{string(api.SortAsc), string(api.SortDesc)}, "default": string(api.SortDesc)}
	case p.Name == api.ParamLimit:
		return map[string]any{"type": "integer", "minimum": 1, "maximum": l.Limits.Max, "default": l.Limits.Default}
	case p.Name == api.ParamOffset:
		return map[string]any{"type": "integer", "minimum": 0, "maximum": api.MaxListOffset, "default": 0}
	case p.Name == "span_kind":
		return map[string]any{"type": "string", "examples": knownKinds}
	}
	return map[api.ParamKind]map[string]any{
		api.ParamString: str, api.ParamUUID: uuidStr, api.ParamTime: when, api.ParamNumber: num,
		api.ParamBoolean: boolStr, api.ParamInteger: {"type": "integer"}, api.ParamList: csv,
	}[p.Kind]
}

func anyOf(values []string) []any {
	out := make([]any, len(values))
	for i, v := range values {
		out[i] = v
	}
	return out
}

// listHeaders are the headers of a tracing list's answer (functions/tracing/query.go).
var listHeaders = []string{api.ScannedHeader, api.ScanTruncatedHeader, api.TagFiltersHeader, api.NextOffsetHeader, api.NextCursorHeader, "Link"}

// pagedHeaders are the headers of a list answer that holds fewer items than asked to stay
// within api.MaxAnswerBytes (shared/web: List, Cut); writtenHeaders of an answer to a write
// that holds fewer of the items written (shared/web: Written).
var (
	pagedHeaders   = []string{api.NextOffsetHeader, "Link"}
	writtenHeaders = []string{api.OmittedHeader}
)

func arrayOf(items map[string]any) map[string]any {
	return map[string]any{"type": "array", "items": items}
}

func jsonContent(schema map[string]any) map[string]any {
	return map[string]any{"application/json": map[string]any{"schema": schema}}
}

// External specifications of the routes that speak another protocol.
const (
	otlpSpec   = "https://opentelemetry.io/docs/specs/otlp/#otlphttp"
	mcpSpec    = "https://modelcontextprotocol.io/specification/2025-06-18/basic/transports#streamable-http"
	openAISpec = "https://platform.openai.com/docs/api-reference/chat"
)

// routeDocs documents every route of every HTTP function, area by area in template.yaml's
// order. The tests check it against the routers of internal/stack: a route registered without
// a line here, or a line without its route, fails them. It is a function, built when the
// document is (the first GET /openapi.json), not at every function's start.
func routeDocs() []routeDoc {
	makeParts()
	// The elements of POST /spans (spec §2.6), /traces (§2.7) and /sessions (§2.8).
	spanInput := inputOf[api.SpanInput]("trace_id", "name", "started_at")
	traceInput := inputOf[api.TraceInput]("session_id", "name", "started_at")
	sessionInput := inputOf[api.SessionInput]("project_id")
	return []routeDoc{
		// PromptsFunction (functions/prompts, spec §4.1).
		{Route: "GET /healthz", ID: "health", Tag: "health", Summary: "Health check", Open: true, ReplyContent: health},
		{Route: "GET /openapi.json", ID: "openAPIDocument", Tag: "health", Summary: "This OpenAPI 3.1 document", Open: true,
			ReplyContent: jsonContent(map[string]any{"type": "object", "required": []any{"openapi", "paths"}})},
		{Route: "GET /v1/prompts/{slug}", ID: "getPrompt", Tag: "prompts", Summary: "Get a version of a prompt by tag (default latest) or number",
			Description: "A version number wins over a tag when both are given. A tag with a running split is served one of the split's versions by weight " +
				"(ab_choice says which): the same one for the same user_id, else session_id, for the whole split (a hash of the test and the id, no write), " +
				"at random without either. The choice is recorded on the session (else the user) once, and counted in the split's A/B test report.",
			Query: []param{
				{"version", "a version number", map[string]any{"type": "integer", "minimum": 1}},
				{"tag", "a tag", map[string]any{"type": "string", "default": "latest"}},
				{api.PromptSessionParam, "the caller's session: a split serves it one version, and records the choice on it (its signals join the variant)", map[string]any{"type": "string", "maxLength": 128}},
				{api.PromptUserParam, "the caller's user: a split serves it one version across sessions (recorded on the user when no session_id is given)", map[string]any{"type": "string", "maxLength": 128}},
			}, Reply: typeOf[api.PromptVersion](), ReplyHeaders: []string{"Cache-Control"}},
		{Route: "POST /v1/tasks/{task}/prompt/versions/ensure", ID: "ensurePromptVersion", Tag: "prompts", Summary: "Create a version of a task's prompt unless its content exists",
			Description: "Idempotent by content hash; X-Plume-Created says whether the version is new.",
			Body:        typeOf[api.EnsureVersionRequest](), Required: []string{"content"}, Reply: typeOf[api.PromptVersion]()},
		{Route: "GET /v1/tasks/{task}/prompt/versions/by-hash/{hash}", ID: "getPromptVersionByHash", Tag: "prompts", Summary: "Get a version of a task's prompt by content hash", Reply: typeOf[api.PromptVersion]()},
		{Route: "GET /v1/tasks/{task}/prompt/latest", ID: "getLatestPromptVersion", Tag: "prompts", Summary: "Get the latest version of a task's prompt", Reply: typeOf[api.PromptVersion]()},
		{Route: "GET /v1/prompt-versions/{version_id}/model", ID: "getPromptVersionModel", Tag: "prompts", Summary: "Get the model bound to a prompt version", Reply: typeOf[api.VersionModel]()},
		{Route: "GET /projects/{project_id}/prompts", ID: "listPrompts", Tag: "prompts", Summary: "List the project's prompts with their latest versions",
			Query: []param{pagedOffset}, Reply: typeOf[[]api.Prompt](), ReplyHeaders: pagedHeaders},
		{Route: "GET /projects/{project_id}/prompts/{slug}/versions", ID: "listPromptVersions", Tag: "prompts", Summary: "List the versions of a prompt",
			Query: []param{pagedOffset}, Reply: typeOf[[]api.PromptVersion](), ReplyHeaders: pagedHeaders},
		{Route: "PATCH /projects/{project_id}/prompts/{slug}/versions/{version}", ID: "bindPromptVersionModel", Tag: "prompts", Summary: "Bind a model to a prompt version, or unbind it with null",
			Body: typeOf[api.BindModelRequest](), Required: []string{"model_id"}, Reply: typeOf[api.PromptVersion]()},
		{Route: "GET /projects/{project_id}/prompts/{slug}/tags", ID: "listPromptTags", Tag: "prompts", Summary: "List the tags of a prompt",
			Query: []param{pagedOffset}, Reply: typeOf[[]api.PromptTag](), ReplyHeaders: pagedHeaders},
		{Route: "POST /projects/{project_id}/prompts/{slug}/tags/{tag_action}", Path: "/projects/{project_id}/prompts/{slug}/tags/{tag}:pin",
			ID: "pinPromptTag", Tag: "prompts", Summary: "Pin a tag to a version (deploy it)",
			Description: "expected_version (optional) is a precondition on where the tag points now: that version, or 0 for a tag that must not exist yet. " +
				"It is checked atomically with the write; a tag elsewhere answers 409 conflict naming its current version, and nothing changes. " +
				"A tag already at version passes, so a retried pin succeeds. Without expected_version the pin is unconditional.",
			Body: typeOf[api.PinRequest](), Required: []string{"version"}, Reply: typeOf[api.PinResult]()},
		{Route: "POST /projects/{project_id}/prompts/{slug}/tags/{tag_action}", Path: "/projects/{project_id}/prompts/{slug}/tags/{tag}:split",
			ID: "splitPromptTag", Tag: "prompts", Summary: "Split a tag's traffic between versions (a prompt A/B test)",
			Description: "For duration_days, GET /v1/prompts/{slug}?tag= serves the versions by weight (the first is the control), sticky per user_id or session_id. " +
				"The split is the A/B test name (default <slug>.<tag>.<start>), reported by GET /projects/{project_id}/ab-tests/{test_name}. " +
				"409 while the tag has a running split, or when the name is taken; 404 for a missing tag or version; \"latest\" cannot be split.",
			Body: typeOf[api.PromptSplitRequest](), Required: []string{"variants", "duration_days"}, Reply: typeOf[api.PromptSplit]()},
		{Route: "POST /projects/{project_id}/prompts/{slug}/tags/{tag_action}", Path: "/projects/{project_id}/prompts/{slug}/tags/{tag}:end-split",
			ID: "endPromptTagSplit", Tag: "prompts", Summary: "End a tag's running split: the tag serves its own version again",
			Description: "The split's A/B test completes now, and its report decides. 404 when the tag has no running split.",
			Reply:       typeOf[api.PromptSplit]()},

		// TracingIngestFunction and TracingQueryFunction (functions/tracing, spec §4.3-4.5).
		{Route: "POST /spans", ID: "ingestSpans", Tag: "tracing", Summary: "Ingest a batch of spans",
			Description: "Valid spans are stored and answered (to an ingest key, as sent); the others (invalid, or sent with another trace than the one they are stored under) are counted in X-Plume-Rejected and listed by position in X-Plume-Rejected-Spans. A batch without one stored span is 400.",
			BodyContent: jsonContent(arrayOf(spanInput)), Reply: typeOf[[]api.Span](), ReplyHeaders: writtenHeaders},
		{Route: "POST /traces", ID: "putTraces", Tag: "tracing", Summary: "Create or update traces", BodyContent: jsonContent(arrayOf(traceInput)), Reply: typeOf[[]api.Trace](), ReplyHeaders: writtenHeaders,
			Description: "Answers the traces as stored; an ingest key, which reads nothing, is answered them as sent (no span counts, no root span input or output)."},
		{Route: "POST /sessions", ID: "putSessions", Tag: "tracing", Summary: "Create or update sessions", BodyContent: jsonContent(arrayOf(sessionInput)), Reply: typeOf[[]api.Session](), ReplyHeaders: writtenHeaders,
			Description: "Answers the sessions as stored; an ingest key, which reads nothing, is answered them as sent."},
		{Route: "POST /spans/{span_id}/attachments", ID: "createAttachmentUpload", Tag: "tracing", Summary: "Get a presigned URL to upload a file of a span",
			Body: typeOf[api.AttachmentUploadRequest](), Required: []string{"content_type", "size"}, Reply: typeOf[api.AttachmentUpload]()},
		{Route: "POST /projects/{project_id}/prompts/{slug}/completions", ID: "logCompletion", Tag: "tracing",
			Summary: "Log a completion of a prompt as an llm span (zeroeval's log_completion; the literal {project_id} names the key's project)",
			Body:    typeOf[api.LogCompletionRequest](), Reply: typeOf[api.LoggedCompletion]()},
		{Route: "GET /spans", ID: "listSpans", Tag: "tracing", Summary: "Query spans, newest first",
			Query: listQuery(api.SpanList), Reply: typeOf[[]api.Span](), ReplyHeaders: listHeaders},
		{Route: "GET /traces", ID: "listTraces", Tag: "tracing", Summary: "Query traces, newest first",
			Query: listQuery(api.TraceList), Reply: typeOf[[]api.Trace](), ReplyHeaders: listHeaders},
		{Route: "GET /sessions", ID: "listSessions", Tag: "tracing", Summary: "Query sessions, newest first",
			Query: listQuery(api.SessionList), Reply: typeOf[[]api.Session](), ReplyHeaders: listHeaders},
		{Route: "GET /spans/{span_id}/attachments", ID: "listAttachments", Tag: "tracing", Summary: "List a span's files with presigned download URLs", Reply: typeOf[api.AttachmentList]()},
		{Route: "GET /traces/{trace_id}/tree", ID: "getTraceTree", Tag: "tracing", Summary: "A page of a trace's span tree: summaries, depths and subtree totals",
			Description: fmt.Sprintf("A trace of at most %d spans is one exact tree, paged depth first (whole: true); a larger one is paged in the order its spans arrived, each page a tree of its own (whole: false), so that a page costs what it holds.", api.SpanTreeWholeMax),
			Query:       []param{offset, limit(api.SpanTreeDefaultLimit, api.SpanTreeMaxLimit)},
			Reply:       typeOf[api.SpanTree]()},
		{Route: "GET /spans/summaries", ID: "listSpanSummaries", Tag: "tracing", Summary: "Spans' summaries: by id, or the list GET /spans answers for the same query",
			Description: "With ids: those spans' summaries in the order asked, unknown ids left out (the list parameters are then not read). " +
				"Without: the list of GET /spans for the same parameters, paged by the same cursors and headers, each span as its summary: no span body is read.",
			Query: append([]param{{"ids", fmt.Sprintf("span ids, at most %d", api.MaxSummaryIDs), csv}}, listQuery(api.SpanList)...),
			Reply: typeOf[[]api.SpanSummary](), ReplyHeaders: listHeaders},
		{Route: "GET /projects/{project_id}/metrics", ID: "getMetrics", Tag: "tracing",
			Summary: "The project's counters per minute, hour or day: traces, spans, errors, cost, tokens, latency percentiles, llm calls by model, judge pass rates, feedback",
			Description: "Read from rollups kept from the table's change stream (a second or so behind the writes), in O(buckets) whatever the project's size. " +
				"At most one span filter; under it the trace, judge and feedback counters are null. Minute buckets for the whole project only.",
			Query: []param{
				{api.MetricsFrom, "the window's start (RFC 3339), rounded down to the bucket; default: 24 hours before to", map[string]any{"type": "string", "format": "date-time"}},
				{api.MetricsTo, "the window's end (RFC 3339), rounded up to the bucket; default: now", map[string]any{"type": "string", "format": "date-time"}},
				{api.MetricsBucketParam, "the bucket size (at most 1,440 minutes, 2,160 hours or 400 days per query)", map[string]any{"type": "string", "enum": []string{"minute", "hour", "day"}, "default": "hour"}},
				{api.MetricsSpanKind, "only the spans of this kind", str},
				{api.MetricsSpanName, "only the spans of this name", str},
				{api.MetricsModel, "only the spans of this model", str},
				{api.MetricsPrompt, "only the spans linked to this prompt (its slug)", str},
				{api.MetricsTag, "only the spans with this tag, as key:value", str},
			},
			Reply: typeOf[api.Metrics]()},
		{Route: "GET /spans/{span_id}", ID: "getSpan", Tag: "tracing", Summary: "A span as GET /spans answers it, with the signals recorded on it",
			Description: "The span and its signal record are read at once (one GetItem for the signals); the lists never carry signals.",
			Reply:       typeOf[api.SpanWithSignals]()},
		{Route: "GET /traces/{trace_id}", ID: "getTrace", Tag: "tracing", Summary: "A trace as GET /traces answers it, with the signals recorded on it",
			Reply: typeOf[api.TraceWithSignals]()},
		{Route: "GET /sessions/{session_id}", ID: "getSession", Tag: "tracing", Summary: "A session as GET /sessions answers it, with the signals recorded on it",
			Reply: typeOf[api.SessionWithSignals]()},

		// OTLPFunction (functions/otlp, spec §4.6): OTLP/HTTP, authenticated by the handler.
		{Route: "POST /v1/traces", ID: "exportOTLPTraces", Tag: "otlp", Summary: "Export OpenTelemetry traces (OTLP/HTTP, protobuf or JSON, optionally gzip)",
			SelfAuth: true, BodyContent: otlpContent, ReplyContent: otlpContent, ErrorContent: otlpError, Spec: otlpSpec},
		{Route: "POST /v1/metrics", ID: "exportOTLPMetrics", Tag: "otlp", Summary: "Accept and discard OpenTelemetry metrics (OTLP/HTTP)",
			SelfAuth: true, BodyContent: otlpContent, ReplyContent: otlpContent, ErrorContent: otlpError, Spec: otlpSpec},
		{Route: "POST /v1/logs", ID: "exportOTLPLogs", Tag: "otlp", Summary: "Accept and discard OpenTelemetry logs (OTLP/HTTP)",
			SelfAuth: true, BodyContent: otlpContent, ReplyContent: otlpContent, ErrorContent: otlpError, Spec: otlpSpec},

		// SettingsFunction (functions/settings).
		{Route: "GET /projects/{project_id}/model-prices", ID: "listModelPrices", Tag: "settings", Summary: "List the project's model prices and describe the shipped price table",
			Query: []param{pagedOffset}, Reply: typeOf[api.ModelPriceList](), ReplyHeaders: pagedHeaders},
		{Route: "GET /projects/{project_id}/model-prices/{model...}", Path: "/projects/{project_id}/model-prices/{model}", ID: "getModelPrice", Tag: "settings",
			Summary: "Get a model's price: the project's own, else the price table's",
			Query:   []param{{"provider", "the model's provider, to pick a price table entry", str}}, Reply: typeOf[api.ModelPrice]()},
		{Route: "PUT /projects/{project_id}/model-prices/{model...}", Path: "/projects/{project_id}/model-prices/{model}", ID: "putModelPrice", Tag: "settings",
			Summary: "Set the project's price of a model", Body: typeOf[api.PutModelPriceRequest](), Required: []string{"input", "output"}, Reply: typeOf[api.ModelPrice]()},
		{Route: "DELETE /projects/{project_id}/model-prices/{model...}", Path: "/projects/{project_id}/model-prices/{model}", ID: "deleteModelPrice", Tag: "settings",
			Summary: "Delete the project's price of a model", Reply: typeOf[api.ModelPriceDeleted]()},
		{Route: "GET /projects/{project_id}/api-keys", ID: "listAPIKeys", Tag: "settings", Summary: "List the project's API keys (admin keys only)",
			Description: "Every key, revoked and expired ones included, oldest first; never a secret nor its hash.",
			Query:       []param{pagedOffset}, Reply: typeOf[api.APIKeyList](), ReplyHeaders: pagedHeaders},
		{Route: "POST /projects/{project_id}/api-keys", ID: "createAPIKey", Tag: "settings", Summary: "Issue an API key of the project (admin keys only)",
			Description: "The answer holds the key's secret: the only time it is ever sent, as Plume stores only its hash.",
			Body:        typeOf[api.CreateAPIKeyRequest](), Required: []string{"role"}, Reply: typeOf[api.CreatedAPIKey]()},
		{Route: "DELETE /projects/{project_id}/api-keys/{key_id}", ID: "revokeAPIKey", Tag: "settings", Summary: "Revoke an API key of the project (admin keys only)",
			Description: "Idempotent; the key stays listed with its revoked_at. A key may revoke itself. Revoking the project's last usable admin key (another must stay usable for at least an hour) answers 409 conflict. " +
				"Other processes may accept the key for up to their key cache's lifetime (at most 60 seconds).",
			Reply: typeOf[api.APIKey]()},
		{Route: "GET /projects/{project_id}/gateway", ID: "getGatewayStatus", Tag: "settings", Summary: "How the model gateway stands for the project: endpoint, limits and their usage, tracing mode",
			Description: "usage counts only what the set limits count: tokens of the current UTC minute with a tokens-per-minute limit, spend of the current UTC day with a daily cap; " +
				"it is null when neither is set. endpoint is null when the deployment does not name the gateway's URL: the API's own base + /v1 serves the same routes, buffered.",
			Reply: typeOf[api.GatewayStatus]()},

		// JudgesFunction (functions/judges, spec §4.7).
		{Route: "POST /projects/{project_id}/judges", ID: "createJudge", Tag: "judges", Summary: "Create a judge",
			Body: typeOf[api.JudgeRequest](), Required: []string{"name", "template"}, Reply: typeOf[api.Judge]()},
		{Route: "GET /projects/{project_id}/judges", ID: "listJudges", Tag: "judges", Summary: "List the project's judges",
			Query: []param{pagedOffset}, Reply: typeOf[api.JudgeList](), ReplyHeaders: pagedHeaders},
		{Route: "GET /projects/{project_id}/judges/{judge_id}", ID: "getJudge", Tag: "judges", Summary: "Get a judge", Reply: typeOf[api.Judge]()},
		{Route: "PATCH /projects/{project_id}/judges/{judge_id}", ID: "updateJudge", Tag: "judges", Summary: "Change a judge: the fields present change, null clears",
			Body: typeOf[api.JudgeRequest](), Reply: typeOf[api.Judge]()},
		{Route: "GET /projects/{project_id}/judges/{judge_id}/criteria", ID: "getJudgeCriteria", Tag: "judges", Summary: "Get a judge's criteria", Reply: typeOf[api.JudgeCriteria]()},
		{Route: "GET /projects/{project_id}/judges/{judge_id}/evaluations", ID: "listJudgeEvaluations", Tag: "judges", Summary: "List a judge's evaluations, newest first",
			Query: append([]param{
				limit(100, 500), offset,
				{"evaluation_result", "only passed (true) or failed (false) evaluations", boolStr},
				{"feedback_state", "only evaluations with or without calibration feedback", map[string]any{"type": "string", "enum": []any{"with_user_feedback", "without_user_feedback"}}},
			}, dateRange...),
			Reply: typeOf[api.EvaluationPage](), ReplyHeaders: pagedHeaders},
		{Route: "POST /projects/{project_id}/judges/{judge_id}/evaluations", ID: "recordJudgeEvaluations", Tag: "judges", Summary: "Record evaluations computed elsewhere (at most 100)",
			Body: typeOf[[]api.EvaluationRequest](), Reply: typeOf[api.RecordEvaluationsResult](), ReplyHeaders: writtenHeaders},
		{Route: "GET /projects/{project_id}/judges/{judge_id}/performance", ID: "getJudgePerformance", Tag: "judges", Summary: "Get a judge's agreement with its human calibrations",
			Query: dateRange, Reply: typeOf[api.JudgePerformance]()},
		{Route: "POST /projects/{project_id}/judges/{judge_id}/backfill", ID: "backfillJudge", Tag: "judges", Summary: "Queue the evaluation of the most recent spans by a judge",
			Body: typeOf[api.BackfillRequest](), Reply: typeOf[api.Backfill]()},
		{Route: "GET /projects/{project_id}/judges/{judge_id}/versions", ID: "listJudgeTemplateVersions", Tag: "judges", Summary: "List a judge's template versions, newest first",
			Query: []param{pagedOffset}, Reply: typeOf[api.JudgeTemplateVersions](), ReplyHeaders: pagedHeaders},
		{Route: "GET /projects/{project_id}/spans/{span_id}/evaluations", ID: "listSpanEvaluations", Tag: "judges", Summary: "List every judge's evaluation of a span",
			Query: []param{pagedOffset}, Reply: typeOf[api.SpanEvaluations](), ReplyHeaders: pagedHeaders},
		{Route: "PUT /projects/{project_id}/prompts/{slug}/judges/{judge_id}", ID: "linkJudge", Tag: "judges", Summary: "Link a judge to a prompt", Reply: typeOf[api.Judge]()},
		{Route: "DELETE /projects/{project_id}/prompts/{slug}/judges/{judge_id}", ID: "unlinkJudge", Tag: "judges", Summary: "Unlink a judge from a prompt", Reply: typeOf[api.Judge]()},

		// FeedbackFunction (functions/feedback, spec §4.2).
		{Route: "POST /v1/prompts/{slug}/completions/{completion_id}/feedback", ID: "submitFeedback", Tag: "feedback", Summary: "Give feedback on a completion (replaces the caller's earlier feedback on it)",
			Body: typeOf[api.FeedbackRequest](), Required: []string{"thumbs_up"}, Reply: typeOf[api.Feedback]()},
		{Route: "GET /projects/{project_id}/feedback/{entity_type}/{entity_id}", ID: "getUnifiedFeedback", Tag: "feedback", Summary: "Get the human feedback and judge evaluations of a span, trace or session",
			Query: []param{pagedOffset}, Reply: typeOf[api.UnifiedFeedback](), ReplyHeaders: pagedHeaders},
		{Route: "GET /projects/{project_id}/prompts/{slug}/completions", ID: "listPromptCompletions", Tag: "feedback",
			Summary: "List a prompt's completions, newest first, with their feedback and judge evaluations",
			Query: []param{limit(api.DefaultCompletionsLimit, api.MaxCompletionsLimit),
				{"cursor", "the next_cursor of the previous page", str},
				{"version", "a version number: only its completions", map[string]any{"type": "integer", "minimum": 1}}},
			Reply: typeOf[api.CompletionList]()},
		{Route: "POST /feedback-links", ID: "createFeedbackLink", Tag: "feedback", Summary: "Create a feedback link (its URL is answered only here)",
			Body: typeOf[api.LinkRequest](), Required: []string{"prompt_slug", "link_type"}, Reply: typeOf[api.Link]()},
		{Route: "GET /feedback-links", ID: "listFeedbackLinks", Tag: "feedback", Summary: "List the project's feedback links, newest first",
			Query: []param{pagedOffset}, Reply: typeOf[api.LinkList](), ReplyHeaders: pagedHeaders},
		{Route: "DELETE /feedback-links/{link_id}", ID: "revokeFeedbackLink", Tag: "feedback", Summary: "Revoke a feedback link", Reply: typeOf[api.Link]()},
		{Route: "GET /f/{token}", ID: "showFeedbackPage", Tag: "feedback", Summary: "The public feedback page of a link (HTML)", Open: true,
			Query: []param{{"done", "set after a submission, to thank the reviewer", str}}, ReplyContent: html, ErrorContent: html},
		{Route: "POST /f/{token}", ID: "submitFeedbackPage", Tag: "feedback", Summary: "Submit the form of a public feedback page; redirects back to it", Open: true,
			BodyContent: form, ReplyStatus: "303", ErrorContent: html},

		// SignalsFunction (functions/signals, issue 29): the zeroeval SDKs' signals and A/B choices.
		{Route: "POST /signals", ID: "createSignal", Tag: "signals", Summary: "Record one signal on a span, trace, session or completion (set again: updated)",
			Body: typeOf[api.SignalRequest](), Required: []string{"entity_type", "entity_id", "name", "value"}, Reply: typeOf[api.SignalsAnswer]()},
		{Route: "POST /signals/{$}", Path: "/signals/", ID: "createSignalSlash", Tag: "signals", Summary: "POST /signals as the TypeScript SDK's sendSignal spells it",
			Body: typeOf[api.SignalRequest](), Required: []string{"entity_type", "entity_id", "name", "value"}, Reply: typeOf[api.SignalsAnswer]()},
		{Route: "POST /signals/bulk", ID: "createSignals", Tag: "signals", Summary: "Record signals; refused ones are listed by index (400 when every one is)",
			Body: typeOf[api.BulkSignalsRequest](), Required: []string{"signals"}, Reply: typeOf[api.SignalsAnswer]()},
		{Route: "GET /signals/entity/{signal_entity_type}/{entity_id}", ID: "getEntitySignals", Tag: "signals", Summary: "The signals of an entity, by name (a JSON array)",
			Reply: typeOf[[]api.Signal]()},
		{Route: "POST /ab-choices", ID: "createABChoice", Tag: "signals", Summary: "Record an A/B choice on an entity; creates the test on its first choice",
			Body: typeOf[api.ABChoiceRequest](), Required: []string{"entity_type", "entity_id", "choice_name", "variant_key", "variants", "weights", "duration_days"},
			Reply: typeOf[api.ABChoiceAnswer]()},
		{Route: "GET /projects/{project_id}/ab-tests", ID: "listABTests", Tag: "signals", Summary: "List the project's A/B tests by name",
			Query: []param{pagedOffset}, Reply: typeOf[api.ABTestList](), ReplyHeaders: pagedHeaders},
		{Route: "GET /projects/{project_id}/ab-tests/{test_name}", ID: "getABTest", Tag: "signals",
			Summary: "An A/B test's report: choices and signal means with 95% intervals per variant, Welch's t-test against the control, decided at the fixed horizon",
			Reply:   typeOf[api.ABReport]()},

		// OptimizerFunction (functions/optimizer).
		{Route: "POST /projects/{project_id}/prompts/{slug}/optimization-runs", ID: "startPromptOptimization", Tag: "optimization", Summary: "Queue an optimization run of a prompt",
			Body: typeOf[api.OptimizationRunRequest](), Reply: typeOf[api.OptimizationRun]()},
		{Route: "GET /projects/{project_id}/prompts/{slug}/optimization-runs", ID: "listPromptOptimizations", Tag: "optimization", Summary: "List a prompt's optimization runs, newest first",
			Query: []param{limit(20, 100), offset}, Reply: typeOf[api.OptimizationRunList](), ReplyHeaders: pagedHeaders},
		{Route: "POST /projects/{project_id}/judges/{judge_id}/optimization-runs", ID: "startJudgeOptimization", Tag: "optimization", Summary: "Queue an optimization run of a judge's template",
			Body: typeOf[api.OptimizationRunRequest](), Reply: typeOf[api.OptimizationRun]()},
		{Route: "GET /projects/{project_id}/judges/{judge_id}/optimization-runs", ID: "listJudgeOptimizations", Tag: "optimization", Summary: "List a judge's optimization runs, newest first",
			Query: []param{limit(20, 100), offset}, Reply: typeOf[api.OptimizationRunList](), ReplyHeaders: pagedHeaders},
		{Route: "GET /projects/{project_id}/optimization-runs/{run_id}", ID: "getOptimization", Tag: "optimization", Summary: "Get an optimization run", Reply: typeOf[api.OptimizationRun]()},
		{Route: "POST /projects/{project_id}/optimization-runs/{run_action}", Path: "/projects/{project_id}/optimization-runs/{run_id}:cancel",
			ID: "cancelOptimization", Tag: "optimization", Summary: "Cancel an optimization run", Reply: typeOf[api.OptimizationRun]()},
		{Route: "POST /projects/{project_id}/optimization-runs/{run_action}", Path: "/projects/{project_id}/optimization-runs/{run_id}:preview-deploy",
			ID: "previewOptimizationDeploy", Tag: "optimization", Summary: "Preview the deploy of a run's candidate and get the receipt a deploy needs", Reply: typeOf[api.DeployPreview]()},
		{Route: "POST /projects/{project_id}/optimization-runs/{run_action}", Path: "/projects/{project_id}/optimization-runs/{run_id}:deploy",
			ID: "deployOptimization", Tag: "optimization", Summary: "Deploy a run's candidate with a preview's receipt",
			Body: typeOf[api.DeployRequest](), Required: []string{"receipt", "confirm"}, Reply: typeOf[api.DeployResult]()},
		{Route: "GET /projects/{project_id}/prompts/{slug}/issues", ID: "getPromptIssues", Tag: "optimization",
			Summary: "What goes wrong with a prompt: thumbs down and failing evaluations in a window, grouped by reason (changes nothing)",
			Query:   []param{issueWindow}, Reply: typeOf[api.PromptIssues]()},
		{Route: "GET /projects/{project_id}/judges/{judge_id}/issues", ID: "getJudgeIssues", Tag: "optimization",
			Summary: "Where a judge goes wrong: verdicts people said were wrong, and failing evaluations in a window, grouped by reason (changes nothing)",
			Query:   []param{issueWindow}, Reply: typeOf[api.JudgeIssues]()},
		{Route: "GET /projects/{project_id}/prompts/{slug}/optimization-preview", ID: "previewPromptOptimization", Tag: "optimization",
			Summary: "Whether an optimization of a prompt would succeed and learn, the type auto picks, and the request that starts it (changes nothing)",
			Query:   previewParams, Reply: typeOf[api.PromptOptimizationPreview]()},
		{Route: "GET /projects/{project_id}/judges/{judge_id}/optimization-preview", ID: "previewJudgeOptimization", Tag: "optimization",
			Summary: "Whether an optimization of a judge's template would succeed and learn, and the request that starts it (changes nothing)",
			Query:   previewParams, Reply: typeOf[api.JudgeOptimizationPreview]()},

		// WebhooksFunction (functions/webhooks): admin keys only.
		{Route: "POST /projects/{project_id}/webhooks", ID: "createWebhook", Tag: "webhooks", Summary: "Register a webhook; the answer holds its signing secret, shown only here",
			Body: typeOf[api.CreateWebhookRequest](), Required: []string{"url", "events"}, Reply: typeOf[api.CreatedWebhook]()},
		{Route: "GET /projects/{project_id}/webhooks", ID: "listWebhooks", Tag: "webhooks", Summary: "List the project's webhooks (without their secrets)", Reply: typeOf[api.WebhookList]()},
		{Route: "GET /projects/{project_id}/webhooks/{webhook_id}", ID: "getWebhook", Tag: "webhooks", Summary: "One webhook (without its secret)", Reply: typeOf[api.Webhook]()},
		{Route: "DELETE /projects/{project_id}/webhooks/{webhook_id}", ID: "deleteWebhook", Tag: "webhooks", Summary: "Delete a webhook", Reply: typeOf[api.WebhookDeleted]()},
		{Route: "GET /projects/{project_id}/webhooks/{webhook_id}/deliveries", ID: "listWebhookDeliveries", Tag: "webhooks", Summary: "A webhook's delivery log, newest first",
			Query: []param{limit(50, 200)}, Reply: typeOf[api.WebhookDeliveryList]()},
		{Route: "POST /projects/{project_id}/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver", ID: "redeliverWebhookDelivery", Tag: "webhooks",
			Summary: "Deliver an event again, with the same id, and retry it for another 24 hours", Reply: typeOf[api.WebhookDelivery]()},
		{Route: "GET /projects/{project_id}/events", ID: "listEvents", Tag: "webhooks", Summary: "The project's event log (14 days): newest first, or oldest after since",
			Description: "Admin and member keys. Each event once; more follow when the answer has " + api.NextCursorHeader + ".",
			Query: []param{
				{"since", "only the events after this time (RFC 3339), oldest first", map[string]any{"type": "string", "format": "date-time"}},
				{"types", "comma-separated event types to keep", map[string]any{"type": "string"}},
				limit(50, 200),
				{api.ParamCursor, "continue where an answer's " + api.NextCursorHeader + " says, with the same other parameters", map[string]any{"type": "string", "maxLength": 128}},
			}, Reply: typeOf[[]api.Event](), ReplyHeaders: []string{api.NextCursorHeader, "Link"}},
		// MonitorsFunction (functions/monitors): member and admin keys.
		{Route: "POST /projects/{project_id}/monitors", ID: "createMonitor", Tag: "monitors", Summary: "Create a monitor of a metric of the rollups (no_data until its first evaluation)",
			Body: typeOf[api.CreateMonitorRequest](), Required: []string{"name", "metric", "window", "comparison", "threshold"}, Reply: typeOf[api.Monitor]()},
		{Route: "GET /projects/{project_id}/monitors", ID: "listMonitors", Tag: "monitors", Summary: "List the project's monitors with their states", Reply: typeOf[api.MonitorList]()},
		{Route: "GET /projects/{project_id}/monitors/{monitor_id}", ID: "getMonitor", Tag: "monitors", Summary: "A monitor, its state and its last state changes", Reply: typeOf[api.Monitor]()},
		{Route: "PATCH /projects/{project_id}/monitors/{monitor_id}", ID: "updateMonitor", Tag: "monitors", Summary: "Change a monitor's definition: the fields present change, the state is kept",
			Body: typeOf[api.UpdateMonitorRequest](), Reply: typeOf[api.Monitor]()},
		{Route: "DELETE /projects/{project_id}/monitors/{monitor_id}", ID: "deleteMonitor", Tag: "monitors", Summary: "Delete a monitor", Reply: typeOf[api.MonitorDeleted]()},
		// DatasetsFunction (functions/datasets): the zeroeval SDK's datasets and experiments, and
		// Plume's read API over them (docs/datasets.md).
		{Route: "POST /v1/datasets", ID: "createDataset", Tag: "datasets", Summary: "Create a dataset (409 when the name exists)",
			Body: typeOf[api.CreateDatasetRequest](), Required: []string{"name"}, Reply: typeOf[api.Dataset]()},
		{Route: "GET /v1/datasets", ID: "listDatasets", Tag: "datasets", Summary: "List the project's datasets by name",
			Query: []param{limit(api.DefaultDatasetListLimit, api.MaxDatasetListLimit), datasetCursor}, Reply: typeOf[api.DatasetList]()},
		{Route: "GET /v1/datasets/{dataset}", ID: "getDataset", Tag: "datasets", Summary: "Read a dataset", Reply: typeOf[api.Dataset]()},
		{Route: "POST /v1/datasets/{dataset}/data", ID: "pushDataset", Tag: "datasets", Summary: "Push every row: the dataset's next version",
			Body: typeOf[api.PushDatasetRequest](), Required: []string{"data"}, Reply: typeOf[api.DatasetVersion]()},
		{Route: "GET /v1/datasets/{dataset}/data", ID: "getDatasetRows", Tag: "datasets", Summary: "A page of a version's rows (the latest by default) with totalRows",
			Query: []param{
				{"version_number", "a version number (default: the latest)", map[string]any{"type": "integer", "minimum": 1}},
				{"offset", "rows to skip", map[string]any{"type": "integer", "minimum": 0}},
				limit(api.DefaultDatasetRowsLimit, api.MaxDatasetRowsLimit),
			}, Reply: typeOf[api.DatasetRows]()},
		{Route: "GET /v1/datasets/{dataset}/versions", ID: "listDatasetVersions", Tag: "datasets", Summary: "List a dataset's versions, newest first",
			Query: []param{limit(api.DefaultDatasetListLimit, api.MaxDatasetListLimit), datasetCursor}, Reply: typeOf[api.DatasetVersionList]()},
		{Route: "POST /v1/datasets/{dataset}/uploads", ID: "startDatasetUpload", Tag: "datasets", Summary: "A presigned PUT for a version too large to push (NDJSON)",
			Body: typeOf[api.CreateUploadRequest](), Required: []string{"bytes"}, Reply: typeOf[api.DatasetUpload]()},
		{Route: "POST /v1/datasets/{dataset}/uploads/{upload_id}/commit", ID: "commitDatasetUpload", Tag: "datasets", Summary: "Make an uploaded object the dataset's next version",
			Reply: typeOf[api.DatasetVersion]()},
		{Route: "POST /v1/experiments", ID: "createExperiment", Tag: "datasets", Summary: "Create an experiment of a dataset version",
			Body: typeOf[api.CreateExperimentRequest](), Required: []string{"dataset_version_id", "name"}, Reply: typeOf[api.Experiment]()},
		{Route: "GET /v1/experiments", ID: "listExperiments", Tag: "datasets", Summary: "List a dataset's experiments, newest first",
			Query: []param{{"dataset", "the dataset's name (required)", str}, limit(api.DefaultDatasetListLimit, api.MaxDatasetListLimit), datasetCursor},
			Reply: typeOf[api.ExperimentList]()},
		{Route: "GET /v1/experiments/compare", ID: "compareExperiments", Tag: "datasets", Summary: "Experiments side by side: per dataset row and per metric",
			Query: []param{{"ids", "2 to 5 experiment ids, comma-separated", str}, {"run_number", "the run (default 1)", map[string]any{"type": "integer", "minimum": 1}},
				limit(api.DefaultDatasetListLimit, api.MaxDatasetListLimit), datasetCursor},
			Reply: typeOf[api.ExperimentComparison]()},
		{Route: "GET /v1/experiments/{experiment_id}", ID: "getExperiment", Tag: "datasets", Summary: "An experiment with its runs, evaluators, column evaluations, metrics and each row evaluator's aggregate per run",
			Reply: typeOf[api.ExperimentDetail]()},
		{Route: "GET /v1/experiments/{experiment_id}/results", ID: "listExperimentResults", Tag: "datasets", Summary: "A run's results by row, with their evaluations",
			Query: []param{{"run_number", "the run (default 1)", map[string]any{"type": "integer", "minimum": 1}}, limit(api.DefaultDatasetListLimit, api.MaxDatasetListLimit), datasetCursor},
			Reply: typeOf[api.ExperimentResultList]()},
		{Route: "POST /v1/experiments/{experiment_id}/results", ID: "addExperimentResult", Tag: "datasets", Summary: "Store the result of one row in one run (again: replaced)",
			Body: typeOf[api.ExperimentResultRequest](), Required: []string{"dataset_row_id", "result"}, Reply: typeOf[api.Created]()},
		{Route: "POST /v1/experiments/{experiment_id}/evaluators", ID: "addExperimentEvaluator", Tag: "datasets", Summary: "Create an evaluator (upserted on name and mode)",
			Body: typeOf[api.ExperimentEvaluatorRequest](), Required: []string{"name"}, Reply: typeOf[api.Created]()},
		{Route: "POST /v1/experiments/{experiment_id}/evaluations", ID: "addExperimentEvaluation", Tag: "datasets", Summary: "Store an evaluator's value for a result",
			Body: typeOf[api.ExperimentEvaluationRequest](), Required: []string{"evaluator_id", "experiment_result_id", "evaluation_value"}, Reply: typeOf[api.Created]()},
		{Route: "POST /v1/experiments/{experiment_id}/judges", ID: "attachExperimentJudge", Tag: "datasets", Summary: "Have a judge evaluate every result of an experiment, later ones too",
			Body: typeOf[api.AttachJudgeRequest](), Required: []string{"judge_id"}, Reply: typeOf[api.AttachedJudge]()},
		{Route: "POST /v1/column-evaluations", ID: "addColumnEvaluation", Tag: "datasets", Summary: "Store a column evaluator's results for a run",
			Body: typeOf[api.ColumnEvaluationRequest](), Required: []string{"evaluator_id", "experiment_id"}, Reply: typeOf[api.Created]()},
		{Route: "POST /v1/column-metrics", ID: "addColumnMetric", Tag: "datasets", Summary: "Store a column metric of a run",
			Body: typeOf[api.ColumnMetricRequest](), Required: []string{"metric_name", "experiment_id"}, Reply: typeOf[api.Created]()},
		{Route: "POST /v1/run-metrics", ID: "addRunMetric", Tag: "datasets", Summary: "Store a metric over every run",
			Body: typeOf[api.RunMetricRequest](), Required: []string{"metric_name", "experiment_id"}, Reply: typeOf[api.Created]()},

		// MCPFunction (functions/mcpserver): the Model Context Protocol's Streamable HTTP transport,
		// stateless.
		{Route: "POST /mcp", ID: "mcp", Tag: "mcp", Summary: "Send a JSON-RPC message to the MCP tool server",
			BodyContent: jsonRPC, ReplyContent: jsonRPC, Spec: mcpSpec},
		{Route: "GET /mcp", ID: "mcpStream", Tag: "mcp", Summary: "Open an MCP event stream: not supported by the stateless server (405)",
			ReplyStatus: "405", Spec: mcpSpec},
		{Route: "DELETE /mcp", ID: "mcpEndSession", Tag: "mcp", Summary: "End an MCP session: not supported by the stateless server (405)",
			ReplyStatus: "405", Spec: mcpSpec},

		// GatewayFunction (functions/gateway): OpenAI-compatible.
		{Route: "POST /v1/chat/completions", ID: "createChatCompletion", Tag: "gateway", Summary: "Create a chat completion with any configured provider (OpenAI-compatible, streams with stream: true)",
			BodyContent:  jsonContent(map[string]any{"type": "object", "required": []any{"model", "messages"}, "properties": map[string]any{"model": str, "messages": map[string]any{"type": "array"}, "stream": boolStr}}),
			ReplyContent: chatResponse, ErrorContent: openAIError, Spec: openAISpec},
		{Route: "GET /v1/models", ID: "listModels", Tag: "gateway", Summary: "List the models the gateway can call (OpenAI-compatible)",
			ReplyContent: modelList, ErrorContent: openAIError, Spec: "https://platform.openai.com/docs/api-reference/models/list"},

		// DashboardFunction (functions/dashboard): HTML pages for people, signed in with a session
		// cookie (not a bearer key); listed so that the document names every route.
		{Route: "GET /ui", ID: "dashboardRoot", Tag: "dashboard", Summary: "The dashboard (redirects to /ui/)", Open: true, ReplyContent: html, ErrorContent: html},
		{Route: "GET /ui/", ID: "dashboardPage", Tag: "dashboard", Summary: "A dashboard page: the overview, traces, sessions, prompts, judges, optimization runs and settings (HTML; 401 with the sign-in page without a session)",
			Open: true, ReplyContent: html, ErrorContent: html},
		{Route: "GET /ui/login", ID: "dashboardSignInPage", Tag: "dashboard", Summary: "The sign-in page (HTML)", Open: true, ReplyContent: html, ErrorContent: html},
		{Route: "POST /ui/login", ID: "dashboardSignIn", Tag: "dashboard", Summary: "Sign in with a project API key; starts a session and redirects",
			Open: true, BodyContent: dashboardForm("api_key"), ReplyStatus: "303", ErrorContent: html},
		{Route: "POST /ui/", Path: "/ui/{change}", ID: "dashboardChange", Tag: "dashboard",
			Summary: "A form of a dashboard page (sign out, pin a tag, bind a model, feedback, judges, optimization runs, keys, prices, feedback links); redirects or answers the page with the form's error",
			Open:    true, BodyContent: dashboardForm("csrf"), ReplyStatus: "303", ErrorContent: html},
		{Route: "GET /ui/assets/", Path: "/ui/assets/{asset}", ID: "dashboardAsset", Tag: "dashboard", Summary: "A dashboard asset (script, style), cached for a year by its hashed name",
			Open: true, ReplyContent: map[string]any{"text/css": map[string]any{}, "text/javascript": map[string]any{}}},
	}
}

// dashboardForm is a dashboard form's body with the field required.
func dashboardForm(field string) map[string]any {
	return map[string]any{"application/x-www-form-urlencoded": map[string]any{"schema": map[string]any{
		"type": "object", "required": []any{field}, "properties": map[string]any{field: map[string]any{"type": "string"}},
	}}}
}
