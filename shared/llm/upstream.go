package llm

import (
	"context"
	"net/http"
)

// Upstream is a model's provider as a gateway calls it: requests in the provider's own wire
// format, sent with the deployment's endpoint and credentials (a Bearer key, Azure's api-key,
// Anthropic's x-api-key, SigV4 for Bedrock). Complete is for callers that want an answer;
// Upstream is for those that relay one.
type Upstream struct {
	// Target is where the model goes: its provider, API and model name.
	Target Target
	api    api
	http   *http.Client
}

// Upstream returns how to reach model's provider: ErrUnknownModel for a model Route cannot
// place, ErrNotConfigured for a provider without an endpoint or credentials.
func (c *Client) Upstream(model string) (Upstream, error) {
	t, err := Route(model)
	if err != nil {
		return Upstream{}, err
	}
	a, err := c.api(t)
	if err != nil {
		return Upstream{}, err
	}
	return Upstream{Target: t, api: a, http: c.http}, nil
}

// Do sends body to the provider's endpoint of the target's model, authenticated, and returns
// the provider's answer as it comes (the caller reads and closes its body; a streamed answer
// is read as it arrives). It does not retry.
func (u Upstream) Do(ctx context.Context, body []byte) (*http.Response, error) {
	req, err := u.api.newRequest(ctx, u.Target.Model, body)
	if err != nil {
		return nil, err
	}
	return u.http.Do(req)
}

// streamer is an api whose streamed answers come from an endpoint of their own.
type streamer interface {
	// newStreamRequest returns the HTTP request of a streamed answer.
	newStreamRequest(ctx context.Context, model string, body []byte) (*http.Request, error)
}

// DoStream is Do for a streamed answer. Bedrock streams from an operation of its own
// (ConverseStream, answered as an AWS event stream: application/vnd.amazon.eventstream); the
// other APIs stream on a flag of the body ("stream": true), so for them DoStream is Do.
func (u Upstream) DoStream(ctx context.Context, body []byte) (*http.Response, error) {
	s, ok := u.api.(streamer)
	if !ok {
		return u.Do(ctx, body)
	}
	req, err := s.newStreamRequest(ctx, u.Target.Model, body)
	if err != nil {
		return nil, err
	}
	return u.http.Do(req)
}
