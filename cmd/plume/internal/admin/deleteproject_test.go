package admin

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
	"github.com/plumehq/plume/internal/apitest"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/blob"
	"github.com/plumehq/plume/shared/blob/blobtest"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/projectdelete"
)

// deleteWorld is the API with two projects populated through it, A (to delete) and B.
type deleteWorld struct {
	api    *apitest.API
	ddb    *dynamodb.Client
	s3     *s3.Client
	counts *ddbtest.Counter
}

func newDeleteWorld(t *testing.T) *deleteWorld {
	t.Helper()
	api := apitest.New(t, apitest.Options{})
	counts := &ddbtest.Counter{}
	w := &deleteWorld{
		api: api, ddb: ddbtest.Client(t, counts), counts: counts,
		s3: blob.NewClient(aws.Config{
			Region:       "us-east-1",
			Credentials:  credentials.NewStaticCredentialsProvider(blobtest.AccessKey, blobtest.SecretKey, ""),
			BaseEndpoint: aws.String(api.S3URL),
		}, true),
	}
	for _, tenant := range []apitest.Tenant{api.A, api.B} {
		w.populate(t, tenant)
	}
	api.DrainStream(t) // the rollups and the list index, in the table and the bucket
	return w
}

// populate gives a project prompts, spans with attachments in a session, feedback, a judge with
// evaluations and a calibration, a feedback link, another key and a price.
func (w *deleteWorld) populate(t *testing.T, tenant apitest.Tenant) {
	t.Helper()
	api := w.api
	api.KeyFor(t, tenant, "carol")
	version := api.EnsurePrompt(t, tenant, "support-bot", "You answer support questions.")
	api.EnsurePrompt(t, tenant, "support-bot", "You answer support questions politely.")
	api.EnsurePrompt(t, tenant, "poet", "You write poems.")
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\nnot really a picture " + tenant.ProjectID))
	start := time.Now().Add(-time.Hour).Truncate(time.Second)
	session := uuid.NewString()
	var spans []string
	for i := range 30 {
		sp := apitest.LLMSpan(uuid.NewString(), uuid.NewString(), session, "support-bot", version, fmt.Sprintf("question %d", i), fmt.Sprintf("answer %d", i), start.Add(time.Duration(i)*time.Second))
		if i%3 == 0 {
			sp["attributes"].(map[string]any)["attachments"] = []any{map[string]any{"type": "image", "label": "chart", "base64": png}}
		}
		spans = append(spans, sp["id"].(string))
		api.MustDo(t, "POST", "/spans", tenant.Key, []any{sp})
	}
	for _, s := range spans[:5] {
		api.MustDo(t, "POST", "/v1/prompts/support-bot/completions/"+s+"/feedback", tenant.Key, map[string]any{"thumbs_up": true, "reason": "good"})
	}
	// Feedback on a span nobody ingested: it waits in the project's orphan partition.
	api.MustDo(t, "POST", "/v1/prompts/support-bot/completions/"+uuid.NewString()+"/feedback", tenant.Key, map[string]any{"thumbs_up": false})
	judge := api.MustDo(t, "POST", "/projects/"+tenant.ProjectID+"/judges", tenant.Key, map[string]any{
		"name": "Helpful", "evaluation_type": "binary", "template": "Is it good?\n{{input}}\n{{output}}",
	}).Map(t)["id"].(string)
	api.MustDo(t, "POST", "/projects/"+tenant.ProjectID+"/judges/"+judge+"/evaluations", tenant.Key, []any{
		map[string]any{"span_id": spans[1], "evaluation_result": true, "evaluation_reason": "helps"},
		map[string]any{"span_id": spans[2], "evaluation_result": false, "evaluation_reason": "does not"},
	})
	api.MustDo(t, "POST", "/v1/prompts/support-bot/completions/"+spans[1]+"/feedback", tenant.Key, map[string]any{"thumbs_up": false, "judge_id": judge})
	api.MustDo(t, "POST", "/feedback-links", tenant.Key, map[string]any{"prompt_slug": "support-bot", "link_type": "prompt_completion"})
}

