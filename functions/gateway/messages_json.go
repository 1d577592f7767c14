package gateway

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/plumehq/plume/shared/llm/wire"
	"github.com/plumehq/plume/shared/trace"
)

// This file writes a translated Messages request (wire.MessagesRequest) as JSON by appending,
// byte for byte what json.Marshal writes of it (FuzzAppendMessagesRequest holds the two equal),
// without the reflection json.Marshal spends on every call (issue 31). The members are in the
// struct's order, with its omitempty rules; tool inputs and schemas, which the client wrote,
// are passed through json.Marshal as they were.

// appendMessagesRequest appends req as json.Marshal writes it; it fails where json.Marshal
// fails (a float that is not finite, a raw value that is not JSON).
func appendMessagesRequest(b []byte, req *wire.MessagesRequest) ([]byte, error) {
	var err error
	b = append(b, `{"model":`...)
	b = trace.AppendJSONString(b, req.Model)
	if len(req.System) > 0 {
		b = append(b, `,"system":`...)
		if b, err = appendMessagesBlocks(b, req.System); err != nil {
			return nil, err
		}
	}
	b = append(b, `,"messages":`...)
	if req.Messages == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, m := range req.Messages {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"role":`...)
			b = trace.AppendJSONString(b, m.Role)
			b = append(b, `,"content":`...)
			if b, err = appendMessagesBlocks(b, m.Content); err != nil {
				return nil, err
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = append(b, `,"max_tokens":`...)
	b = strconv.AppendInt(b, int64(req.MaxTokens), 10)
	for _, f := range []struct {
		name string
		v    *float64
	}{{`,"temperature":`, req.Temperature}, {`,"top_p":`, req.TopP}} {
		if f.v != nil {
			if b, err = appendJSONFloat(append(b, f.name...), *f.v); err != nil {
				return nil, err
			}
		}
	}
	if len(req.StopSequences) > 0 {
		b = append(b, `,"stop_sequences":[`...)
		for i, s := range req.StopSequences {
			if i > 0 {
				b = append(b, ',')
			}
			b = trace.AppendJSONString(b, s)
		}
		b = append(b, ']')
	}
	if len(req.Tools) > 0 {
		b = append(b, `,"tools":[`...)
		for i, t := range req.Tools {
			if i > 0 {
				b = append(b, ',')
			}
			b = trace.AppendJSONString(append(b, `{"name":`...), t.Name)
			if t.Description != "" {
				b = trace.AppendJSONString(append(b, `,"description":`...), t.Description)
			}
			if b, err = appendJSONRaw(append(b, `,"input_schema":`...), t.InputSchema); err != nil {
				return nil, err
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if c := req.ToolChoice; c != nil {
		b = trace.AppendJSONString(append(b, `,"tool_choice":{"type":`...), c.Type)
		if c.Name != "" {
			b = trace.AppendJSONString(append(b, `,"name":`...), c.Name)
		}
		if c.DisableParallelToolUse {
			b = append(b, `,"disable_parallel_tool_use":true`...)
		}
		b = append(b, '}')
	}
	if req.Metadata != nil {
		b = append(trace.AppendJSONString(append(b, `,"metadata":{"user_id":`...), req.Metadata.UserID), '}')
	}
	if req.Stream {
		b = append(b, `,"stream":true`...)
	}
	return append(b, '}'), nil
}

// appendMessagesBlocks appends content blocks, null for none (nil), as json.Marshal does.
func appendMessagesBlocks(b []byte, blocks []wire.MessagesBlock) ([]byte, error) {
	if blocks == nil {
		return append(b, "null"...), nil
	}
	var err error
	b = append(b, '[')
	for i := range blocks {
		k := &blocks[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = trace.AppendJSONString(append(b, `{"type":`...), k.Type)
		if k.Text != "" {
			b = trace.AppendJSONString(append(b, `,"text":`...), k.Text)
		}
		if s := k.Source; s != nil {
			b = trace.AppendJSONString(append(b, `,"source":{"type":`...), s.Type)
			for _, f := range [...]struct{ name, v string }{{`,"media_type":`, s.MediaType}, {`,"data":`, s.Data}, {`,"url":`, s.URL}} {
				if f.v != "" {
					b = trace.AppendJSONString(append(b, f.name...), f.v)
				}
			}
			b = append(b, '}')
		}
		for _, f := range [...]struct{ name, v string }{{`,"id":`, k.ID}, {`,"name":`, k.Name}} {
			if f.v != "" {
				b = trace.AppendJSONString(append(b, f.name...), f.v)
			}
		}
		if len(k.Input) > 0 {
			if b, err = appendJSONRaw(append(b, `,"input":`...), k.Input); err != nil {
				return nil, err
			}
		}
		if k.ToolUseID != "" {
			b = trace.AppendJSONString(append(b, `,"tool_use_id":`...), k.ToolUseID)
		}
		if len(k.Content) > 0 {
			if b, err = appendMessagesBlocks(append(b, `,"content":`...), k.Content); err != nil {
				return nil, err
			}
		}
		b = append(b, '}')
	}
	return append(b, ']'), nil
}

// appendJSONFloat appends f as json.Marshal writes a float64: without an exponent from 1e-6
// to 1e21 (json.Marshal itself writes the others).
func appendJSONFloat(b []byte, f float64) ([]byte, error) {
	if a := math.Abs(f); a == 0 || (a >= 1e-6 && a < 1e21) {
		return strconv.AppendFloat(b, f, 'f', -1, 64), nil
	}
	out, err := json.Marshal(f)
	return append(b, out...), err
}

// appendJSONRaw appends raw as json.Marshal writes a json.RawMessage: compacted, HTML escaped.
func appendJSONRaw(b []byte, raw json.RawMessage) ([]byte, error) {
	out, err := json.Marshal(raw)
	return append(b, out...), err
}
