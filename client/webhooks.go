package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"

	"github.com/plumehq/plume/api"
)

// CreateWebhook registers a webhook of the project (admin keys only). The answer holds its
// signing secret: the only time it is sent, so keep it now. Creating is not retried: a retry
// after a lost answer would register a second webhook.
func (c *Client) CreateWebhook(ctx context.Context, req api.CreateWebhookRequest) (api.CreatedWebhook, error) {
	path, err := c.projectPath("/webhooks")
	if err != nil {
		return api.CreatedWebhook{}, err
	}
	var out api.CreatedWebhook
	err = c.do(ctx, call{method: http.MethodPost, path: path, body: req}, &out)
	return out, err
}

// Webhooks lists the project's webhooks, without their secrets (admin keys only).
func (c *Client) Webhooks(ctx context.Context) ([]api.Webhook, error) {
	path, err := c.projectPath("/webhooks")
	if err != nil {
		return nil, err
	}
	var out api.WebhookList
	err = c.do(ctx, call{method: http.MethodGet, path: path}, &out)
	return out.Webhooks, err
}

// Webhook reads one webhook of the project, without its secret (admin keys only). A webhook
// that is gone, or of another project, is a *Error with status 404.
func (c *Client) Webhook(ctx context.Context, webhookID string) (api.Webhook, error) {
	path, err := c.projectPath("/webhooks/%s", url.PathEscape(webhookID))
	if err != nil {
		return api.Webhook{}, err
	}
	var out api.Webhook
	err = c.do(ctx, call{method: http.MethodGet, path: path}, &out)
	return out, err
}

// DeleteWebhook deletes a webhook of the project (admin keys only); nothing more is delivered
// to it. Deleting one that is gone is a *Error with status 404.
func (c *Client) DeleteWebhook(ctx context.Context, webhookID string) error {
	path, err := c.projectPath("/webhooks/%s", url.PathEscape(webhookID))
	if err != nil {
		return err
	}
	return c.do(ctx, call{method: http.MethodDelete, path: path}, &api.WebhookDeleted{})
}

// WebhookDeliveries reads a webhook's delivery log, newest first, at most limit (0: the
// server's default, 50; at most 200).
func (c *Client) WebhookDeliveries(ctx context.Context, webhookID string, limit int) ([]api.WebhookDelivery, error) {
	path, err := c.projectPath("/webhooks/%s/deliveries", url.PathEscape(webhookID))
	if err != nil {
		return nil, err
	}
	cl := call{method: http.MethodGet, path: path}
	if limit > 0 {
		cl.query = url.Values{"limit": {strconv.Itoa(limit)}}
	}
	var out api.WebhookDeliveryList
	err = c.do(ctx, cl, &out)
	return out.Deliveries, err
}

// Redeliver delivers a delivery's event again, with the same id, retried for another 24 hours.
// Doing it twice queues it twice (the receiver deduplicates by the id), so it is retried like
// a read.
func (c *Client) Redeliver(ctx context.Context, webhookID, deliveryID string) (api.WebhookDelivery, error) {
	path, err := c.projectPath("/webhooks/%s/deliveries/%s/redeliver", url.PathEscape(webhookID), url.PathEscape(deliveryID))
	if err != nil {
		return api.WebhookDelivery{}, err
	}
	var out api.WebhookDelivery
	err = c.do(ctx, call{method: http.MethodPost, path: path, idempotent: true}, &out)
	return out, err
}
