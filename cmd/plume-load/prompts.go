package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
)

// promptsScenario sends the SDKs' prompt fetches in turn (COMPAT.md "Prompt responses", spec
// §4.1): the Python default mode's GET /v1/tasks/{task}/prompt/latest, get_prompt's GET
// /v1/prompts/{slug}?tag=production, and ensure with the Python SDK's exact body for content
// that already exists (the steady state of every application start).
type promptsScenario struct {
	task      string
	projectID string
	tag       string // production when it could be pinned, else latest
	ensure    []byte
}

// promptText is the task's prompt, already normalised (COMPAT.md): no CR, no trailing spaces.
const promptText = "You are a helpful support agent for {{product}}.\n" +
	"Answer in {{language}}, briefly and politely, and cite the order number when there is one.\n" +
	"Never reveal internal notes, and hand over to a human when the customer asks for one."

func (s *promptsScenario) describe() string {
	return fmt.Sprintf("prompts (GET latest, GET ?tag=%s, POST ensure of task %s)", s.tag, s.task)
}

// setup ensures the task's version, and pins the production tag to it when the project is
// known (the pin route is under /projects/{project_id}).
func (s *promptsScenario) setup(ctx context.Context, c *client) error {
	sum := sha256.Sum256([]byte(promptText))
	body, err := json.Marshal(map[string]any{"content": promptText, "content_hash": hex.EncodeToString(sum[:]),
		"metadata": nil, "model_id": nil})
	if err != nil {
		return err
	}
	s.ensure = body
	status, _, resp, err := c.do(ctx, request{method: "POST", path: s.ensurePath(), body: body, contentType: "application/json"})
	if err != nil {
		return fmt.Errorf("ensure: %w", err)
	}
	if status != 200 {
		return fmt.Errorf("ensure: HTTP %d: %s", status, truncate(resp))
	}
	var v struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(resp, &v); err != nil || v.Version < 1 {
		return fmt.Errorf("ensure: unexpected answer %s", truncate(resp))
	}
	s.tag = "latest"
	if s.projectID == "" {
		return nil
	}
	pin, _ := json.Marshal(map[string]int{"version": v.Version})
	path := fmt.Sprintf("/projects/%s/prompts/%s/tags/production:pin", url.PathEscape(s.projectID), url.PathEscape(s.task))
	status, _, resp, err = c.do(ctx, request{method: "POST", path: path, body: pin, contentType: "application/json"})
	if err != nil {
		return fmt.Errorf("pin production: %w", err)
	}
	if status != 200 {
		return fmt.Errorf("pin production: HTTP %d: %s", status, truncate(resp))
	}
	s.tag = "production"
	return nil
}

func (s *promptsScenario) ensurePath() string {
	return "/v1/tasks/" + url.PathEscape(s.task) + "/prompt/versions/ensure"
}

func (s *promptsScenario) next(w *worker) request {
	i := w.n
	w.n++
	switch i % 3 {
	case 0:
		return request{op: "prompt-latest", method: "GET", path: "/v1/tasks/" + url.PathEscape(s.task) + "/prompt/latest", check: hasVersionID}
	case 1:
		return request{op: "prompt-by-tag", method: "GET", path: "/v1/prompts/" + url.PathEscape(s.task) + "?tag=" + s.tag, check: hasVersionID}
	default:
		return request{op: "prompt-ensure", method: "POST", path: s.ensurePath(), body: s.ensure,
			contentType: "application/json", check: hasVersionID}
	}
}

// hasVersionID checks what the SDKs cannot do without (COMPAT.md): the version_id.
func hasVersionID(body []byte) string {
	if !bytes.Contains(body, []byte(`"version_id":"`)) {
		return "answer without version_id"
	}
	return ""
}

func truncate(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// quote is s as a JSON string.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
