package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/llm"
)

// neutral is a dialect that takes every image as it is read.
var neutral = dialect[image]{provider: "test", imageOf: func(img image) (image, error) { return img, nil }}

// readTestConversation reads body, an OpenAI request's JSON, as the relays read it.
func readTestConversation(t testing.TB, body string) (*conversation[image], error) {
	t.Helper()
	var fields map[string]json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(body), &fields))
	c, err := readOAChat(fields, "test")
	if err != nil {
		return nil, err
	}
	return readConversation(c, neutral)
}

// render is conv's turns in short: "user: text(hi) image(image/png) | assistant: ...".
func render(conv *conversation[image]) string {
	var turns []string
	for _, t := range conv.turns {
		turns = append(turns, t.role+": "+renderBlocks(t.blocks))
	}
	return strings.Join(turns, " | ")
}

// renderBlocks is blocks in short, separated by spaces.
func renderBlocks(blocks []block[image]) string {
	var out []string
	for _, b := range blocks {
		switch b.kind {
		case blockText:
			out = append(out, "text("+b.text+")")
		case blockImage:
			out = append(out, "image("+b.image.mediaType+b.image.url+")")
		case blockToolUse:
			out = append(out, fmt.Sprintf("tool_use(%s %s %s)", b.id, b.name, b.input))
		case blockToolResult:
			out = append(out, fmt.Sprintf("tool_result(%s: %s)", b.id, renderBlocks(b.content)))
		}
	}
	return strings.Join(out, " ")
}

// toolHistoryJSON is a conversation with two tool calls and their results.
const toolHistoryJSON = `[{"role":"user","content":"Weather in Paris and Rome?"},
	{"role":"assistant","content":"Checking.","tool_calls":[
		{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":" {\"city\": \"Paris\"} "}},
		{"id":"call_2","type":"function","function":{"name":"lookup","arguments":""}}]},
	{"role":"tool","tool_call_id":"call_1","content":"18°C"},
	{"role":"tool","tool_call_id":"call_2","content":[]},
	{"role":"user","content":"And tomorrow?"}]`

func TestReadConversationMessages(t *testing.T) {
	tests := []struct {
		name       string
		messages   string
		system     []string
		turns      string
		toolBlocks bool
	}{
		{"system messages wherever they are", `[{"role":"system","content":"a"},{"role":"user","content":"hi"},
			{"role":"developer","content":[{"type":"text","text":"b"},{"type":"text","text":""},{"type":"text","text":"c"}]},{"role":"system","content":""}]`,
			[]string{"a", "b", "c"}, "user: text(hi)", false},
		{"one turn a role, empty messages dropped", `[{"role":"user","content":"a"},{"role":"assistant","content":""},{"role":"assistant","content":"b"},
			{"role":"assistant","content":null},{"role":"user","content":"c"},{"role":"user","content":[{"type":"text","text":"d"}]}]`,
			nil, "user: text(a) | assistant: text(b) | user: text(c) text(d)", false},
		{"tool calls and results", toolHistoryJSON, nil,
			`user: text(Weather in Paris and Rome?) | assistant: text(Checking.) tool_use(call_1 get_weather {"city": "Paris"}) tool_use(call_2 lookup {}) | ` +
				`user: tool_result(call_1: text(18°C)) tool_result(call_2: ) text(And tomorrow?)`, true},
		{"an assistant's refusal is text", `[{"role":"user","content":"a"},{"role":"assistant","content":[{"type":"refusal","refusal":"No."}]}]`,
			nil, "user: text(a) | assistant: text(No.)", false},
		{"images", `[{"role":"user","content":[{"type":"text","text":"Which?"},{"type":"image_url","image_url":{"url":"DATA:Image/PNG;base64,iVBORw0KGgo="}},
			{"type":"image_url","image_url":"https://example.com/cat.png"}]}]`,
			nil, "user: text(Which?) image(image/png) image(https://example.com/cat.png)", false},
		{"no turn left", `[{"role":"user","content":""}]`, nil, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conv, err := readTestConversation(t, `{"messages":`+tt.messages+`}`)
			require.NoError(t, err)
			assert.Equal(t, tt.system, conv.system)
			assert.Equal(t, tt.turns, render(conv))
			assert.Equal(t, tt.toolBlocks, conv.hasToolBlocks())
		})
	}
}

