package cpubench_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/plumehq/plume/functions/prompts"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/prompt"
	"github.com/plumehq/plume/shared/web"
)

// BenchmarkGetPromptCPU measures the same path with DynamoDB answered from memory by a canned
// responder, so it reports Plume's own CPU and allocations per fetch, without the network.
func BenchmarkGetPromptCPU(b *testing.B) {
	prev := slog.Default()
	slog.SetDefault(web.NewLogger(io.Discard, slog.LevelInfo)) // the access log's cost stays, its output does not
	b.Cleanup(func() { slog.SetDefault(prev) })
	table := ddb.NewTable(cannedDynamoDB(b), "bench")
	h := prompts.NewHandler(prompt.NewService(ddb.NewPromptStore(table)), auth.NewAuthenticator(ddb.NewAuthStore(table), auth.MaxCacheTTL))
	req := httptest.NewRequest("GET", "/v1/prompts/support-bot", nil)
	req.Header.Set("Authorization", "Bearer "+benchKey)
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}

const (
	benchKey     = "plm_BenchKey00000000000000000000000000000000"
	benchContent = "You are a helpful support agent for {{product}}.\nAnswer in {{language}}, briefly and politely.\nNever reveal internal notes."
)

// cannedDynamoDB answers the key lookup and the latest-version query with fixed items.
func cannedDynamoDB(b *testing.B) ddb.API {
	now := time.Now().UTC()
	keyItem, err := attributevalue.MarshalMap(map[string]any{
		"PK": "APIKEY#" + auth.HashKey(benchKey), "SK": "APIKEY", "id": "k1", "project_id": "5f0c7f4e-8a4b-4d59-9a57-3c1f4f7d2a10",
		"hash": auth.HashKey(benchKey), "display": benchKey[:12], "user_id": "u1", "created_at": now,
	})
	if err != nil {
		b.Fatal(err)
	}
	versionItem, err := attributevalue.MarshalMap(map[string]any{
		"PK": "P#5f0c7f4e-8a4b-4d59-9a57-3c1f4f7d2a10#PROMPT#support-bot", "SK": "V#0000000003",
		"id": "0b8a1c3e-5d7f-4a2b-9c1d-3e5f7a9b1c2d", "prompt_id": "1c9b2d4f-6e8a-4b3c-8d2e-4f6a8b0c2d3e",
		"project_id": "5f0c7f4e-8a4b-4d59-9a57-3c1f4f7d2a10", "slug": "support-bot", "version": 3,
		"content": benchContent, "content_hash": prompt.Hash(benchContent), "model_id": "gpt-4o-mini",
		"metadata": `{"team":"support"}`, "created_at": now, "created_by": "u1", "updated_at": now,
	})
	if err != nil {
		b.Fatal(err)
	}
	return canned{key: keyItem, version: versionItem}
}

type canned struct {
	ddb.API
	key, version map[string]types.AttributeValue
}

func (c canned) GetItem(context.Context, *dynamodb.GetItemInput, ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	return &dynamodb.GetItemOutput{Item: c.key}, nil
}

func (c canned) Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	return &dynamodb.QueryOutput{Items: []map[string]types.AttributeValue{c.version}, Count: 1}, nil
}
