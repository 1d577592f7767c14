package trace_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/shared/blob"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/trace"
)

// TestIngestExtractsAttachments: ingestion stores the bytes apart, the stored record keeps only
// references, a re-sent span writes nothing new, and later attachments add to earlier ones.
func TestIngestExtractsAttachments(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	e, err := trace.NewExtractor(h.blobs, trace.ExtractorConfig{})
	require.NoError(t, err)
	svc := trace.NewService(h.store, h.blobs, nil, trace.WithExtractor(e))
	queries := trace.NewQueries(h.store, h.blobs)

	photo := []byte("\x89PNG\r\n\x1a\n the photo")
	b64 := base64.StdEncoding.EncodeToString(photo)
	sp := span(uuid.NewString(), "vision", nil, time.Now().UTC().Add(-time.Minute), 10)
	sp.Attributes = json.RawMessage(`{"model":"gpt-4o","attachments":[{"type":"image","label":"input","base64":"` + b64 + `"}]}`)
	sp.OutputData = new(`[{"type":"image_url","image_url":{"url":"data:image/png;base64,` + b64 + `"}}]`)

	stored, err := svc.Ingest(ctx, h.project, []trace.Span{sp})
	require.NoError(t, err)
	require.Len(t, stored, 1)
	require.Len(t, stored[0].Attachments, 2)
	assert.Equal(t, 3, h.s3Reqs.Count("PutObject"), "two attachments and the batch object")

	atts, err := queries.Attachments(ctx, h.project, sp.ID)
	require.NoError(t, err)
	require.Len(t, atts, 2)
	assert.Equal(t, trace.Attachment{
		Type: "image", Label: "input", Key: atts[0].Key, ContentType: "image/png", Size: int64(len(photo)),
	}, atts[0])
	assert.True(t, strings.HasPrefix(atts[0].Key, trace.AttachmentPrefix(h.project, sp.ID)), atts[0].Key)
	for _, a := range atts {
		body, err := h.blobs.(*blob.Store).Get(ctx, a.Key)
		require.NoError(t, err)
		assert.Equal(t, photo, body)
	}

	recs, _, err := queries.Spans(ctx, h.project, trace.SpanQuery{ID: sp.ID, Common: trace.Common{Limit: 1}})
	require.NoError(t, err)
	require.Len(t, recs, 1)
	raw, err := json.Marshal(recs[0])
	require.NoError(t, err)
	assert.NotContains(t, string(raw), b64, "the stored span has no inline bytes")
	assert.JSONEq(t, `{"model":"gpt-4o","attachments":[{"type":"image","label":"input","attachment":"`+name(atts[0].Key)+`"}]}`, string(recs[0].Attributes))

	t.Run("re-sent span", func(t *testing.T) {
		h.s3Reqs.Reset()
		again := sp
		again.UpdatedAt = sp.UpdatedAt.Add(time.Second)
		_, err := svc.Ingest(ctx, h.project, []trace.Span{again})
		require.NoError(t, err)
		got, err := queries.Attachments(ctx, h.project, sp.ID)
		require.NoError(t, err)
		assert.Equal(t, atts, got, "same keys")
	})

	t.Run("attach adds to the extracted ones", func(t *testing.T) {
		upload := trace.Attachment{Type: "file", Label: "report", Key: trace.UploadKey(h.project, sp.ID, "application/pdf"), ContentType: "application/pdf"}
		require.NoError(t, svc.Attach(ctx, h.project, sp.ID, upload))
		got, err := queries.Attachments(ctx, h.project, sp.ID)
		require.NoError(t, err)
		assert.Equal(t, append(append([]trace.Attachment{}, atts...), upload), got)

		// A later write of the span without attachments keeps them all.
		later := sp
		later.Attributes = json.RawMessage(`{"model":"gpt-4o"}`)
		later.OutputData = new("done")
		later.UpdatedAt = time.Now().UTC()
		_, err = svc.Ingest(ctx, h.project, []trace.Span{later})
		require.NoError(t, err)
		got, err = queries.Attachments(ctx, h.project, sp.ID)
		require.NoError(t, err)
		assert.Len(t, got, 3)

		recs, _, err := queries.Spans(ctx, h.project, trace.SpanQuery{ID: sp.ID, Common: trace.Common{Limit: 1}})
		require.NoError(t, err)
		assert.Equal(t, sp.Name, recs[0].Name, "attach changes nothing else")
		assert.Equal(t, "done", *recs[0].OutputData)
	})

	t.Run("unknown span and other project", func(t *testing.T) {
		_, err := queries.Attachments(ctx, h.project, uuid.NewString())
		assert.True(t, errs.Is(err, errs.CodeNotFound), "%v", err)
		_, err = queries.Attachments(ctx, uuid.NewString(), sp.ID)
		assert.True(t, errs.Is(err, errs.CodeNotFound), "%v", err)
		err = svc.Attach(ctx, uuid.NewString(), sp.ID, trace.Attachment{Key: "k"})
		assert.True(t, errs.Is(err, errs.CodeNotFound), "%v", err)
	})
}

func name(key string) string { return key[strings.LastIndex(key, "/")+1:] }