func TestReadConversationTools(t *testing.T) {
	const (
		weather = `{"type":"function","function":{"name":"get_weather","description":"The weather.","parameters":{"type":"object"}}}`
		lookup  = `{"type":"function","function":{"name":"lookup","parameters":{}}}`
		verdict = `{"type":"json_schema","json_schema":{"name":"verdict","schema":{"type":"object"}}}`
	)
	tests := []struct {
		name       string
		fields     string
		tools      []string
		choice     toolChoice
		answerTool string
		oneCall    bool
	}{
		{"none", ``, nil, toolChoice{}, "", false},
		{"tools, no choice", `"tools":[` + weather + `]`, []string{"get_weather"}, toolChoice{}, "", false},
		{"auto", `"tools":[` + weather + `],"tool_choice":"auto"`, []string{"get_weather"}, toolChoice{mode: "auto"}, "", false},
		{"auto without tools", `"tool_choice":"auto"`, nil, toolChoice{}, "", false},
		{"none without tools", `"tools":[],"tool_choice":"none"`, nil, toolChoice{}, "", false},
		{"required", `"tools":[` + weather + `],"tool_choice":"required"`, []string{"get_weather"}, toolChoice{mode: "any"}, "", false},
		{"named", `"tools":[` + weather + `,` + lookup + `],"tool_choice":{"type":"function","function":{"name":"lookup"}}`,
			[]string{"get_weather", "lookup"}, toolChoice{mode: "tool", name: "lookup"}, "", false},
		{"one call at a time", `"tools":[` + weather + `],"parallel_tool_calls":false`, []string{"get_weather"}, toolChoice{}, "", true},
		{"one call at a time, none", `"tools":[` + weather + `],"tool_choice":"none","parallel_tool_calls":false`,
			[]string{"get_weather"}, toolChoice{mode: "none"}, "", false},
		{"one call at a time without tools", `"parallel_tool_calls":false`, nil, toolChoice{}, "", false},
		{"json_schema", `"response_format":` + verdict, []string{"verdict"}, toolChoice{mode: "tool", name: "verdict"}, "verdict", false},
		{"json_schema without a name", `"response_format":{"type":"json_schema","json_schema":{}}`,
			[]string{"json_answer"}, toolChoice{mode: "tool", name: "json_answer"}, "json_answer", false},
		{"json_schema with tools", `"tools":[` + weather + `],"response_format":` + verdict,
			[]string{"get_weather", "verdict"}, toolChoice{mode: "any"}, "verdict", false},
		{"json_schema with tools, none", `"tools":[` + weather + `],"tool_choice":"none","response_format":` + verdict,
			[]string{"get_weather", "verdict"}, toolChoice{mode: "tool", name: "verdict"}, "verdict", false},
		{"json_schema with a named tool", `"tools":[` + weather + `],"tool_choice":{"type":"function","function":{"name":"get_weather"}},"response_format":` + verdict,
			[]string{"get_weather", "verdict"}, toolChoice{mode: "tool", name: "get_weather"}, "verdict", false},
		{"json_schema, one call at a time", `"tools":[` + weather + `],"parallel_tool_calls":false,"response_format":` + verdict,
			[]string{"get_weather", "verdict"}, toolChoice{mode: "any"}, "verdict", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"messages":[{"role":"user","content":"hi"}]`
			if tt.fields != "" {
				body += "," + tt.fields
			}
			conv, err := readTestConversation(t, body+"}")
			require.NoError(t, err)
			var names []string
			for _, tl := range conv.tools {
				names = append(names, tl.name)
				assert.True(t, json.Valid(tl.schema), "%s", tl.schema)
			}
			assert.Equal(t, tt.tools, names)
			assert.Equal(t, tt.choice, conv.choice)
			assert.Equal(t, tt.answerTool, conv.answerTool)
			assert.Equal(t, tt.oneCall, conv.oneCall)
		})
	}
}

func TestObjectSchema(t *testing.T) {
	tests := []struct{ in, want string }{
		{``, `{"type":"object","properties":{}}`},
		{`null`, `{"type":"object","properties":{}}`},
		{`{}`, `{"type":"object"}`},
		{`{"properties":{"a":{"type":"string"}}}`, `{"properties":{"a":{"type":"string"}},"type":"object"}`},
		{`{"type":"object","properties":{}}`, `{"type":"object","properties":{}}`},
		{`[1]`, `[1]`},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, string(objectSchema(json.RawMessage(tt.in))), tt.in)
	}
}

// TestRelaysRefuse: what neither relay translates is refused with the same message (the
// provider named), what only Converse refuses by Converse alone; a request's first error is
// the one reported, whichever relay finds it.
func TestRelaysRefuse(t *testing.T) {
	imageMessage := func(url string) string {
		return `{"role":"user","content":[{"type":"image_url","image_url":{"url":"` + url + `"}}]}`
	}
	tests := []struct {
		name, messages, more string
		// anthropic and bedrock are the errors, %s standing for the provider; "" is no error.
		anthropic, bedrock string
	}{
		{"content", `[{"role":"user","content":42}]`, ``,
			"messages[0].content: must be a string or an array of content parts", "same"},
		{"system image", `[{"role":"system","content":[{"type":"image_url","image_url":"https://x/y.png"}]},{"role":"user","content":"hi"}]`, ``,
			"messages[0].content[0].type: a system message takes text parts only", "same"},
		{"audio", `[{"role":"user","content":[{"type":"text","text":"a"},{"type":"input_audio"}]}]`, ``,
			`messages[0].content[1].type: "input_audio" parts of a user message are not translated to %s`, "same"},
		{"assistant image", `[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"image_url","image_url":"https://x/y.png"}]}]`, ``,
			`messages[1].content[0].type: "image_url" parts of a assistant message are not translated to %s`, "same"},
		{"user tool calls", `[{"role":"user","content":"hi","tool_calls":[{"id":"c","function":{"name":"f"}}]}]`, ``,
			"messages[0].tool_calls: only assistant messages make tool calls", "same"},
		{"arguments", `[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"f","arguments":"[1]"}}]}]`, ``,
			"messages[1].tool_calls[0]: want an id, a function name and arguments that are a JSON object", "same"},
		{"tool message without id", `[{"role":"user","content":"hi"},{"role":"tool","content":"42"}]`, ``,
			"messages[1].tool_call_id: required in a tool message", "same"},
		{"role", `[{"role":"user","content":"hi"},{"role":"function","content":"x"}]`, ``,
			`messages[1].role: "function" is not translated (want system, developer, user, assistant or tool)`, "same"},
		{"data URL", `[` + imageMessage("data:image/png,abc") + `]`, ``,
			"messages[0].content[0].image_url: a data URL must be data:<media type>;base64,<data>", "same"},
		{"image scheme", `[` + imageMessage("ftp://x") + `]`, ``,
			"messages[0].content[0].image_url: want an http(s) URL or a base64 data URL", "same"},
		{"image URL", `[` + imageMessage("https://example.com/cat.png") + `]`, ``, "",
			"messages[0].content[0].image_url: %s takes no image URLs, only the image itself: send it as a base64 data URL (data:image/png;base64,...)"},
		{"image type", `[` + imageMessage("data:image/bmp;base64,Qk0=") + `]`, ``, "",
			`messages[0].content[0].image_url: "image/bmp": %s takes image/png, image/jpeg, image/gif and image/webp`},
		{"image data", `[` + imageMessage("data:image/png;base64,not base64!") + `]`, ``, "",
			"messages[0].content[0].image_url: the data URL's data is not valid base64"},
		{"image before a later error", `[` + imageMessage("https://example.com/cat.png") + `,{"role":"function"}]`, ``,
			`messages[1].role: "function" is not translated (want system, developer, user, assistant or tool)`,
			"messages[0].content[0].image_url: %s takes no image URLs, only the image itself: send it as a base64 data URL (data:image/png;base64,...)"},
		{"assistant first", `[{"role":"assistant","content":"Hello"},{"role":"user","content":42}]`, ``,
			"messages[1].content: must be a string or an array of content parts", "messages[0]: a Converse conversation starts with a user message, not assistant"},
		{"messages before tools", `[{"role":"user","content":42}]`, `"tools":[{"type":"web_search"}]`,
			"messages[0].content: must be a string or an array of content parts", "same"},
		{"tools", `[{"role":"user","content":"hi"}]`, `"tools":[{"type":"web_search"}],"tool_choice":"any"`,
			"tools[0]: only function tools with a name are translated", "same"},
		{"tool_choice", `[{"role":"user","content":"hi"}]`, `"tool_choice":"any","response_format":{"type":"xml"}`,
			`tool_choice: "any" is not one of auto, none, required`, "same"},
		{"required without tools", `[{"role":"user","content":"hi"}]`, `"tool_choice":"required"`,
			`tool_choice: "required" needs tools`, "same"},
		{"unknown tool", `[{"role":"user","content":"hi"}]`, `"tool_choice":{"type":"function","function":{"name":"nope"}}`,
			`tool_choice: "nope" is not among the tools`, "same"},
		{"response_format", `[{"role":"user","content":"hi"}]`, `"response_format":{"type":"xml"}`,
			`response_format.type: "xml" is not one of text, json_object, json_schema`, "same"},
		{"json_schema missing", `[{"role":"user","content":"hi"}]`, `"response_format":{"type":"json_schema"}`,
			"response_format.json_schema: required with type json_schema", "same"},
		{"answer tool named as a tool", `[{"role":"user","content":"hi"}]`,
			`"tools":[{"type":"function","function":{"name":"verdict"}}],"response_format":{"type":"json_schema","json_schema":{"name":"verdict"}}`,
			`response_format.json_schema.name: "verdict" is also the name of a tool`, "same"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := `{"messages":` + tt.messages
			if tt.more != "" {
				body += "," + tt.more
			}
			var fields map[string]json.RawMessage
			require.NoError(t, json.Unmarshal([]byte(body+"}"), &fields))
			if tt.bedrock == "same" {
				tt.bedrock = tt.anthropic
			}
			_, err := toMessages("claude-haiku-4-5", fields)
			assertInvalid(t, err, tt.anthropic, llm.ProviderAnthropic)
			_, err = toConverse(fields)
			assertInvalid(t, err, tt.bedrock, llm.ProviderBedrock)
		})
	}
}

// assertInvalid checks that err is want, %s standing for provider, as an *invalidError; want
// "" is no error.
func assertInvalid(t *testing.T, err error, want, provider string) {
	t.Helper()
	if want == "" {
		assert.NoError(t, err, provider)
		return
	}
	var invalid *invalidError
	require.True(t, errors.As(err, &invalid), "%s: %v", provider, err)
	if strings.Contains(want, "%s") {
		want = fmt.Sprintf(want, provider)
	}
	assert.Equal(t, want, err.Error(), provider)
}

// TestRelaysWriteTools: each relay writes the same tools and choice in its own words, with its
// own rules for what the other cannot say.
func TestRelaysWriteTools(t *testing.T) {
	const tools = `"tools":[{"type":"function","function":{"name":"get_weather"}}]`
	const verdict = `"response_format":{"type":"json_schema","json_schema":{"name":"verdict"}}`
	tests := []struct {
		name, messages, more string
		// anthropic is the Messages request's tool_choice, bedrock the toolChoice of the
		// Converse request's toolConfig ("" when there is no toolConfig).
		anthropic, bedrock string
	}{
		{"auto", `[{"role":"user","content":"hi"}]`, tools + `,"tool_choice":"auto"`, `{"type":"auto"}`, `{"auto":{}}`},
		{"one call at a time", `[{"role":"user","content":"hi"}]`, tools + `,"parallel_tool_calls":false`,
			`{"type":"auto","disable_parallel_tool_use":true}`, `null`},
		{"one call at a time, required", `[{"role":"user","content":"hi"}]`, tools + `,"parallel_tool_calls":false,"tool_choice":"required"`,
			`{"type":"any","disable_parallel_tool_use":true}`, `{"any":{}}`},
		{"one call at a time, none, json_schema", `[{"role":"user","content":"hi"}]`, tools + `,"parallel_tool_calls":false,"tool_choice":"none",` + verdict,
			`{"type":"tool","name":"verdict"}`, `{"tool":{"name":"verdict"}}`},
		{"none", `[{"role":"user","content":"hi"}]`, tools + `,"tool_choice":"none"`, `{"type":"none"}`, ``},
		{"none with tool history", toolHistoryJSON, tools + `,"tool_choice":"none"`, `{"type":"none"}`, `null`},
		{"json_schema", `[{"role":"user","content":"hi"}]`, verdict, `{"type":"tool","name":"verdict"}`, `{"tool":{"name":"verdict"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var fields map[string]json.RawMessage
			require.NoError(t, json.Unmarshal([]byte(`{"messages":`+tt.messages+`,`+tt.more+`}`), &fields))
			am, err := toMessages("claude-haiku-4-5", fields)
			require.NoError(t, err)
			choice, err := json.Marshal(am.req.ToolChoice)
			require.NoError(t, err)
			assert.JSONEq(t, tt.anthropic, string(choice))

			cv, err := toConverse(fields)
			require.NoError(t, err)
			if tt.bedrock == "" {
				assert.Nil(t, cv.req.ToolConfig)
				return
			}
			require.NotNil(t, cv.req.ToolConfig)
			assert.Len(t, cv.req.ToolConfig.Tools, len(am.req.Tools), "the same tools")
			choice, err = json.Marshal(cv.req.ToolConfig.ToolChoice)
			require.NoError(t, err)
			assert.JSONEq(t, tt.bedrock, string(choice))
		})
	}
}

