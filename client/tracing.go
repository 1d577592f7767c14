package client

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/plumehq/plume/api"
)

// IngestSpans sends spans as the SDKs do (POST /spans, spec §4.4): spans is a JSON array of
// span objects in any form the API takes (times as Unix seconds or ISO 8601). It answers the
// spans as stored, as many as fit one answer (api.MaxAnswerBytes): fewer than were stored
// when the server left the last ones out (api.OmittedHeader; GET /spans?id= reads them). A
// span sent again is merged, never counted twice, so it is retried like a read.
func (c *Client) IngestSpans(ctx context.Context, spans any) ([]api.Span, error) {
	var out []api.Span
	err := c.do(ctx, call{method: http.MethodPost, path: "/spans", body: spans, idempotent: true}, &out)
	return out, err
}

// Spans lists spans (GET /spans) of query q (spec §4.3). It does not say whether the answer is
// partial nor where the list goes on: a list that must be complete is read with SpansPage,
// AllSpans or SpanPages.
func (c *Client) Spans(ctx context.Context, q api.SpanQuery) ([]api.Span, error) {
	var out []api.Span
	err := c.do(ctx, call{method: http.MethodGet, path: "/spans", query: q.Values()}, &out)
	return out, err
}

// Traces lists traces (GET /traces) of query q. It does not say whether the answer is partial
// nor where the list goes on: a list that must be complete is read with TracesPage, AllTraces
// or TracePages.
func (c *Client) Traces(ctx context.Context, q api.TraceQuery) ([]api.Trace, error) {
	var out []api.Trace
	err := c.do(ctx, call{method: http.MethodGet, path: "/traces", query: q.Values()}, &out)
	return out, err
}

// Sessions lists sessions (GET /sessions) of query q. It does not say whether the answer is
// partial nor where the list goes on: a list that must be complete is read with SessionsPage,
// AllSessions or SessionPages.
func (c *Client) Sessions(ctx context.Context, q api.SessionQuery) ([]api.Session, error) {
	var out []api.Session
	err := c.do(ctx, call{method: http.MethodGet, path: "/sessions", query: q.Values()}, &out)
	return out, err
}

// CreateFeedbackLink issues a public feedback link (its URL carries the token, shown once).
func (c *Client) CreateFeedbackLink(ctx context.Context, req api.LinkRequest) (api.Link, error) {
	var out api.Link
	err := c.do(ctx, call{method: http.MethodPost, path: "/feedback-links", body: req}, &out)
	return out, err
}

// FeedbackLinks lists the project's feedback links.
func (c *Client) FeedbackLinks(ctx context.Context) (api.LinkList, error) {
	out, links, err := whole(ctx, c, "/feedback-links", func(p *api.LinkList) []api.Link { return p.Links })
	out.Links, out.Count = links, len(links)
	return out, err
}

// RevokeFeedbackLink revokes a feedback link and answers it as it now is. Revoking it again
// changes nothing, so it is retried like a read.
func (c *Client) RevokeFeedbackLink(ctx context.Context, linkID string) (api.Link, error) {
	var out api.Link
	err := c.do(ctx, call{method: http.MethodDelete, path: "/feedback-links/" + url.PathEscape(linkID), idempotent: true}, &out)
	return out, err
}

// ModelPrices lists the project's own model prices and what the shipped table holds.
func (c *Client) ModelPrices(ctx context.Context) (api.ModelPriceList, error) {
	path, err := c.projectPath("/model-prices")
	if err != nil {
		return api.ModelPriceList{}, err
	}
	out, prices, err := whole(ctx, c, path, func(p *api.ModelPriceList) []api.ModelPrice { return p.Overrides })
	out.Overrides = prices
	return out, err
}

// ModelPrice reads the price of model that spans are priced with: the project's own, else the
// shipped table's.
func (c *Client) ModelPrice(ctx context.Context, model string) (api.ModelPrice, error) {
	path, err := c.projectPath("/model-prices/%s", escapeSegments(model))
	if err != nil {
		return api.ModelPrice{}, err
	}
	var out api.ModelPrice
	err = c.do(ctx, call{method: http.MethodGet, path: path}, &out)
	return out, err
}

// SetModelPrice sets the project's price of model, which spans are then priced with.
func (c *Client) SetModelPrice(ctx context.Context, model string, req api.PutModelPriceRequest) (api.ModelPrice, error) {
	path, err := c.projectPath("/model-prices/%s", escapeSegments(model))
	if err != nil {
		return api.ModelPrice{}, err
	}
	var out api.ModelPrice
	err = c.do(ctx, call{method: http.MethodPut, path: path, body: req}, &out)
	return out, err
}

