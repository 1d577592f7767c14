package mcpserver

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
)

// ListPromptsOutput is list-prompts' answer.
type ListPromptsOutput struct {
	Prompts    []api.Prompt `json:"prompts" jsonschema:"the project's prompts, each with its newest version"`
	Offset     int          `json:"offset" jsonschema:"the prompts skipped"`
	NextOffset *int         `json:"next_offset" jsonschema:"offset of the prompts left out of this answer (it holds what fits the tool's answer limit); null when it holds the rest"`
}

// ListPromptsInput pages the prompts.
type ListPromptsInput struct {
	Offset int `json:"offset,omitempty" jsonschema:"prompts to skip: next_offset of the previous answer"`
}

// GetPromptInput selects a version of a prompt.
type GetPromptInput struct {
	PromptSlug string `json:"prompt_slug" jsonschema:"the prompt's slug, e.g. support-bot"`
	Version    int    `json:"version,omitempty" jsonschema:"a version number; omit for the tag or the newest version"`
	Tag        string `json:"tag,omitempty" jsonschema:"a tag such as production; omit for the version or the newest version"`
}

// ListPromptVersionsInput names a prompt.
type ListPromptVersionsInput struct {
	PromptSlug string `json:"prompt_slug" jsonschema:"the prompt's slug"`
	Offset     int    `json:"offset,omitempty" jsonschema:"versions to skip: next_offset of the previous answer"`
}

// ListPromptVersionsOutput is list-prompt-versions' answer.
type ListPromptVersionsOutput struct {
	Versions   []api.PromptVersion `json:"versions" jsonschema:"the versions of the prompt, oldest first, from offset: as many as fit the tool's answer limit"`
	Tags       []api.PromptTag     `json:"tags" jsonschema:"the prompt's tags and the version each points at"`
	Offset     int                 `json:"offset" jsonschema:"the versions skipped"`
	NextOffset *int                `json:"next_offset" jsonschema:"offset of the versions left out of this answer; null when it holds the rest"`
}

// promptTools are the read tools of the prompt registry.
func (s *server) promptTools() []tool {
	return []tool{
		newTool(s, &mcp.Tool{Name: "list-prompts", Description: "List the project's prompts, each with its newest version (content, model, hash).",
			Annotations: readOnly("List prompts")},
			func(ctx context.Context, c *client.Client, in ListPromptsInput) (ListPromptsOutput, error) {
				if in.Offset < 0 {
					return ListPromptsOutput{}, errInput("offset must be 0 or more, not %d", in.Offset)
				}
				prompts, err := c.Prompts(ctx)
				if err != nil {
					return ListPromptsOutput{}, err
				}
				prompts = prompts[min(in.Offset, len(prompts)):]
				return fitPage(len(prompts), func(n int) ListPromptsOutput {
					return ListPromptsOutput{Prompts: prompts[:n], Offset: in.Offset, NextOffset: leftOut(in.Offset, n, len(prompts))}
				})
			}),
		newTool(s, &mcp.Tool{Name: "get-prompt", Description: "Read a version of a prompt: by version number, by tag (production, staging, ...), or the newest.",
			Annotations: readOnly("Get a prompt version")},
			func(ctx context.Context, c *client.Client, in GetPromptInput) (api.PromptVersion, error) {
				if in.Version != 0 && in.Tag != "" {
					return api.PromptVersion{}, errInput("give version or tag, not both")
				}
				return c.PromptVersion(ctx, in.PromptSlug, client.PromptSelector{Version: in.Version, Tag: in.Tag})
			}),
		newTool(s, &mcp.Tool{Name: "list-prompt-versions", Description: "List every version of a prompt (oldest first) and its tags.",
			Annotations: readOnly("List prompt versions")},
			func(ctx context.Context, c *client.Client, in ListPromptVersionsInput) (ListPromptVersionsOutput, error) {
				if in.Offset < 0 {
					return ListPromptVersionsOutput{}, errInput("offset must be 0 or more, not %d", in.Offset)
				}
				versions, err := c.PromptVersions(ctx, in.PromptSlug)
				if err != nil {
					return ListPromptVersionsOutput{}, err
				}
				tags, err := c.PromptTags(ctx, in.PromptSlug)
				if err != nil {
					return ListPromptVersionsOutput{}, err
				}
				versions = versions[min(in.Offset, len(versions)):]
				return fitPage(len(versions), func(n int) ListPromptVersionsOutput {
					return ListPromptVersionsOutput{Versions: versions[:n], Tags: tags, Offset: in.Offset, NextOffset: leftOut(in.Offset, n, len(versions))}
				})
			}),
	}
}