// FuzzReadConversation: whatever the request, the relays refuse it as *invalidError or read a
// conversation that both providers can take: no empty turn or text, roles alternating, tool
// inputs JSON objects, the answer tool last.
func FuzzReadConversation(f *testing.F) {
	f.Add(`{"messages":` + toolHistoryJSON + `,"tools":[{"type":"function","function":{"name":"get_weather"}}],"tool_choice":"none"}`)
	f.Add(`{"messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"image_url","image_url":"data:image/png;base64,iVBORw0KGgo="}]}],` +
		`"response_format":{"type":"json_schema","json_schema":{"name":"v"}},"parallel_tool_calls":false}`)
	f.Add(`{"messages":[{"role":"user","content":""},{"role":"assistant","content":[{"type":"refusal","refusal":"no"}]}],"stop":["",""]}`)
	f.Fuzz(func(t *testing.T, body string) {
		var fields map[string]json.RawMessage
		if json.Unmarshal([]byte(body), &fields) != nil {
			return
		}
		var invalid *invalidError
		if _, err := toMessages("m", fields); err != nil {
			require.True(t, errors.As(err, &invalid), "%v", err)
		}
		if _, err := toConverse(fields); err != nil {
			require.True(t, errors.As(err, &invalid), "%v", err)
		}
		c, err := readOAChat(fields, "test")
		if err != nil {
			return
		}
		conv, err := readConversation(c, neutral)
		if err != nil {
			require.True(t, errors.As(err, &invalid), "%v", err)
			return
		}
		for _, s := range conv.system {
			require.NotEmpty(t, s)
		}
		for i, tn := range conv.turns {
			require.Contains(t, []string{"user", "assistant"}, tn.role)
			require.NotEmpty(t, tn.blocks)
			if i > 0 {
				require.NotEqual(t, conv.turns[i-1].role, tn.role)
			}
			for _, b := range tn.blocks {
				switch b.kind {
				case blockText:
					require.NotEmpty(t, b.text)
				case blockToolUse:
					var input map[string]json.RawMessage
					require.NoError(t, json.Unmarshal(b.input, &input))
				}
			}
		}
		if conv.answerTool != "" {
			require.Equal(t, conv.answerTool, conv.tools[len(conv.tools)-1].name)
		}
	})
}
