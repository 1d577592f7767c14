package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// typedHandler is h as the SDK's typed mcp.AddTool would call it, with the schemas resolved
// when the tool is first called rather than when it is added: the arguments validated against
// the input schema (a failure is a tool error, "validating \"arguments\": ..."), decoded into
// In, h's error a tool error, its output encoded, validated against the output schema (a
// failure is a protocol error) and answered as structuredContent and as the text of the
// content. TestTypedHandlerAsTheSDKs holds the answers of every tool equal to the SDK's.
//
// The arguments are decoded by encoding/json, where the SDK's decoder matches field names by
// case: a name differing only by case never gets there, as each struct's schema refuses the
// properties it does not name. Out is a struct (TestSchemasGenerated checks it): the SDK's
// answer of a nil pointer, its element's zero value, is not made here.
func typedHandler[In, Out any](resolved func() (resolvedSchemas, error), h func(context.Context, *mcp.CallToolRequest, In) (Out, error)) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		rs, err := resolved()
		if err != nil {
			return nil, err // TestSchemasGenerated resolves every tool's schemas
		}
		args, err := validated(req.Params.Arguments, rs.in, false)
		if err != nil {
			return toolError(fmt.Errorf("validating \"arguments\": %v", err)), nil
		}
		var in In
		if err := json.Unmarshal(args, &in); err != nil {
			return toolError(err), nil
		}
		out, err := h(ctx, req, in)
		if err != nil {
			return toolError(err), nil
		}
		b, err := json.Marshal(out)
		if err != nil {
			return nil, fmt.Errorf("marshaling output: %w", err)
		}
		b, err = validated(b, rs.out, true)
		if err != nil {
			return nil, fmt.Errorf("validating tool output: %w", err)
		}
		return &mcp.CallToolResult{StructuredContent: json.RawMessage(b), Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
	}
}

// toolError is the tool result of err, as the SDK makes it.
func toolError(err error) *mcp.CallToolResult {
	var res mcp.CallToolResult
	res.SetError(err)
	return &res
}

// validated is the JSON value data validated against s, with the schema's defaults applied to
// an object (re-encoded then, as the SDK does: keys sorted). Arguments are an object, {} when
// absent; an output null where an object is expected is {}.
func validated(data json.RawMessage, s *jsonschema.Resolved, output bool) (json.RawMessage, error) {
	var v any
	if !output {
		args := map[string]any{}
		if len(data) > 0 {
			if err := json.Unmarshal(data, &args); err != nil {
				return nil, fmt.Errorf("unmarshaling arguments: %w", err)
			}
		}
		v = args
	} else if len(data) > 0 {
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, fmt.Errorf("unmarshaling output: %w", err)
		}
	}
	_, isObject := v.(map[string]any)
	if v == nil && output && s.Schema().Type == "object" {
		v, isObject = map[string]any{}, true
	}
	if isObject {
		if err := s.ApplyDefaults(&v); err != nil {
			return nil, fmt.Errorf("applying schema defaults:\n%w", err)
		}
	}
	if err := s.Validate(&v); err != nil {
		return nil, err
	}
	if !isObject {
		return data, nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("marshalling with defaults: %v", err)
	}
	return b, nil
}
