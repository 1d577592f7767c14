package ddb_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/errs"
)

func TestItemKind(t *testing.T) {
	const p = "0b0e3c1e-6a4f-4f59-9a43-2f4b1b0e9d11"
	tests := []struct {
		pk, sk, want string
	}{
		{"P#" + p, "PROJECT", "project"},
		{"P#" + p, "KEY#k1", "key"},
		{"P#" + p, "PRICE#gpt-4o", "price"},
		{"P#" + p, "DAYS#TRACES", "time_index_days"},
		{"APIKEY#ab12", "APIKEY", "key_lookup"},
		{"FLINK#ab12", "FLINK", "feedback_link"},
		{"P#" + p + "#PROMPT#bot", "V#0000000001", "prompt"},
		{"P#" + p + "#PV#v1", "PV", "version_pointer"},
		{"P#" + p + "#S#s1", "SPAN", "span"},
		{"P#" + p + "#S#s1", "FB#u1", "feedback"},
		{"P#" + p + "#S#s1", "EVAL#j1", "evaluation"},
		{"P#" + p + "#S#s1", "CLAIM#j1", "claim"},
		{"P#" + p + "#T#t1", "M#1#b", "trace"},
		{"P#" + p + "#SE#s1", "SESSION", "session"},
		{"P#" + p + "#PC#bot", "1#b", "completions"},
		{"P#" + p + "#J#j1", "JUDGE", "judge"},
		{"P#" + p + "#OR#r1", "RUN", "optimization_run"},
		{"P#" + p + "#MC#h", "CALL", "model_call"},
		{"P#" + p + "#RL#3", "M#202601011200", "rate_limit"},
		{"P#" + p + "#LX#spans", "20261120", "list_index"},
		{"P#" + p + "#LX#traces#20261120", "abue81bj6r2k9egubeg0", "list_index"},
		{"P#" + p + "#LX", "SINCE", "list_index"},
		{"P#" + p + "#NEW#x", "X", "other"},
	}
	for _, tt := range tests {
		t.Run(tt.pk+" "+tt.sk, func(t *testing.T) {
			assert.Equal(t, tt.want, ddb.ItemKind(p, tt.pk, tt.sk))
		})
	}
}

// recordingBucket is a bucket with no objects that records the prefixes listed: this package's
// tests are about the table (cmd/plume/internal/admin deletes from the embedded S3).
type recordingBucket struct {
	mu     sync.Mutex
	listed []string
}

func (b *recordingBucket) List(_ context.Context, prefix string, _ func([]ddb.Object) error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.listed = append(b.listed, prefix)
	return nil
}

func (b *recordingBucket) Delete(context.Context, []string) error { return nil }

// projectItems is a full Scan's keys of the items naming project.
func projectItems(t *testing.T, client *dynamodb.Client, table, project string) []string {
	t.Helper()
	var out []string
	p := dynamodb.NewScanPaginator(client, &dynamodb.ScanInput{TableName: &table, ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		require.NoError(t, err)
		for _, item := range page.Items {
			pk := item["PK"].(*types.AttributeValueMemberS).Value
			sk := item["SK"].(*types.AttributeValueMemberS).Value
			owner, _ := item["project_id"].(*types.AttributeValueMemberS)
			if strings.Contains(pk, project) || (owner != nil && owner.Value == project) {
				out = append(out, pk+" "+sk)
			}
		}
	}
	return out
}

func TestDeleteProjectResumesTheScan(t *testing.T) {
	api := apitest.New(t, apitest.Options{})
	for _, tenant := range []apitest.Tenant{api.A, api.B} {
		version := api.EnsurePrompt(t, tenant, "bot", "Answer.")
		var spans []any
		for range 20 {
			spans = append(spans, apitest.LLMSpan(uuid.NewString(), uuid.NewString(), "", "bot", version, "q", "a", time.Now()))
		}
		api.MustDo(t, "POST", "/spans", tenant.Key, spans)
	}
	counter := &ddbtest.Counter{}
	client := ddbtest.Client(t, counter)
	a, b := api.A.ProjectID, api.B.ProjectID
	before, beforeB := projectItems(t, client, api.TableName, a), projectItems(t, client, api.TableName, b)
	all := len(projectItems(t, client, api.TableName, "")) // "": every item
	bucket := &recordingBucket{}
	deleter := ddb.NewProjectDeleter(client, api.TableName, bucket)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := deleter.Delete(ctx, a, ddb.DeleteOptions{Segments: 1, ScanLimit: 10, AfterBatch: func(kind string, n int) {
		if n == 8 {
			cancel()
		}
	}})
	require.ErrorIs(t, err, context.Canceled)
	left := projectItems(t, client, api.TableName, a)
	require.Contains(t, left, "DELETE#"+a+" DELETION")
	require.Greater(t, len(left), 1, "stopped half way")
	assert.Less(t, len(left), len(before))

	counter.Reset()
	res, err := deleter.Delete(context.Background(), a, ddb.DeleteOptions{ScanLimit: 10})
	require.NoError(t, err)
	assert.True(t, res.Resumed)
	assert.Empty(t, projectItems(t, client, api.TableName, a))
	assert.Equal(t, beforeB, projectItems(t, client, api.TableName, b))
	assert.Equal(t, ddb.ObjectPrefixes(a), bucket.listed[:len(ddb.ObjectPrefixes(a))], "the objects are deleted before the items")
	// The resumed Scan starts after the last key the first run recorded.
	assert.Less(t, res.Scanned, all)
	t.Logf("resumed: %s; scanned %d of %d items", counter, res.Scanned, all)

	_, err = deleter.Delete(context.Background(), a, ddb.DeleteOptions{})
	assert.Equal(t, errs.CodeNotFound, errs.CodeOf(err))
}