// items returns every item of the table, by PK and SK, as JSON (a full Scan).
func (w *deleteWorld) items(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	p := dynamodb.NewScanPaginator(w.ddb, &dynamodb.ScanInput{TableName: &w.api.TableName, ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		require.NoError(t, err)
		for _, item := range page.Items {
			var m map[string]any
			require.NoError(t, attributevalue.UnmarshalMap(item, &m))
			b, err := json.Marshal(m)
			require.NoError(t, err)
			out[fmt.Sprint(m["PK"], " ", m["SK"])] = string(b)
		}
	}
	return out
}

// objects returns every object of the bucket with its size (a full listing).
func (w *deleteWorld) objects(t *testing.T) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	p := s3.NewListObjectsV2Paginator(w.s3, &s3.ListObjectsV2Input{Bucket: aws.String(blobtest.Bucket)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		require.NoError(t, err)
		for _, o := range page.Contents {
			out[aws.ToString(o.Key)] = aws.ToInt64(o.Size)
		}
	}
	return out
}

// of keeps the entries whose key or value names project.
func of[V any](m map[string]V, project string) map[string]V {
	out := map[string]V{}
	for k, v := range m {
		if strings.Contains(k, project) || strings.Contains(fmt.Sprint(v), project) {
			out[k] = v
		}
	}
	return out
}

func (w *deleteWorld) options(project string) (*deleteProjectOptions, *bytes.Buffer, *bytes.Buffer) {
	var out, errOut bytes.Buffer
	return &deleteProjectOptions{
		IO: &cmdutil.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, Format: cmdutil.FormatJSON},
		Deleter: func(context.Context) (*projectdelete.Deleter, error) {
			return projectdelete.New(ddb.NewProjectDeletionStore(w.ddb, w.api.TableName), &s3Bucket{api: w.s3, bucket: blobtest.Bucket}), nil
		},
		IsTerminal: func() bool { return false },
		ProjectID:  project, Yes: true, Segments: 3,
	}, &out, &errOut
}

type deleteOutput struct {
	projectdelete.Result
	Complete     bool `json:"complete"`
	TotalItems   int  `json:"total_items"`
	TotalObjects int  `json:"total_objects"`
}

func decodeDelete(t *testing.T, out *bytes.Buffer) deleteOutput {
	t.Helper()
	var res deleteOutput
	require.NoError(t, json.Unmarshal(out.Bytes(), &res), out.String())
	return res
}

