package ddb_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/internal/faultproxy"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/ddb/ddbtest"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/prompt"
)

func newPromptService(t *testing.T) (*prompt.Service, *ddb.PromptStore, *ddbtest.Counter) {
	t.Helper()
	client, counter, name := ddbtest.NewTable(t)
	store := ddb.NewPromptStore(ddb.NewTable(client, name))
	return prompt.NewService(store), store, counter
}

func ptr[T any](v T) *T { return &v }

func TestEnsureConcurrentSameContent(t *testing.T) {
	svc, store, _ := newPromptService(t)
	ctx := context.Background()
	project := uuid.NewString()

	const n = 50
	ids := make([]string, n)
	created := make([]bool, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			v, c, err := svc.Ensure(ctx, project, "support-bot", prompt.EnsureInput{Content: ptr("You are helpful.")}, "u1")
			assert.NoError(t, err)
			ids[i], created[i] = v.ID, c
		})
	}
	wg.Wait()

	versions, err := store.Versions(ctx, project, "support-bot")
	require.NoError(t, err)
	require.Len(t, versions, 1, "one content must give exactly one version")
	assert.Equal(t, 1, versions[0].Number)
	creators := 0
	for i := range n {
		assert.Equal(t, versions[0].ID, ids[i], "caller %d got another id", i)
		if created[i] {
			creators++
		}
	}
	assert.Equal(t, 1, creators, "exactly one caller creates the version")
}

func TestEnsureConcurrentDistinctContents(t *testing.T) {
	svc, store, _ := newPromptService(t)
	ctx := context.Background()
	project := uuid.NewString()

	const n = 50
	numbers := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			v, created, err := svc.Ensure(ctx, project, "support-bot", prompt.EnsureInput{Content: ptr(fmt.Sprintf("prompt text %d", i))}, "u1")
			assert.NoError(t, err)
			assert.True(t, created)
			numbers[i] = v.Number
		})
	}
	wg.Wait()

	versions, err := store.Versions(ctx, project, "support-bot")
	require.NoError(t, err)
	require.Len(t, versions, n)
	seen := map[int]bool{}
	hashes := map[string]bool{}
	for i, v := range versions {
		assert.Equal(t, i+1, v.Number, "versions are 1..%d in order with no gaps", n)
		hashes[v.ContentHash] = true
	}
	for _, num := range numbers {
		assert.False(t, seen[num], "version %d returned twice", num)
		seen[num] = true
	}
	assert.Len(t, hashes, n)
	latest, err := store.LatestVersion(ctx, project, "support-bot")
	require.NoError(t, err)
	assert.Equal(t, n, latest.Number)
	tags, err := store.Tags(ctx, project, "support-bot")
	require.NoError(t, err)
	assert.Equal(t, prompt.Tag{Name: "latest", Version: n, VersionID: latest.ID, UpdatedAt: tags[0].UpdatedAt}, tags[0])
}

func TestPromptStoreNotFound(t *testing.T) {
	svc, _, _ := newPromptService(t)
	ctx := context.Background()
	project := uuid.NewString()
	_, _, err := svc.Ensure(ctx, project, "known", prompt.EnsureInput{Content: ptr("hello")}, "u1")
	require.NoError(t, err)

	tests := []struct {
		name string
		call func() error
	}{
		{"latest of unknown prompt", func() error { _, err := svc.Latest(ctx, project, "unknown"); return err }},
		{"unknown version", func() error { _, err := svc.Get(ctx, project, "known", prompt.Selector{Number: 9}); return err }},
		{"unknown tag", func() error { _, err := svc.Get(ctx, project, "known", prompt.Selector{Tag: "production"}); return err }},
		{"tag of unknown prompt", func() error {
			_, err := svc.Get(ctx, project, "unknown", prompt.Selector{Tag: "production"})
			return err
		}},
		{"unknown hash", func() error { _, err := svc.ByHash(ctx, project, "known", prompt.Hash("other")); return err }},
		{"pin unknown version", func() error { _, err := svc.Pin(ctx, project, "known", "production", 2, "u1"); return err }},
		{"pin unknown prompt", func() error { _, err := svc.Pin(ctx, project, "unknown", "production", 1, "u1"); return err }},
		{"versions of unknown prompt", func() error { _, err := svc.Versions(ctx, project, "unknown"); return err }},
		{"tags of unknown prompt", func() error { _, err := svc.Tags(ctx, project, "unknown"); return err }},
		{"bind unknown version", func() error { _, err := svc.BindModel(ctx, project, "known", 3, ptr("gpt-4o"), "u1"); return err }},
		{"model of unknown version", func() error { _, err := svc.Model(ctx, project, uuid.NewString()); return err }},
		{"another project's prompt", func() error { _, err := svc.Latest(ctx, uuid.NewString(), "known"); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			require.Error(t, err)
			assert.Equal(t, errs.CodeNotFound, errs.CodeOf(err), "error: %v", err)
		})
	}
}

