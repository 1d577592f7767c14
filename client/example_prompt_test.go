package client_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/plumehq/plume/client"
)

// The application ships its prompt; Prompt serves the latest published version instead once
// there is one, with the linkage metadata in front for the integrations to strip.
func ExampleClient_Prompt() {
	c, err := client.New(client.WithPromptCache(client.PromptCacheConfig{TTL: 10 * time.Second}))
	if err != nil {
		log.Fatal(err)
	}
	system, err := c.Prompt(context.Background(), client.PromptRequest{
		Name:      "support-bot",
		Content:   "You are a helpful agent for {{product}}.",
		Variables: map[string]string{"product": "Plume"},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(system) // <zeroeval>{"task": "support-bot", ...}</zeroeval>You are ...
}

// GetPrompt reads the version deployed under a tag, rendered.
func ExampleClient_GetPrompt() {
	c, err := client.New()
	if err != nil {
		log.Fatal(err)
	}
	p, err := c.GetPrompt(context.Background(), "support-bot", &client.GetPromptOptions{
		Tag:       "production",
		Variables: map[string]string{"product": "Plume"},
		Fallback:  "You are a helpful agent for {{product}}.",
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(p.Source, p.Version, p.Content)
}
