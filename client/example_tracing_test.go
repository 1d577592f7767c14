package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"os"
	"time"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
)

// A request handled as a trace: a root span, a child for each step, in the user's session.
// Close sends the spans still waiting before the program exits.
func ExampleClient_StartSpan() {
	c, err := client.New() // PLUME_API_KEY, PLUME_BASE_URL
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close(context.Background())

	ctx := client.WithSession(context.Background(), "conversation-42", "Support chat")
	ctx, span := c.StartSpan(ctx, "answer-ticket", client.WithTags(map[string]string{"team": "support"}))
	defer span.End()
	span.SetInput("Where is my order?")

	_, lookup := c.StartSpan(ctx, "lookup-order", client.WithKind(client.KindTool))
	lookup.SetAttribute("order_id", 1234)
	lookup.RecordError(errors.New("orders service unavailable"))
	lookup.End()

	span.SetOutput("Sorry, I cannot see your order right now.")
	fmt.Println(span.TraceID() == lookup.TraceID(), lookup.ParentID() == span.ID())
}

// The transport under any OpenAI-compatible client (with openai-go:
// openai.NewClient(option.WithHTTPClient(httpClient))): the call is recorded as an llm span,
// with the prompt's linkage metadata stripped, its variables substituted and the version's
// bound model used.
func ExampleClient_Transport() {
	c, err := client.New()
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close(context.Background())
	httpClient := &http.Client{Transport: c.Transport(nil)}

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
	body, err := json.Marshal(map[string]any{
		"model": "gpt-4o-mini", // replaced by the model bound to the prompt version, if any
		"messages": []map[string]string{
			{"role": "system", "content": system},
			{"role": "user", "content": "What does Plume do?"},
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://api.openai.com/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		log.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+os.Getenv("OPENAI_API_KEY"))
	req.Header.Set("Content-Type", "application/json")
	res, err := httpClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	defer res.Body.Close()
	fmt.Println(res.Status)
}

// The writer's counts tell whether spans are lost: an API that is down, a queue too small.
func ExampleWriter_Stats() {
	c, err := client.New(client.WithSpanWriter(client.WriterConfig{BatchSize: 50, QueueSize: 5000}))
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close(context.Background())
	if st := c.SpanWriter().Stats(); st.Dropped > 0 {
		log.Printf("plume: %d spans dropped (%d in failed batches): %v", st.Dropped, st.Failed, st.LastError)
	}
}

// Every trace with an error in the last day, however many pages it takes: each request
// continues from the cursor the answer before it gave. A list the server's scan bound cut ends
// with ErrPartialList, after the traces it could reach.
func ExampleClient_TracePages() {
	c, err := client.New()
	if err != nil {
		log.Fatal(err)
	}
	hasError := true
	q := api.TraceQuery{ListQuery: api.ListQuery{HasError: &hasError, CreatedAfter: api.TimeOf(time.Now().Add(-24 * time.Hour)), Limit: 200}}
	for t, err := range client.Records(c.TracePages(context.Background(), q)) {
		if errors.Is(err, client.ErrPartialList) {
			log.Printf("older traces of the window were not examined: %v", err)
			break
		}
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(t.ID, t.ErrorCount)
	}
}
