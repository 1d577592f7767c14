package projectdelete_test

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
	"github.com/plumehq/plume/shared/projectdelete"
)

// recordingBucket is a bucket with no objects that records the prefixes listed: these tests
// are about the table (cmd/plume/internal/admin deletes from the embedded S3).
type recordingBucket struct {
	mu     sync.Mutex
	listed []string
}

func (b *recordingBucket) List(_ context.Context, prefix string, _ func([]projectdelete.Object) error) error {
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
	deleter := projectdelete.New(ddb.NewProjectDeletionStore(client, api.TableName), bucket)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := deleter.Delete(ctx, a, projectdelete.Options{Segments: 1, ScanLimit: 10, AfterBatch: func(kind string, n int) {
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
	res, err := deleter.Delete(context.Background(), a, projectdelete.Options{ScanLimit: 10})
	require.NoError(t, err)
	assert.True(t, res.Resumed)
	assert.Empty(t, projectItems(t, client, api.TableName, a))
	assert.Equal(t, beforeB, projectItems(t, client, api.TableName, b))
	assert.Equal(t, projectdelete.ObjectPrefixes(a), bucket.listed[:len(projectdelete.ObjectPrefixes(a))], "the objects are deleted before the items")
	// The resumed Scan starts after the last key the first run recorded.
	assert.Less(t, res.Scanned, all)
	t.Logf("resumed: %s; scanned %d of %d items", counter, res.Scanned, all)

	_, err = deleter.Delete(context.Background(), a, projectdelete.Options{})
	assert.Equal(t, errs.CodeNotFound, errs.CodeOf(err))
}
