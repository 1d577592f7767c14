package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/plumehq/plume/api"
)

// CreateKey issues an API key of the project (admin keys only). The answer holds the key's
// secret: the only time it is ever sent, so keep it now. Issuing is not retried: a retry
// after a lost answer would issue a second key.
func (c *Client) CreateKey(ctx context.Context, req api.CreateAPIKeyRequest) (api.CreatedAPIKey, error) {
	path, err := c.projectPath("/api-keys")
	if err != nil {
		return api.CreatedAPIKey{}, err
	}
	var out api.CreatedAPIKey
	err = c.do(ctx, call{method: http.MethodPost, path: path, body: req}, &out)
	return out, err
}

// Keys lists the project's API keys, revoked and expired ones included, oldest first (admin
// keys only). No secret is ever listed.
func (c *Client) Keys(ctx context.Context) ([]api.APIKey, error) {
	path, err := c.projectPath("/api-keys")
	if err != nil {
		return nil, err
	}
	_, out, err := whole(ctx, c, path, func(p *api.APIKeyList) []api.APIKey { return p.Keys })
	return out, err
}

// RevokeKey revokes an API key of the project and answers it as it now is (admin keys only).
// Revoking it again changes nothing, so it is retried like a read. Revoking the project's last
// usable admin key is a conflict (*Error with status 409).
func (c *Client) RevokeKey(ctx context.Context, keyID string) (api.APIKey, error) {
	path, err := c.projectPath("/api-keys/%s", url.PathEscape(keyID))
	if err != nil {
		return api.APIKey{}, err
	}
	var out api.APIKey
	err = c.do(ctx, call{method: http.MethodDelete, path: path, idempotent: true}, &out)
	return out, err
}

// GatewayStatus reads how the model gateway stands for the project: its endpoint, the
// deployment's limits, what they have counted for the project now, and its tracing mode
// (member and admin keys).
func (c *Client) GatewayStatus(ctx context.Context) (api.GatewayStatus, error) {
	path, err := c.projectPath("/gateway")
	if err != nil {
		return api.GatewayStatus{}, err
	}
	var out api.GatewayStatus
	err = c.do(ctx, call{method: http.MethodGet, path: path}, &out)
	return out, err
}
