package optimizer

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/plumehq/plume/shared/judge/run"
	"github.com/plumehq/plume/shared/llm"
	"github.com/plumehq/plume/shared/optimize"
	"github.com/plumehq/plume/shared/textcut"
)

// maxReflectionField bounds each text of an example shown to the reflection model.
const maxReflectionField = 2 << 10

// reflector is the optimize.Reflector of a run: the reflection model, asked with structured
// output for a rewritten prompt.
type reflector struct {
	model run.Caller
	name  string // the reflection model
}

var _ optimize.Reflector = (*reflector)(nil)

// reflectionSystem tells the reflection model its task.
const reflectionSystem = `You improve prompts for a language model. You are given a prompt and examples of what the model answered with it, with how the answers were judged. Rewrite the prompt so that the answers meet the feedback: keep what works, fix what the feedback criticises, state the rules the expected outputs follow. Keep every {{variable}} reference of the prompt exactly as written. Answer with the whole new prompt in "prompt".`

var reflectionSchema = &llm.Schema{Name: "improved_prompt", Description: "The rewritten prompt.",
	JSON: json.RawMessage(`{"type":"object","properties":{"prompt":{"type":"string"}},"required":["prompt"],"additionalProperties":false}`)}

// Reflect implements optimize.Reflector. An answer that is empty is the prompt unchanged.
func (r *reflector) Reflect(ctx context.Context, content string, scored []optimize.Reflection) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "<prompt>\n%s\n</prompt>\n", content)
	for i, s := range scored {
		fmt.Fprintf(&b, "\n<example %d>\nInput: %s\nAnswer: %s\nScore: %.2f\nFeedback:\n%s\n</example %d>\n", i+1,
			textcut.Prefix(s.Example.Input, maxReflectionField), textcut.Prefix(s.Score.Output, maxReflectionField),
			s.Score.Overall, textcut.Prefix(s.Score.Feedback, maxReflectionField), i+1)
	}
	zero := 0.0
	resp, err := r.model.Complete(ctx, llm.Request{
		Model: r.name, System: reflectionSystem, Temperature: &zero, Schema: reflectionSchema,
		Messages: []llm.Message{{Role: llm.RoleUser, Text: b.String()}},
	})
	if err != nil {
		return "", err
	}
	var out struct {
		Prompt string `json:"prompt"`
	}
	if err := json.Unmarshal(resp.JSON, &out); err != nil || strings.TrimSpace(out.Prompt) == "" {
		return content, nil
	}
	return out.Prompt, nil
}
