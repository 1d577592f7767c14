package ddb_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
