package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/plumehq/plume/api"
)

// CreateMonitor creates a monitor of the project (member and admin keys); it starts in
// no_data until its first evaluation. Creating is not retried: a retry after a lost answer
// would create a second monitor.
func (c *Client) CreateMonitor(ctx context.Context, req api.CreateMonitorRequest) (api.Monitor, error) {
	path, err := c.projectPath("/monitors")
	if err != nil {
		return api.Monitor{}, err
	}
	var out api.Monitor
	err = c.do(ctx, call{method: http.MethodPost, path: path, body: req}, &out)
	return out, err
}

// Monitors lists the project's monitors with their states.
func (c *Client) Monitors(ctx context.Context) ([]api.Monitor, error) {
	path, err := c.projectPath("/monitors")
	if err != nil {
		return nil, err
	}
	var out api.MonitorList
	err = c.do(ctx, call{method: http.MethodGet, path: path}, &out)
	return out.Monitors, err
}

// Monitor reads one monitor, its state and its last state changes; a *Error with status 404
// when there is none.
func (c *Client) Monitor(ctx context.Context, monitorID string) (api.Monitor, error) {
	path, err := c.projectPath("/monitors/%s", url.PathEscape(monitorID))
	if err != nil {
		return api.Monitor{}, err
	}
	var out api.Monitor
	err = c.do(ctx, call{method: http.MethodGet, path: path}, &out)
	return out, err
}

// UpdateMonitor changes the fields of req that are set; the state is kept. Setting the same
// fields again changes nothing more, so it is retried like a read.
func (c *Client) UpdateMonitor(ctx context.Context, monitorID string, req api.UpdateMonitorRequest) (api.Monitor, error) {
	path, err := c.projectPath("/monitors/%s", url.PathEscape(monitorID))
	if err != nil {
		return api.Monitor{}, err
	}
	var out api.Monitor
	err = c.do(ctx, call{method: http.MethodPatch, path: path, body: req, idempotent: true}, &out)
	return out, err
}

// DeleteMonitor deletes a monitor of the project; deleting one that is gone is a *Error with
// status 404.
func (c *Client) DeleteMonitor(ctx context.Context, monitorID string) error {
	path, err := c.projectPath("/monitors/%s", url.PathEscape(monitorID))
	if err != nil {
		return err
	}
	return c.do(ctx, call{method: http.MethodDelete, path: path}, &api.MonitorDeleted{})
}