func TestDeleteProject(t *testing.T) {
	w := newDeleteWorld(t)
	api := w.api
	a, b := api.A.ProjectID, api.B.ProjectID
	items, objects := w.items(t), w.objects(t)
	itemsA, objectsA := of(items, a), of(objects, a)
	itemsB, objectsB := of(items, b), of(objects, b)
	require.NotEmpty(t, objectsA)
	// Its list index runs are small here, so in the table (LX items); deletion takes both.
	require.True(t, slices.ContainsFunc(slices.Collect(maps.Keys(itemsA)), func(k string) bool {
		return strings.HasPrefix(k, "P#"+a+"#LX#")
	}), "and in the table")
	for k := range objectsA {
		assert.True(t, slices.ContainsFunc(projectdelete.ObjectPrefixes(a), func(p string) bool { return strings.HasPrefix(k, p) }),
			"object %s of the project is under one of ObjectPrefixes", k)
	}
	var bytesA int64
	for _, n := range objectsA {
		bytesA += n
	}

	t.Run("dry run counts and changes nothing", func(t *testing.T) {
		opts, out, _ := w.options(a)
		opts.DryRun, opts.Yes = true, false
		require.NoError(t, deleteProjectRun(context.Background(), opts))
		res := decodeDelete(t, out)
		assert.True(t, res.DryRun)
		assert.Equal(t, len(itemsA), res.TotalItems, "%v", res.Items)
		assert.Equal(t, len(objectsA), res.TotalObjects)
		assert.Equal(t, bytesA, res.TotalBytes())
		assert.Equal(t, items, w.items(t))
		assert.Equal(t, objects, w.objects(t))
	})

	t.Run("without --yes and no terminal it refuses", func(t *testing.T) {
		opts, _, _ := w.options(a)
		opts.Yes = false
		err := deleteProjectRun(context.Background(), opts)
		assert.True(t, cmdutil.IsFlagError(err), "%v", err)
		assert.Equal(t, items, w.items(t))
	})

	t.Run("an interrupted run resumes and completes", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		opts, out, _ := w.options(a)
		// Stop in the Scan phase, after the keys, the links and the objects are gone.
		opts.AfterBatch = func(kind string, n int) {
			if n == 12 {
				cancel()
			}
		}
		w.counts.Reset()
		err := deleteProjectRun(ctx, opts)
		require.ErrorIs(t, err, context.Canceled)
		first := decodeDelete(t, out)
		assert.False(t, first.Complete)
		t.Logf("interrupted run: %s", w.counts)
		left := of(w.items(t), a)
		require.NotEmpty(t, left, "the run stopped half way")
		assert.Contains(t, left, "DELETE#"+a+" DELETION", "the marker records the run")
		assert.Less(t, len(left), len(itemsA))

		_, err = auth.NewAuthenticator(ddb.NewAuthStore(api.Table), 0).Authenticate(context.Background(), "Bearer "+api.A.Key)
		assert.Error(t, err, "the project's keys stopped authenticating first")

		opts, out, _ = w.options(a)
		w.counts.Reset()
		require.NoError(t, deleteProjectRun(context.Background(), opts))
		second := decodeDelete(t, out)
		t.Logf("resumed run: %s", w.counts)
		assert.True(t, second.Resumed)
		assert.True(t, second.Complete)
		// The batches other segments had in flight when the context ended may have been
		// applied without being counted: at most one per segment.
		total := first.TotalItems + second.TotalItems
		assert.LessOrEqual(t, total, len(itemsA), "items: %v then %v", first.Items, second.Items)
		assert.GreaterOrEqual(t, total, len(itemsA)-opts.Segments*25, "items: %v then %v", first.Items, second.Items)

		assert.Empty(t, of(w.items(t), a), "a full Scan finds nothing of the project")
		assert.Empty(t, of(w.objects(t), a), "a full listing finds nothing of the project")
		assert.Equal(t, itemsB, of(w.items(t), b), "the other project's items are untouched")
		assert.Equal(t, objectsB, of(w.objects(t), b), "the other project's objects are untouched")
	})

	t.Run("the other project is still served", func(t *testing.T) {
		res := api.MustDo(t, "GET", "/v1/tasks/support-bot/prompt/latest", api.B.Key, nil).Map(t)
		assert.Contains(t, res["content"], "politely")
		spans := api.MustDo(t, "GET", "/spans?limit=100", api.B.Key, nil)
		assert.Contains(t, string(spans.Body), "question 29")
		links := api.MustDo(t, "GET", "/feedback-links", api.B.Key, nil).Map(t)
		assert.Equal(t, 1.0, links["count"])
	})

	t.Run("running again finds nothing", func(t *testing.T) {
		opts, _, _ := w.options(a)
		err := deleteProjectRun(context.Background(), opts)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "not found")
	})
}

// TestDeleteProjectCost is the request count of deleting a project: the numbers the report
// quotes.
func TestDeleteProjectCost(t *testing.T) {
	w := newDeleteWorld(t)
	a := w.api.A.ProjectID
	opts, out, _ := w.options(a)
	w.counts.Reset()
	require.NoError(t, deleteProjectRun(context.Background(), opts))
	res := decodeDelete(t, out)
	t.Logf("deleted %d items %v, %d objects %v", res.TotalItems, res.Items, res.TotalObjects, res.Objects)
	t.Logf("DynamoDB requests: %s", w.counts)
	counts := w.counts.Counts()
	assert.Equal(t, opts.Segments, counts["Scan"], "one Scan page per segment for a small table")
	// Full batches of 25, and part-filled ones where the Scan's segments and the list index's
	// partitions (manifests, inline runs, its start mark) end.
	assert.LessOrEqual(t, counts["BatchWriteItem"], res.TotalItems/25+30)
	assert.Empty(t, of(w.items(t), a))
}
