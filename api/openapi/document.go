package openapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/plumehq/plume/api"
)

// Version is the OpenAPI version of the document.
const Version = "3.1.1"

// Document returns the OpenAPI document of every route, as JSON. It is built from routeDocs
// and the api types each time; Handler serves a copy built once.
func Document() ([]byte, error) {
	doc, err := build(routeDocs())
	if err != nil {
		return nil, err
	}
	return json.MarshalIndent(doc, "", "  ")
}

// tagDescriptions describe the areas, in the document's order.
var tagDescriptions = [][2]string{
	{"health", "Health check."},
	{"prompts", "Prompt versions, tags and model bindings (spec §4.1)."},
	{"tracing", "Span, trace and session ingestion and queries (spec §4.3-4.5)."},
	{"otlp", "OpenTelemetry ingestion over OTLP/HTTP (spec §4.6)."},
	{"settings", "Per-project model prices, API keys and the model gateway's standing."},
	{"judges", "Judges, their evaluations and their agreement with people (spec §4.7)."},
	{"signals", "Business signals on spans, traces, sessions and completions, A/B choices and per-variant reports (docs/signals.md)."},
	{"feedback", "Completion feedback, unified feedback and feedback links (spec §4.2)."},
	{"optimization", "Prompt and judge optimization runs, and their deploys."},
	{"webhooks", "Webhooks: the project's events delivered, signed, to HTTP endpoints (docs/webhooks.md)."},
	{"monitors", "Monitors: alerts on the project's metrics, evaluated every minute from the rollups (docs/monitors.md)."},
	{"mcp", "The Model Context Protocol tool server."},
	{"gateway", "The OpenAI-compatible model gateway."},
	{"dashboard", "The dashboard's pages, for people in a browser."},
}

// errorResponses are the shared error answers: api.ErrorBody, by status.
var errorResponses = []struct {
	status, name, description string
	retryAfter                bool
}{
	{"400", "InvalidRequest", "invalid_request: a parameter or the body is not valid", false},
	{"401", "Unauthenticated", "unauthenticated: no API key, or an unknown or expired one", false},
	{"403", "Forbidden", "forbidden: the project of the path is not the API key's", false},
	{"404", "NotFound", "not_found", false},
	{"413", "PayloadTooLarge", "payload_too_large: the body is over the route's limit", false},
	{"415", "UnsupportedMediaType", "unsupported_media_type: the body is not application/json", false},
	{"500", "Internal", "internal: quote the request id when reporting it", false},
	{"503", "Unavailable", "unavailable: retry after Retry-After seconds", true},
}

const errorRef = "#/components/responses/"

// methods are the methods a route's pattern may name.
var methods = []string{"GET", "PUT", "POST", "DELETE", "PATCH", "HEAD", "OPTIONS"}

// build makes the document of docs.
func build(docs []routeDoc) (map[string]any, error) {
	makeParts()
	s := newSchemas()
	paths := map[string]any{}
	ids := map[string]string{}
	for _, d := range docs {
		method, path, err := d.methodPath()
		if err != nil {
			return nil, err
		}
		if other, ok := ids[d.ID]; ok || d.ID == "" {
			return nil, fmt.Errorf("route %s: operationId %q is empty or taken by %s", d.Route, d.ID, other)
		}
		ids[d.ID] = d.Route
		item, _ := paths[path].(map[string]any)
		if item == nil {
			item = map[string]any{}
			paths[path] = item
		}
		m := strings.ToLower(method)
		if _, dup := item[m]; dup {
			return nil, fmt.Errorf("route %s: %s %s documented twice", d.Route, method, path)
		}
		op, err := d.operation(s, path)
		if err != nil {
			return nil, err
		}
		item[m] = op
	}
	if s.err != nil {
		return nil, s.err
	}
	s.of(reflect.TypeFor[api.ErrorBody](), answer)
	responses := map[string]any{}
	for _, e := range errorResponses {
		r := map[string]any{
			"description": e.description,
			"headers":     map[string]any{"X-Request-Id": map[string]any{"$ref": "#/components/headers/X-Request-Id"}},
			"content":     jsonContent(map[string]any{"$ref": "#/components/schemas/ErrorBody"}),
		}
		if e.retryAfter {
			r["headers"].(map[string]any)["Retry-After"] = map[string]any{"$ref": "#/components/headers/Retry-After"}
		}
		responses[e.name] = r
	}
	responses["Error"] = map[string]any{
		"description": "any other error, in the same shape",
		"content":     jsonContent(map[string]any{"$ref": "#/components/schemas/ErrorBody"}),
	}
	headers := map[string]any{
		"X-Request-Id": map[string]any{"description": "the request's id, also in error bodies", "schema": str},
		"Retry-After":  map[string]any{"description": "seconds to wait before retrying", "schema": map[string]any{"type": "integer"}},
	}
	for name, h := range answerHeaders {
		headers[name] = h
	}
	tags := make([]any, len(tagDescriptions))
	for i, t := range tagDescriptions {
		tags[i] = map[string]any{"name": t[0], "description": t[1]}
	}
	return map[string]any{
		"openapi": Version,
		"info": map[string]any{
			"title":   "Plume API",
			"version": "v1",
			"summary": "Prompt versioning, completion feedback, tracing, judges and prompt optimization.",
			"description": "Every request and answer body is JSON unless a route says otherwise; success is 200. " +
				"Errors share one shape, {\"error\": {\"code\", \"message\", \"request_id\"}}, except on the routes of " +
				"other protocols (OTLP, the OpenAI-compatible gateway, MCP), which answer as those protocols do. " +
				"Unknown request fields are ignored.",
		},
		"servers":  []any{map[string]any{"url": "/", "description": "the deployment's API base URL: the API Gateway stage, or plume-local"}},
		"security": []any{map[string]any{"apiKey": []any{}}},
		"tags":     tags,
		"paths":    paths,
		"components": map[string]any{
			"schemas":   s.components,
			"responses": responses,
			"headers":   headers,
			"securitySchemes": map[string]any{
				"apiKey": map[string]any{"type": "http", "scheme": "bearer", "description": "A Plume API key: Authorization: Bearer <key>. The key names its project and user."},
			},
		},
	}, nil
}