func TestRequestsPerOperation(t *testing.T) {
	svc, _, counter := newPromptService(t)
	ctx := context.Background()
	project := uuid.NewString()
	_, _, err := svc.Ensure(ctx, project, "p", prompt.EnsureInput{Content: ptr("v1")}, "u")
	require.NoError(t, err)
	_, err = svc.Pin(ctx, project, "p", "production", 1, "u")
	require.NoError(t, err)

	tests := []struct {
		name string
		call func() error
		want map[string]int
	}{
		{"ensure new content", func() error {
			_, _, err := svc.Ensure(ctx, project, "p", prompt.EnsureInput{Content: ptr("v2")}, "u")
			return err
		}, map[string]int{"BatchGetItem": 1, "TransactWriteItems": 1}},
		{"ensure existing content", func() error {
			_, _, err := svc.Ensure(ctx, project, "p", prompt.EnsureInput{Content: ptr("v1")}, "u")
			return err
		}, map[string]int{"BatchGetItem": 1, "GetItem": 1}},
		{"get latest", func() error { _, err := svc.Get(ctx, project, "p", prompt.Selector{}); return err },
			map[string]int{"Query": 1}},
		{"get by tag", func() error { _, err := svc.Get(ctx, project, "p", prompt.Selector{Tag: "production"}); return err },
			map[string]int{"BatchGetItem": 1, "GetItem": 1}},
		{"get by number", func() error { _, err := svc.Get(ctx, project, "p", prompt.Selector{Number: 1}); return err },
			map[string]int{"BatchGetItem": 1}},
		{"tags", func() error { _, err := svc.Tags(ctx, project, "p"); return err }, map[string]int{"Query": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			counter.Reset()
			require.NoError(t, tt.call())
			assert.Equal(t, tt.want, counter.Counts())
		})
	}
}

func TestBindModelUpdatesPointer(t *testing.T) {
	svc, _, _ := newPromptService(t)
	ctx := context.Background()
	project := uuid.NewString()
	v, _, err := svc.Ensure(ctx, project, "p", prompt.EnsureInput{Content: ptr("hi"), ModelID: ptr("gpt-4o-mini")}, "u")
	require.NoError(t, err)

	b, err := svc.Model(ctx, project, v.ID)
	require.NoError(t, err)
	assert.Equal(t, ptr("gpt-4o-mini"), b.ModelID)
	assert.Equal(t, ptr("openai"), b.Provider)

	bound, err := svc.BindModel(ctx, project, "p", 1, ptr("anthropic/claude-3-5-sonnet"), "u2")
	require.NoError(t, err)
	assert.Equal(t, "u2", bound.UpdatedBy)
	b, err = svc.Model(ctx, project, v.ID)
	require.NoError(t, err)
	assert.Equal(t, ptr("anthropic/claude-3-5-sonnet"), b.ModelID)
	assert.Equal(t, ptr("anthropic"), b.Provider)

	_, err = svc.BindModel(ctx, project, "p", 1, nil, "u2")
	require.NoError(t, err)
	b, err = svc.Model(ctx, project, v.ID)
	require.NoError(t, err)
	assert.Nil(t, b.ModelID)
	assert.Nil(t, b.Provider)
	got, err := svc.Get(ctx, project, "p", prompt.Selector{Number: 1})
	require.NoError(t, err)
	assert.Nil(t, got.ModelID)
	assert.WithinDuration(t, time.Now(), got.UpdatedAt, time.Minute)
}

