package ddb

import (
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/trace"
)

func itemSize(av map[string]types.AttributeValue) int { return ddbtest.ItemSize(av) }

// TestSummaryItemUnderOneKB: a span summary at every bound (name, error code, tags, a 128-byte
// prompt slug, a content hash, token counts at trace.MaxTokens, the TTL of span retention) is
// still one write unit.
func TestSummaryItemUnderOneKB(t *testing.T) {
	uuid := "0f8fad5b-d9cb-469f-a165-70867728950e"
	tags := map[string]string{}
	for i := range 40 {
		tags[strings.Repeat(string(rune('a'+i%26)), 3)+string(rune('0'+i/26))] = strings.Repeat("v", 20)
	}
	end := time.Now()
	span := trace.Span{
		ID: uuid, TraceID: uuid, ParentSpanID: &uuid, Kind: trace.KindLLM, Name: strings.Repeat("n", trace.MaxNameLen),
		StartedAt: end.Add(-time.Hour), EndedAt: &end, DurationMS: new(3600000.123), Cost: new(12.345678901234),
		SessionID: &uuid, Status: new("error"), ErrorCode: new(strings.Repeat("E", 1024)), Tags: trace.TagsOf(tags),
		Link:      &trace.PromptLink{PromptSlug: strings.Repeat("s", 128), ContentHash: strings.Repeat("f", 64)},
		LLM:       &trace.LLMUsage{InputTokens: trace.MaxTokens, OutputTokens: trace.MaxTokens - 1},
		CreatedAt: end, UpdatedAt: end,
	}
	loc := trace.Location{Key: "spans/project=" + uuid + "/date=2026-11-22/hour=23/" + uuid + ".ndjson", Offset: 123456789, Length: 987654}
	sum := trace.Summarize(span, loc)
	sum.WriteID = uuid
	require.NotEmpty(t, sum.PromptSlug)
	it := toSummaryItem(uuid, sum)
	it.TTL = end.Add(3650 * 24 * time.Hour).Unix() // the longest retention
	item, err := marshal(it)
	require.NoError(t, err)
	require.Contains(t, item, "ps")
	require.Contains(t, item, "w")
	require.Contains(t, item, "ttl")
	require.Contains(t, item, "ti")
	require.Contains(t, item, "to")
	assert.LessOrEqual(t, itemSize(item), 1024, "span summary item size")
}