// methodPath returns d's method and OpenAPI path.
func (d routeDoc) methodPath() (method, path string, err error) {
	method, pattern, ok := strings.Cut(d.Route, " ")
	if !ok || !slices.Contains(methods, method) {
		return "", "", fmt.Errorf("route %q: not METHOD /path", d.Route)
	}
	path = d.Path
	if path == "" {
		path = strings.ReplaceAll(pattern, "...}", "}")
	}
	return method, path, nil
}

// operation is d's operation object at path.
func (d routeDoc) operation(s *schemas, path string) (map[string]any, error) {
	op := map[string]any{
		"operationId":   d.ID,
		"summary":       d.Summary,
		"tags":          []any{d.Tag},
		"x-plume-route": d.Route,
	}
	if d.Description != "" {
		op["description"] = d.Description
	}
	if d.Spec != "" {
		op["externalDocs"] = map[string]any{"description": "the protocol's specification", "url": d.Spec}
	}
	if d.Open {
		op["security"] = []any{}
	}
	if d.SelfAuth {
		op["x-plume-authenticated-by-handler"] = true
	}
	var params []any
	for _, m := range wildcardRE.FindAllStringSubmatch(path, -1) {
		p, ok := pathParams[m[1]]
		if !ok {
			return nil, fmt.Errorf("route %s: no description of path parameter {%s}", d.Route, m[1])
		}
		params = append(params, map[string]any{"name": p.Name, "in": "path", "required": true, "description": p.Description, "schema": p.Schema})
	}
	for _, q := range d.Query {
		p := map[string]any{"name": q.Name, "in": "query", "description": q.Description, "schema": q.Schema}
		if q.Schema["type"] == "object" {
			p["style"], p["explode"] = "form", true
		}
		params = append(params, p)
	}
	if len(params) > 0 {
		op["parameters"] = params
	}

	switch {
	case d.BodyContent != nil:
		op["requestBody"] = map[string]any{"required": true, "content": d.BodyContent}
	case d.Body != nil:
		sc := s.of(d.Body, request)
		if len(d.Required) > 0 {
			req := make([]any, len(d.Required))
			for i, r := range d.Required {
				req[i] = r
			}
			sc = map[string]any{"$ref": sc["$ref"], "required": req}
		}
		// A body of only optional fields may be left out.
		op["requestBody"] = map[string]any{"required": len(d.Required) > 0 || d.Body.Kind() == reflect.Slice, "content": jsonContent(sc)}
	}

	responses := map[string]any{}
	status := d.ReplyStatus
	if status == "" {
		status = "200"
	}
	code, _ := strconv.Atoi(status)
	ok := map[string]any{"description": http.StatusText(code)}
	switch {
	case d.ReplyContent != nil:
		ok["content"] = d.ReplyContent
	case d.Reply != nil:
		ok["content"] = jsonContent(s.of(d.Reply, answer))
	}
	if len(d.ReplyHeaders) > 0 {
		headers := map[string]any{}
		for _, h := range d.ReplyHeaders {
			if answerHeaders[h] == nil {
				return nil, fmt.Errorf("route %s: no description of answer header %s", d.Route, h)
			}
			headers[h] = map[string]any{"$ref": "#/components/headers/" + h}
		}
		ok["headers"] = headers
	}
	responses[status] = ok
	if d.ErrorContent != nil {
		if !d.Open && !d.SelfAuth {
			// The router refuses a missing key before the handler, in the API's shape.
			responses["401"] = map[string]any{"$ref": errorRef + "Unauthenticated"}
		}
		responses["default"] = map[string]any{"description": "an error, in the protocol's shape", "content": d.ErrorContent}
		op["responses"] = responses
		return op, nil
	}
	hasBody := d.Body != nil || d.BodyContent != nil
	hasPathParams := strings.Contains(path, "{")
	for _, e := range errorResponses {
		switch e.status {
		case "400":
			if !hasBody && len(params) == 0 {
				continue
			}
		case "404":
			if !hasPathParams {
				continue
			}
		case "401":
			if d.Open {
				continue
			}
		case "403":
			if !strings.Contains(path, "{project_id}") {
				continue
			}
		case "413", "415":
			if !hasBody {
				continue
			}
		}
		responses[e.status] = map[string]any{"$ref": errorRef + e.name}
	}
	responses["default"] = map[string]any{"$ref": errorRef + "Error"}
	op["responses"] = responses
	return op, nil
}