// TestEnsurePinned: a pinned ensure of new content writes the version and the pin in one
// transaction, so a tag that moved refuses both (no new version, latest where it was); content
// that has a version already is pinned under the same precondition, without a new version.
func TestEnsurePinned(t *testing.T) {
	svc, _, counter := newPromptService(t)
	ctx := context.Background()

	tests := []struct {
		name      string
		content   string
		tag       string
		expected  int
		wantErr   string // the conflict's message; empty: success
		want      int    // the version pinned
		previous  int
		versions  int // how many versions the prompt has after
		wantCalls map[string]int
	}{
		{name: "new content, tag at expected", content: "three", tag: "production", expected: 1,
			want: 3, previous: 1, versions: 3, wantCalls: map[string]int{"BatchGetItem": 1, "TransactWriteItems": 1}},
		{name: "new content, new tag", content: "three", tag: "staging", expected: 0,
			want: 3, previous: 0, versions: 3, wantCalls: map[string]int{"BatchGetItem": 1, "TransactWriteItems": 1}},
		{name: "new content, tag elsewhere", content: "three", tag: "production", expected: 2,
			wantErr: `tag "production" of prompt "p" is at version 1 (expected it to be at version 2)`, versions: 2},
		{name: "new content, tag expected not to exist", content: "three", tag: "production", expected: 0,
			wantErr: `tag "production" of prompt "p" is at version 1 (expected it not to exist)`, versions: 2},
		{name: "new content, tag expected but missing", content: "three", tag: "staging", expected: 1,
			wantErr: `tag "staging" of prompt "p" does not exist (expected it to be at version 1)`, versions: 2},
		{name: "existing content, tag at expected", content: "two", tag: "production", expected: 1,
			want: 2, previous: 1, versions: 2, wantCalls: map[string]int{"BatchGetItem": 1, "GetItem": 1, "PutItem": 1}},
		{name: "existing content, tag there already", content: "one", tag: "production", expected: 2,
			want: 1, previous: 1, versions: 2},
		{name: "existing content, tag elsewhere", content: "two", tag: "production", expected: 2,
			wantErr: `tag "production" of prompt "p" is at version 1 (expected it to be at version 2)`, versions: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Versions 1 ("one") and 2 ("two"), production at 1.
			project := uuid.NewString()
			for _, c := range []string{"one", "two"} {
				_, _, err := svc.Ensure(ctx, project, "p", prompt.EnsureInput{Content: ptr(c)}, "u")
				require.NoError(t, err)
			}
			_, err := svc.Pin(ctx, project, "p", "production", 1, "u")
			require.NoError(t, err)
			before, err := svc.Tags(ctx, project, "p")
			require.NoError(t, err)

			counter.Reset()
			v, res, err := svc.EnsurePinned(ctx, project, "p", prompt.EnsureInput{Content: ptr(tt.content)}, tt.tag, tt.expected, "u2")
			calls := counter.Counts()

			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Equal(t, errs.CodeConflict, errs.CodeOf(err), "error: %v", err)
				assert.EqualError(t, err, "conflict: "+tt.wantErr)
				after, err := svc.Tags(ctx, project, "p")
				require.NoError(t, err)
				assert.Equal(t, before, after, "latest and every tag where they were")
			} else {
				require.NoError(t, err)
				assert.Equal(t, tt.content, v.Content)
				assert.Equal(t, tt.want, v.Number)
				assert.Equal(t, prompt.PinResult{Tag: prompt.Tag{Name: tt.tag, Version: tt.want, VersionID: v.ID, UpdatedAt: res.Tag.UpdatedAt, UpdatedBy: "u2"},
					Slug: "p", Previous: tt.previous}, res)
				served, err := svc.Get(ctx, project, "p", prompt.Selector{Tag: tt.tag})
				require.NoError(t, err)
				assert.Equal(t, v.ID, served.ID)
			}
			if tt.wantCalls != nil {
				assert.Equal(t, tt.wantCalls, calls)
			}
			versions, err := svc.Versions(ctx, project, "p")
			require.NoError(t, err)
			assert.Len(t, versions, tt.versions)
			latest, err := svc.Latest(ctx, project, "p")
			require.NoError(t, err)
			assert.Equal(t, tt.versions, latest.Number)
			_, err = svc.ByHash(ctx, project, "p", prompt.Hash(tt.content))
			if tt.versions == 2 && tt.content == "three" {
				assert.Equal(t, errs.CodeNotFound, errs.CodeOf(err), "a refused pin leaves no version of its content: %v", err)
			} else {
				assert.NoError(t, err)
			}
		})
	}
}

