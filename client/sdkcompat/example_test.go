package sdkcompat_test

import (
	"context"
	"fmt"
	"log"
	"net/http"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/plumehq/plume/client"
)

// An OpenAI client whose chat completions are recorded as llm spans, with the prompt's linkage
// metadata stripped, its variables substituted and the version's bound model used.
func Example_openAI() {
	c, err := client.New()
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close(context.Background())
	oa := openai.NewClient(option.WithHTTPClient(&http.Client{Transport: c.Transport(nil)}))

	ctx, span := c.StartSpan(context.Background(), "answer-ticket")
	defer span.End()
	system, err := c.Prompt(ctx, client.PromptRequest{
		Name:      "support-bot",
		Content:   "You are a helpful agent for {{product}}.",
		Variables: map[string]string{"product": "Plume"},
	})
	if err != nil {
		log.Fatal(err)
	}
	res, err := oa.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{
		Model: openai.ChatModelGPT4oMini, // replaced by the model bound to the prompt version, if any
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage(system),
			openai.UserMessage("What does Plume do?"),
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Choices[0].Message.Content)
}