// DeleteModelPrice removes the project's price of model; the answer names the model as the
// project's prices key it.
func (c *Client) DeleteModelPrice(ctx context.Context, model string) (api.ModelPriceDeleted, error) {
	path, err := c.projectPath("/model-prices/%s", escapeSegments(model))
	if err != nil {
		return api.ModelPriceDeleted{}, err
	}
	var out api.ModelPriceDeleted
	err = c.do(ctx, call{method: http.MethodDelete, path: path}, &out)
	return out, err
}

// escapeSegments escapes each "/"-separated segment of a model id ("openai/gpt-4o-mini"),
// whose slashes stay path separators: the route takes the rest of the path as the model.
func escapeSegments(s string) string {
	parts := strings.Split(s, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "/")
}

// PutTraces creates or updates traces (POST /traces). It answers the traces as stored, as many
// as fit one answer, as IngestSpans does; writing one again replaces its fields, so it is
// retried like a read.
func (c *Client) PutTraces(ctx context.Context, traces []api.TraceInput) ([]api.Trace, error) {
	var out []api.Trace
	err := c.do(ctx, call{method: http.MethodPost, path: "/traces", body: traces, idempotent: true}, &out)
	return out, err
}

// PutSessions creates or updates sessions (POST /sessions), retried as PutTraces is.
func (c *Client) PutSessions(ctx context.Context, sessions []api.SessionInput) ([]api.Session, error) {
	var out []api.Session
	err := c.do(ctx, call{method: http.MethodPost, path: "/sessions", body: sessions, idempotent: true}, &out)
	return out, err
}

// TraceTree reads a page of a trace's span tree (GET /traces/{trace_id}/tree): limit spans
// (0: the server's default) from offset; NextOffset says where the next page starts.
func (c *Client) TraceTree(ctx context.Context, traceID string, offset, limit int) (api.SpanTree, error) {
	q := url.Values{"offset": {strconv.Itoa(offset)}}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out api.SpanTree
	err := c.do(ctx, call{method: http.MethodGet, path: "/traces/" + url.PathEscape(traceID) + "/tree", query: q}, &out)
	return out, err
}

// SpanSummaries reads the summaries of spans by id (GET /spans/summaries), in the order of ids,
// api.MaxSummaryIDs a request; ids that are no span of the project are left out.
func (c *Client) SpanSummaries(ctx context.Context, ids []string) ([]api.SpanSummary, error) {
	var out []api.SpanSummary
	for part := range slices.Chunk(ids, api.MaxSummaryIDs) {
		var page []api.SpanSummary
		q := url.Values{"ids": {strings.Join(part, ",")}}
		if err := c.do(ctx, call{method: http.MethodGet, path: "/spans/summaries", query: q}, &page); err != nil {
			return nil, err
		}
		out = append(out, page...)
	}
	return out, nil
}

// Attachments lists a span's stored files, each with a presigned download URL.
func (c *Client) Attachments(ctx context.Context, spanID string) (api.AttachmentList, error) {
	var out api.AttachmentList
	err := c.do(ctx, call{method: http.MethodGet, path: "/spans/" + url.PathEscape(spanID) + "/attachments"}, &out)
	return out, err
}

// UploadAttachment stores a file of a span: it asks for a presigned upload (POST
// /spans/{span_id}/attachments) and sends data to it with the headers the signature covers.
// req.ContentType is required; req.Size is set from data.
func (c *Client) UploadAttachment(ctx context.Context, spanID string, req api.AttachmentUploadRequest, data []byte) (api.AttachmentUpload, error) {
	size := int64(len(data))
	req.Size = &size
	var up api.AttachmentUpload
	err := c.do(ctx, call{method: http.MethodPost, path: "/spans/" + url.PathEscape(spanID) + "/attachments", body: req}, &up)
	if err != nil {
		return up, err
	}
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	put, err := http.NewRequestWithContext(ctx, cmp.Or(up.Method, http.MethodPut), up.UploadURL, bytes.NewReader(data))
	if err != nil {
		return up, fmt.Errorf("client: upload of attachment %s: %w", up.ID, err)
	}
	for k, v := range up.Headers {
		put.Header.Set(k, v)
	}
	put.ContentLength = size
	resp, err := c.http.Do(put)
	if err != nil {
		return up, fmt.Errorf("client: upload of attachment %s: %w", up.ID, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return up, &Error{Status: resp.StatusCode, Code: codeOfStatus(resp.StatusCode),
			Message: fmt.Sprintf("upload of attachment %s: %s", up.ID, strings.TrimSpace(string(body)))}
	}
	return up, nil
}
