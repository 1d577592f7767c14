package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api"
)

// TestDatasetUploadAndPull pushes a dataset too large for one request (10,000 rows of ~560
// bytes, 5 MB; 100,000 rows and 50 MB with PLUME_SCALE=1) through the upload path and pulls
// it page by page, counting DynamoDB and S3 requests: a page is one DynamoDB read and one
// ranged S3 GET, whatever the dataset's size.
func TestDatasetUploadAndPull(t *testing.T) {
	n := 10_000
	if os.Getenv("PLUME_SCALE") == "1" {
		n = 100_000
	}
	a, c, _ := served(t)
	ctx := context.Background()
	_, err := c.CreateDataset(ctx, "big", "")
	require.NoError(t, err)
	var buf bytes.Buffer
	filler := strings.Repeat("x", 520)
	for i := range n {
		fmt.Fprintf(&buf, `{"question":"q%d %s","answer":"%d"}`+"\n", i, filler, i)
	}
	require.Greater(t, buf.Len(), api.MaxDatasetPushBytes, "the upload path")

	a.DDB.Reset()
	a.S3.Reset()
	v, err := c.PushDataset(ctx, "big", buf.Bytes())
	require.NoError(t, err)
	assert.Equal(t, 1, v.VersionNumber)
	assert.Equal(t, n, v.RowCount)
	t.Logf("push of %d rows (%d bytes) through an upload: DynamoDB %s; S3 GetObject %d, PutObject %d", n, buf.Len(), a.DDB, a.S3.Count("GetObject"), a.S3.Count("PutObject"))
	assert.Equal(t, 1, a.S3.Count("GetObject"), "the upload is read once")
	assert.Equal(t, 2, a.S3.Count("PutObject"), "the version's object and its row index, once each")
	assert.Equal(t, 1, a.DDB.Counts()["TransactWriteItems"])

	a.DDB.Reset()
	a.S3.Reset()
	pages, rows := 0, 0
	for offset := 0; offset < n; pages++ {
		page, err := c.DatasetRows(ctx, "big", 1, offset, api.MaxDatasetRowsLimit)
		require.NoError(t, err)
		require.Equal(t, n, page.TotalRows)
		require.NotEmpty(t, page.Rows)
		var first struct{ Answer string }
		require.NoError(t, json.Unmarshal(page.Rows[0].Data, &first))
		require.Equal(t, fmt.Sprint(offset), first.Answer, "the page starts at its offset")
		offset += len(page.Rows)
		rows += len(page.Rows)
	}
	assert.Equal(t, n, rows)
	t.Logf("pull of %d rows in %d pages: DynamoDB %s; S3 GetObject %d", n, pages, a.DDB, a.S3.Count("GetObject"))
	assert.Equal(t, pages, a.DDB.Total(), "one DynamoDB read a page")
	assert.Equal(t, pages, a.S3.Count("GetObject"), "one ranged GET a page")

	// PullDataset reads the same rows; a push of the same rows keeps every row id.
	var ids []string
	_, err = c.PullDataset(ctx, "big", 1, func(r api.DatasetRow) error { ids = append(ids, r.RowID); return nil })
	require.NoError(t, err)
	require.Len(t, ids, n)
	v2, err := c.UploadDataset(ctx, "big", buf.Bytes())
	require.NoError(t, err)
	assert.Equal(t, 2, v2.VersionNumber)
	last, err := c.DatasetRows(ctx, "big", 2, n-1, 1)
	require.NoError(t, err)
	assert.Equal(t, ids[n-1], last.Rows[0].RowID, "an unchanged row keeps its id")
}
