package fakemodel

import (
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// ruleJSON is one rule of a rules file; see ParseRules.
type ruleJSON struct {
	Match struct {
		API      API    `json:"api"`
		Model    string `json:"model"`
		Contains string `json:"contains"`
		System   string `json:"system"`
		Schema   string `json:"schema"`
	} `json:"match"`
	Times int `json:"times"`
	Reply struct {
		Text         string          `json:"text"`
		JSON         json.RawMessage `json:"json"`
		Refusal      string          `json:"refusal"`
		Truncate     bool            `json:"truncate"`
		CachedTokens int             `json:"cached_tokens"`
		Status       int             `json:"status"`
		RetryAfter   string          `json:"retry_after"`
		Error        string          `json:"error"`
		Latency      string          `json:"latency"`
		// ChunkInterval is Reply.ChunkInterval, a duration such as "100ms".
		ChunkInterval string `json:"chunk_interval"`
	} `json:"reply"`
}

// ParseRules reads rules from JSON: an array of objects such as
//
//	[
//	  {"match": {"contains": "refund"}, "reply": {"text": "No refunds."}},
//	  {"match": {"schema": "verdict"}, "reply": {"json": {"pass": false, "score": 2}}},
//	  {"match": {"model": "gpt-4o"}, "times": 2, "reply": {"status": 429, "retry_after": "1s"}},
//	  {"reply": {"latency": "300ms"}}
//	]
//
// Every match field is optional and all given ones must hold: api ("openai" or
// "anthropic"), model (equal), contains (in the last user message), system (in the system
// prompt), schema (the structured output's name). reply has the fields of Reply: text, json,
// refusal, truncate, cached_tokens, status, retry_after and latency (Go durations such as
// "1.5s") and error (the message of an error reply). Unknown fields are errors.
func ParseRules(r io.Reader) ([]Rule, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var in []ruleJSON
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("decode rules: %w", err)
	}
	rules := make([]Rule, 0, len(in))
	for i, j := range in {
		rule, err := j.rule()
		if err != nil {
			return nil, fmt.Errorf("rule %d: %w", i, err)
		}
		rules = append(rules, rule)
	}
	return rules, nil
}

func (j ruleJSON) rule() (Rule, error) {
	var ms []Matcher
	m := j.Match
	switch m.API {
	case "":
	case OpenAI, Anthropic:
		ms = append(ms, APIIs(m.API))
	default:
		return Rule{}, fmt.Errorf("match.api %q: want %q or %q", m.API, OpenAI, Anthropic)
	}
	if m.Model != "" {
		ms = append(ms, ModelIs(m.Model))
	}
	if m.Contains != "" {
		ms = append(ms, Contains(m.Contains))
	}
	if m.System != "" {
		ms = append(ms, SystemContains(m.System))
	}
	if m.Schema != "" {
		ms = append(ms, SchemaIs(m.Schema))
	}
	rp := j.Reply
	reply := Reply{
		Text: rp.Text, JSON: rp.JSON, Refusal: rp.Refusal, Truncate: rp.Truncate,
		CachedTokens: rp.CachedTokens, Status: rp.Status, ErrorMessage: rp.Error,
	}
	if rp.Status != 0 && (rp.Status < 400 || rp.Status > 599) {
		return Rule{}, fmt.Errorf("reply.status %d: want an error status, 400 to 599", rp.Status)
	}
	if j.Times < 0 {
		return Rule{}, fmt.Errorf("times %d: want 0 (always) or more", j.Times)
	}
	var err error
	if reply.RetryAfter, err = duration("reply.retry_after", rp.RetryAfter); err != nil {
		return Rule{}, err
	}
	if reply.Latency, err = duration("reply.latency", rp.Latency); err != nil {
		return Rule{}, err
	}
	if reply.ChunkInterval, err = duration("reply.chunk_interval", rp.ChunkInterval); err != nil {
		return Rule{}, err
	}
	rule := Rule{Reply: reply, Times: j.Times}
	if len(ms) > 0 {
		rule.Match = All(ms...)
	}
	return rule, nil
}

func duration(field, s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%s %q: want a duration such as 500ms or 2s", field, s)
	}
	return d, nil
}
