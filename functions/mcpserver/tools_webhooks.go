package mcpserver

import (
	"context"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
)

// ListWebhooksInput takes nothing: the project's webhooks are few, answered whole.
type ListWebhooksInput struct{}

// GetWebhookInput names one webhook of the project.
type GetWebhookInput struct {
	WebhookID string `json:"webhook_id" jsonschema:"the webhook's id (wh_ and a UUID), as list-webhooks answers it"`
}

// ListEventsInput selects a page of the project's event log (GET /projects/{project_id}/events).
type ListEventsInput struct {
	Types  []string `json:"types,omitempty" jsonschema:"keep the events of these types only: prompt.version.created, prompt.tag.moved, prompt.model.bound, judge.created, judge.updated, optimization.run.finished, optimization.run.deployed, monitor.alerted, monitor.resolved, dataset.version.created"`
	Since  string   `json:"since,omitempty" jsonschema:"an RFC 3339 time: the events after it, oldest first; without it, the newest first"`
	Limit  int      `json:"limit,omitempty" jsonschema:"events per page: 1 to 200, default 50"`
	Cursor string   `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page, with the same types and since"`
}

// ListEventsOutput is a page of the event log.
type ListEventsOutput struct {
	Events     []api.Event `json:"events" jsonschema:"the events: id (the same on every delivery), type, time, project_id and data, the body of the type"`
	NextCursor *string     `json:"next_cursor" jsonschema:"the cursor of the next page: call list-events again with cursor set to it and the same types and since; null when the log has ended"`
}

// webhookTools are the read tools of the project's events and webhooks.
func (s *server) webhookTools() []tool {
	return []tool{
		newTool(s, &mcp.Tool{Name: "list-events", Annotations: readOnly("List events"),
			Description: "List the project's event log (the last 14 days): deploys (prompt.tag.moved), new prompt versions, model bindings, judge changes, " +
				"optimization runs finished or deployed, monitors alerting or resolved. Newest first, or oldest first after since; filtered by types; paged by cursor. " +
				"Admin and member keys."},
			listEvents),
		newTool(s, &mcp.Tool{Name: "list-webhooks", Annotations: readOnly("List webhooks"),
			Description: "List the project's webhooks: id, URL, the event types each receives, format (standard or slack), when and by whom created. " +
				"Never their signing secrets. Admin keys only, as the API's webhook routes."},
			func(ctx context.Context, c *client.Client, _ ListWebhooksInput) (api.WebhookList, error) {
				hooks, err := c.Webhooks(ctx)
				return api.WebhookList{Webhooks: hooks}, err
			}),
		newTool(s, &mcp.Tool{Name: "get-webhook", Annotations: readOnly("Get a webhook"),
			Description: "Read one of the project's webhooks: id, URL, the event types it receives, format, when and by whom created. " +
				"Never its signing secret. Admin keys only, as the API's webhook routes."},
			func(ctx context.Context, c *client.Client, in GetWebhookInput) (api.Webhook, error) {
				if err := requireID("webhook_id", in.WebhookID, "list-webhooks"); err != nil {
					return api.Webhook{}, err
				}
				return c.Webhook(ctx, in.WebhookID)
			}),
	}
}

func listEvents(ctx context.Context, c *client.Client, in ListEventsInput) (ListEventsOutput, error) {
	q := client.EventsQuery{Types: in.Types, Limit: in.Limit, Cursor: in.Cursor}
	for _, typ := range in.Types {
		if !slices.Contains(api.EventTypes, typ) {
			return ListEventsOutput{}, errInput("types: %q is no event type; the types are %v", typ, api.EventTypes)
		}
	}
	if in.Limit < 0 || in.Limit > 200 {
		return ListEventsOutput{}, errInput("limit must be from 1 to 200, not %d", in.Limit)
	}
	if in.Since != "" {
		at, err := time.Parse(time.RFC3339Nano, in.Since)
		if err != nil {
			return ListEventsOutput{}, errInput("since must be an RFC 3339 time (2026-12-01T09:00:00Z), not %q", in.Since)
		}
		q.Since = at
	}
	p, err := c.Events(ctx, q)
	if err != nil {
		return ListEventsOutput{}, err
	}
	out := ListEventsOutput{Events: p.Events}
	if out.Events == nil {
		out.Events = []api.Event{}
	}
	if p.Next != "" {
		out.NextCursor = &p.Next
	}
	return out, nil
}
