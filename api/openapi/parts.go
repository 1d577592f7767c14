package openapi

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/plumehq/plume/api"
)

// The schemas, parameters and contents that the route table and the document share. They are
// made by makeParts with the document (the first GET /openapi.json), not when a function that
// links this package starts: every function serving the prompts area's routes does (Prompts,
// and MCP and the Dashboard, which mount the area in-process), and as package variables they
// were about 270 small maps made at each of their cold starts for a document few ask for.
var (
	str, uuidStr, boolStr, num, when, csv                       map[string]any
	datasetCursor, offset, issueWindow, tagFilters, pagedOffset param
	previewParams, dateRange                                    []param
	answerHeaders                                               map[string]map[string]any
	knownKinds                                                  []any
	knownKindNames                                              []string
	anyObject, timestamp, strMap, optStr, optNum, status        map[string]any
	spanKind                                                    map[string]any
	otlpContent, otlpError, jsonRPC, openAIError, chatResponse  map[string]any
	modelList, html, form, health                               map[string]any
	pathParams                                                  map[string]param
	wildcardRE                                                  *regexp.Regexp
)

var partsOnce sync.Once

// makeParts makes the shared parts, once; routeDocs and build call it first.
func makeParts() { partsOnce.Do(fillParts) }

func fillParts() {
	// Schemas of query parameters.
	str = map[string]any{"type": "string"}
	uuidStr = map[string]any{"type": "string", "format": "uuid"}
	boolStr = map[string]any{"type": "boolean"}
	num = map[string]any{"type": "number"}
	when = map[string]any{"type": "string", "description": "ISO 8601 time or Unix seconds"}
	csv = map[string]any{"type": "string", "description": "comma-separated list"}

	// datasetCursor is the cursor of the datasets area's lists.
	datasetCursor = param{"cursor", "the next_cursor of the previous page", str}

	offset = param{"offset", "items to skip", map[string]any{"type": "integer", "minimum": 0, "default": 0}}

	// issueWindow and previewParams are the queries of the proposals (api.IssueQuery,
	// api.PreviewQuery).
	issueWindow = param{"window_hours", "how far back to look, in hours",
		map[string]any{"type": "integer", "minimum": 1, "maximum": api.MaxIssueWindowHours, "default": api.DefaultIssueWindowHours}}
	previewParams = []param{
		{"optimizer_type", "the run's type (a judge's is quick_refine)", map[string]any{"type": "string", "enum": api.OptimizerTypes, "default": api.OptimizerAuto}},
		{"max_model_calls", "the budget's model calls; absent: the type's default", map[string]any{"type": "integer", "minimum": 1, "maximum": api.MaxBudgetModelCalls}},
		{"seed", "the split's seed; absent: 1, pinned in the answer's start", map[string]any{"type": "integer"}},
	}

	// tagFilters stands for every other query parameter: key=value filters on tags, named back in
	// the X-Plume-Tag-Filters header, at most api.MaxTagFilters of them.
	tagFilters = param{"tags", fmt.Sprintf("any other parameter filters on a tag: ?env=prod; at most %d (more: 400)", api.MaxTagFilters), map[string]any{
		"type": "object", "additionalProperties": map[string]any{"type": "string"}, "maxProperties": api.MaxTagFilters,
	}}

	// pagedOffset is the ?offset= of a list read whole and answered in parts when it would pass
	// api.MaxAnswerBytes (shared/web.List): the X-Plume-Next-Offset of the previous answer.
	pagedOffset = param{"offset", fmt.Sprintf("items to skip: the %s of the previous answer (an answer holds at most %d bytes)", api.NextOffsetHeader, api.MaxAnswerBytes),
		map[string]any{"type": "integer", "minimum": 0, "maximum": api.MaxListOffset, "default": 0}}

	// answerHeaders describe the headers of 200 answers, in components/headers.
	answerHeaders = map[string]map[string]any{
		api.ScannedHeader:       {"description": "how many items the query examined", "schema": map[string]any{"type": "integer"}},
		api.ScanTruncatedHeader: {"description": "true when the query stopped at its scan bound: the answer covers the newest part of the window only", "schema": map[string]any{"type": "string", "enum": []any{"true"}}},
		api.TagFiltersHeader:    {"description": "the query parameters read as tag filters, query-escaped and comma-separated", "schema": str},
		api.NextOffsetHeader: {"description": fmt.Sprintf("present when the answer holds only part of the page, to stay within %d bytes: "+
			"the offset of the first item left out (the request's offset plus the items answered); request it to read on", api.MaxAnswerBytes),
			"schema": map[string]any{"type": "integer"}},
		api.NextCursorHeader: {"description": "present when more items may follow the answer's last: request the same query with cursor set to it (and no offset) to read on", "schema": str},
		"Link":               {"description": "with " + api.NextCursorHeader + " or " + api.NextOffsetHeader + `: <the request's URL with that cursor, or that offset>; rel="next" (RFC 8288)`, "schema": str},
		"Cache-Control":      {"description": "private, no-store on a version served by a split tag: the answer depends on the caller (or on chance), so no cache may keep it", "schema": str},
		api.OmittedHeader: {"description": fmt.Sprintf("present when the answer to a write holds only the first of the items written, to stay within %d bytes: "+
			"how many it left out (they were written)", api.MaxAnswerBytes), "schema": map[string]any{"type": "integer"}},
	}

	dateRange = []param{
		{"start_date", "from this ISO 8601 date or time", str},
		{"end_date", "to this ISO 8601 date or time (a date includes the whole day)", str},
	}

	// knownKinds are api.SpanKinds as JSON values, knownKindNames as strings.
	knownKinds, knownKindNames = func() ([]any, []string) {
		values, names := make([]any, len(api.SpanKinds)), make([]string, len(api.SpanKinds))
		for i, k := range api.SpanKinds {
			values[i], names[i] = string(k), string(k)
		}
		return values, names
	}()

	// JSON contents of the routes whose bodies are not api types.
	anyObject = map[string]any{"type": "object"}
	// Timestamps of ingested items: ISO 8601 or Unix seconds, as the SDKs send them.
	timestamp = map[string]any{"type": []any{"string", "number"}}
	strMap = map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}}
	optStr = map[string]any{"type": []any{"string", "null"}}
	optNum = map[string]any{"type": []any{"number", "null"}}
	status = map[string]any{"type": []any{"string", "null"}, "enum": []any{"unset", "ok", "error", nil}}

	// spanKind is the kind of a span of POST /spans. The set is open (api.SpanKind), so the
	// schema is shared/trace's rule (decode.go, kindField) and the known kinds its examples:
	// any case (stored lowercased), "" or null for generic.
	spanKind = map[string]any{
		"type": []any{"string", "null"}, "pattern": fmt.Sprintf("^[A-Za-z0-9_-]{0,%d}$", api.MaxSpanKindLength),
		"default": string(api.SpanKindGeneric), "examples": knownKinds,
		"description": fmt.Sprintf("known kinds: %s; any other word of up to %d letters, digits, _ and - is stored too (lowercased; \"\" or null is generic)",
			strings.Join(knownKindNames, ", "), api.MaxSpanKindLength),
	}

	// Contents of the protocol routes: opaque, as their own specifications define them.
	otlpContent = map[string]any{
		"application/x-protobuf": map[string]any{"schema": map[string]any{"type": "string", "contentMediaType": "application/x-protobuf"}},
		"application/json":       map[string]any{"schema": anyObject},
	}
	// otlpError is a google.rpc.Status in the request's encoding.
	otlpError = map[string]any{
		"application/x-protobuf": map[string]any{"schema": map[string]any{"type": "string", "contentMediaType": "application/x-protobuf"}},
		"application/json": map[string]any{"schema": map[string]any{"type": "object", "properties": map[string]any{
			"code": map[string]any{"type": "integer"}, "message": str, "details": map[string]any{"type": "array"},
		}}},
	}
	jsonRPC = jsonContent(map[string]any{"type": "object", "required": []any{"jsonrpc"}, "properties": map[string]any{"jsonrpc": map[string]any{"const": "2.0"}}})
	// openAIError is the gateway's error: OpenAI's shape from its handlers, Plume's from the
	// router (a refused path parameter).
	openAIError = jsonContent(map[string]any{"anyOf": []any{
		map[string]any{"$ref": "#/components/schemas/ErrorBody"},
		map[string]any{"type": "object", "required": []any{"error"}, "properties": map[string]any{"error": map[string]any{
			"type": "object", "required": []any{"message", "type"},
			"properties": map[string]any{"message": str, "type": str, "param": optStr, "code": optStr},
		}}},
	}})
	chatResponse = map[string]any{
		"application/json":  map[string]any{"schema": anyObject},
		"text/event-stream": map[string]any{"schema": map[string]any{"type": "string"}},
	}
	modelList = jsonContent(map[string]any{
		"type": "object", "required": []any{"object", "data"},
		"properties": map[string]any{
			"object": map[string]any{"const": "list"},
			"data": arrayOf(map[string]any{"type": "object", "required": []any{"id", "object", "owned_by"}, "properties": map[string]any{
				"id": str, "object": map[string]any{"const": "model"}, "owned_by": str,
			}}),
		},
	})
	html = map[string]any{"text/html": map[string]any{"schema": map[string]any{"type": "string"}}}
	form = map[string]any{"application/x-www-form-urlencoded": map[string]any{"schema": map[string]any{
		"type": "object", "required": []any{"completion_id", "thumbs"},
		"properties": map[string]any{
			"completion_id": str, "thumbs": map[string]any{"type": "string", "enum": []any{"up", "down"}},
			"reason": str, "expected_output": str,
		},
	}}}
	health = jsonContent(map[string]any{"type": "object", "required": []any{"status"}, "properties": map[string]any{"status": map[string]any{"const": "ok"}}})

	// pathParams describe every path wildcard the routes use; their rules are auth's params table
	// (shared/auth/params.go), which refuses a value that breaks them before a handler runs.
	pathParams = map[string]param{
		"project_id":         {"project_id", "the project; it must be the API key's (403 otherwise)", uuidStr},
		"slug":               {"slug", "a prompt's slug", str},
		"task":               {"task", "a task name: the slug of its prompt", str},
		"version_id":         {"version_id", "a prompt version id", uuidStr},
		"hash":               {"hash", "the SHA-256 of the version's content, in hex", map[string]any{"type": "string", "pattern": "^[0-9a-fA-F]{64}$"}},
		"version":            {"version", "a version number", map[string]any{"type": "integer", "minimum": 1}},
		"tag":                {"tag", "a tag name (production, latest ...)", str},
		"span_id":            {"span_id", "a span id", str},
		"completion_id":      {"completion_id", "the completion's span id", str},
		"entity_type":        {"entity_type", "what entity_id names", map[string]any{"type": "string", "enum": []any{api.EntitySpan, api.EntityTrace, api.EntitySession}}},
		"entity_id":          {"entity_id", "a span, trace or session id", str},
		"judge_id":           {"judge_id", "a judge id", uuidStr},
		"dataset":            {"dataset", "a dataset name", str},
		"upload_id":          {"upload_id", "an upload id (POST /v1/datasets/{dataset}/uploads)", uuidStr},
		"experiment_id":      {"experiment_id", "an experiment id", uuidStr},
		"trace_id":           {"trace_id", "a trace id", uuidStr},
		"link_id":            {"link_id", "a feedback link id", uuidStr},
		"key_id":             {"key_id", "an API key id", uuidStr},
		"token":              {"token", "a feedback link's token", map[string]any{"type": "string", "pattern": "^plf_[A-Za-z0-9_-]{1,96}$"}},
		"run_id":             {"run_id", "an optimization run id", uuidStr},
		"webhook_id":         {"webhook_id", "a webhook id (wh_ and a UUID)", str},
		"delivery_id":        {"delivery_id", "a delivery id (dlv_<ms>_<hex>)", str},
		"monitor_id":         {"monitor_id", "a monitor id (mon_ and a UUID)", str},
		"model":              {"model", "a model id; it may contain slashes (openai/gpt-4o-mini)", str},
		"asset":              {"asset", "an asset's hashed name (app.3f2a9c1e.js)", str},
		"change":             {"change", "the form's page and action, e.g. logout, prompts/{slug}/pin, settings/keys or optimization-runs/{run_id}/deploy", str},
		"signal_entity_type": {"signal_entity_type", "what entity_id names", map[string]any{"type": "string", "enum": []any{"span", "trace", "session", "completion"}}},
		"test_name":          {"test_name", "an A/B test's name (the SDK's choice_name)", str},
		"session_id":         {"session_id", "a session id", str},
	}

	wildcardRE = regexp.MustCompile(`\{([^}]+)\}`)
}