// TestEnsurePinnedConcurrent: deploys of different contents racing from the same production
// version: exactly one creates its version and pins it; the others are refused and create
// nothing, so the numbers stay gap-free.
func TestEnsurePinnedConcurrent(t *testing.T) {
	svc, _, _ := newPromptService(t)
	ctx := context.Background()
	project := uuid.NewString()
	_, _, err := svc.Ensure(ctx, project, "p", prompt.EnsureInput{Content: ptr("base")}, "u")
	require.NoError(t, err)
	_, err = svc.Pin(ctx, project, "p", "production", 1, "u")
	require.NoError(t, err)

	const n = 20
	var wg sync.WaitGroup
	results := make([]error, n)
	pinned := make([]prompt.Version, n)
	for i := range n {
		wg.Go(func() {
			pinned[i], _, results[i] = svc.EnsurePinned(ctx, project, "p", prompt.EnsureInput{Content: ptr(fmt.Sprintf("candidate %d", i))}, "production", 1, "u")
		})
	}
	wg.Wait()

	var winner prompt.Version
	wins := 0
	for i, err := range results {
		if err == nil {
			wins++
			winner = pinned[i]
			continue
		}
		assert.Equal(t, errs.CodeConflict, errs.CodeOf(err), "caller %d: %v", i, err)
	}
	require.Equal(t, 1, wins, "exactly one deploy wins")
	versions, err := svc.Versions(ctx, project, "p")
	require.NoError(t, err)
	assert.Len(t, versions, 2, "the winner's version and no other")
	latest, err := svc.Latest(ctx, project, "p")
	require.NoError(t, err)
	assert.Equal(t, len(versions), latest.Number, "gap-free")
	assert.Equal(t, winner.ID, latest.ID)
	prod, err := svc.Get(ctx, project, "p", prompt.Selector{Tag: "production"})
	require.NoError(t, err)
	assert.Equal(t, winner.ID, prod.ID)
}

// TestEnsurePinnedInvalid: a pin that could never be made is refused before anything is
// written.
func TestEnsurePinnedInvalid(t *testing.T) {
	svc, _, counter := newPromptService(t)
	ctx := context.Background()
	project := uuid.NewString()

	tests := []struct {
		name     string
		tag      string
		expected int
	}{
		{"latest is reserved", "latest", 0},
		{"bad tag", "Not A Tag!", 0},
		{"negative expected version", "production", -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			counter.Reset()
			_, _, err := svc.EnsurePinned(ctx, project, "p", prompt.EnsureInput{Content: ptr("text")}, tt.tag, tt.expected, "u")
			assert.Equal(t, errs.CodeInvalid, errs.CodeOf(err), "error: %v", err)
			assert.Zero(t, counter.Total(), "no request")
		})
	}
}

// TestEnsurePinnedAnswerLost: the transaction of a pinned ensure takes effect but its answer is
// lost, and the SDK sends it again with the same client request token, which DynamoDB answers
// as the first attempt: the pinned ensure succeeds, with one version, pinned.
func TestEnsurePinnedAnswerLost(t *testing.T) {
	client, _, table := ddbtest.NewTable(t)
	p := faultproxy.New(t, ddbtest.Endpoint(t))
	viaProxy := dynamodb.New(client.Options(), func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(p.URL())
	})
	svc := prompt.NewService(ddb.NewPromptStore(ddb.NewTable(viaProxy, table)))
	ctx := context.Background()
	project := uuid.NewString()
	_, _, err := svc.Ensure(ctx, project, "p", prompt.EnsureInput{Content: ptr("one")}, "u")
	require.NoError(t, err)
	_, err = svc.Pin(ctx, project, "p", "production", 1, "u")
	require.NoError(t, err)
	p.Reset()
	p.Fail(faultproxy.Rule{Op: "TransactWriteItems", Fault: faultproxy.DropAfterForward})

	v, res, err := svc.EnsurePinned(ctx, project, "p", prompt.EnsureInput{Content: ptr("two")}, "production", 1, "u")
	require.NoError(t, err)
	assert.Equal(t, 2, v.Number)
	assert.Equal(t, 2, res.Tag.Version)
	assert.Equal(t, 1, res.Previous)
	assert.Equal(t, 2, p.Count("TransactWriteItems"), "the first attempt, then the SDK's retry")
	versions, err := svc.Versions(ctx, project, "p")
	require.NoError(t, err)
	assert.Len(t, versions, 2)
	prod, err := svc.Get(ctx, project, "p", prompt.Selector{Tag: "production"})
	require.NoError(t, err)
	assert.Equal(t, v.ID, prod.ID)
}
