package admin

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/spf13/cobra"

	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/blob"
	"github.com/plumehq/plume/shared/config"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/errs"
	"github.com/plumehq/plume/shared/projectdelete"
)

// deleteProjectTimeout is delete-project's limit when --timeout is not given: the Scan reads
// the whole table.
const deleteProjectTimeout = 6 * time.Hour

type deleteProjectOptions struct {
	IO      *cmdutil.IOStreams
	Deleter func(ctx context.Context) (*projectdelete.Deleter, error)
	// IsTerminal reports whether IO.In is a terminal, where a person can confirm.
	IsTerminal func() bool
	// AfterBatch is passed to the deletion (tests interrupt a run from it).
	AfterBatch func(kind string, batches int)

	ProjectID string
	DryRun    bool
	Yes       bool
	Grace     time.Duration
	Segments  int
}

func newCmdDeleteProject(f *cmdutil.Factory, t *target) *cobra.Command {
	opts := &deleteProjectOptions{IO: f.IO, IsTerminal: func() bool { return cmdutil.IsTerminal(f.IO.In) }}
	var bucket string
	opts.Deleter = func(ctx context.Context) (*projectdelete.Deleter, error) { return t.projectDeleter(ctx, bucket) }
	cmd := &cobra.Command{
		Use:   "delete-project --project-id ID [--dry-run] [--yes]",
		Short: "Delete a project: every item and object of it",
		Long: `Delete a project and everything of it: its keys (first, so that nothing new arrives),
feedback links, the objects under its prefixes in the bucket (span batches, attachments,
judge backfills, optimization checkpoints), and every item of the table whose key is the
project's (prompts, spans, feedback, evaluations, traces, sessions, judges, runs, caches,
counters ...). It prints what it deleted, by kind (with --output json, the counts).

After deleting the keys it waits --grace, the longest a running API trusts a key it has
already resolved, so that no request is still writing when the data goes.

Cost: the items are found by one parallel Scan of the whole table (--segments workers),
filtered on the project's keys: some of them (cached model calls) are in no index. A Scan reads
every item of every project, 0.5 read units per 4 KB; the summary reports what it read.
Deletes are BatchWriteItem requests of 25 items and DeleteObjects requests of 1,000 objects.

An interrupted run (an error, Ctrl-C, --timeout) leaves a marker item recording how far it
got; running the command again resumes there. --dry-run counts what would be deleted, with
the same reads, and changes nothing.

Without --yes it asks for the project id on the terminal, and refuses when standard input is
not one. It reads the table (--table or TABLE_NAME) and the bucket (--bucket or BUCKET_NAME)
with the AWS SDK's configuration from the environment. Without --timeout it stops after
` + deleteProjectTimeout.String() + `.`,
		Example: `  plume admin delete-project --project-id 0b0e3c1e-6a4f-4f59-9a43-2f4b1b0e9d11 --dry-run
  plume admin delete-project --project-id 0b0e3c1e-6a4f-4f59-9a43-2f4b1b0e9d11 --yes --output json`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := auth.ValidateProjectID(opts.ProjectID); err != nil {
				return cmdutil.FlagErrorWrap(err)
			}
			if opts.Grace < 0 {
				return cmdutil.FlagErrorf("--grace must not be negative, got %s", opts.Grace)
			}
			if opts.Segments < 1 || opts.Segments > 1000 {
				return cmdutil.FlagErrorf("--segments must be from 1 to 1000, got %d", opts.Segments)
			}
			var err error
			if bucket, err = bucketOf(f, bucket); err != nil {
				return err
			}
			ctx, cancel := longRunContext(cmd, f, deleteProjectTimeout)
			defer cancel()
			return deleteProjectRun(ctx, opts)
		},
	}
	cmd.Flags().StringVar(&opts.ProjectID, "project-id", "", "the project's `id` (required)")
	_ = cmd.MarkFlagRequired("project-id")
	cmd.Flags().BoolVar(&opts.DryRun, "dry-run", false, "count what would be deleted and delete nothing")
	cmd.Flags().BoolVar(&opts.Yes, "yes", false, "delete without asking for confirmation")
	cmd.Flags().StringVar(&bucket, "bucket", "", "S3 bucket `name` (default: $BUCKET_NAME)")
	cmd.Flags().DurationVar(&opts.Grace, "grace", auth.MaxCacheTTL, "wait this `duration` after deleting the keys, for cached keys to expire")
	cmd.Flags().IntVar(&opts.Segments, "segments", projectdelete.DefaultScanSegments, "parallel Scan segments (`n`); a resumed run keeps its first run's")
	return cmd
}

// projectDeleter is the composition root of delete-project: the table and the bucket.
func (t *target) projectDeleter(ctx context.Context, bucket string) (*projectdelete.Deleter, error) {
	client, name, err := t.client(ctx)
	if err != nil {
		return nil, err
	}
	api, err := t.s3Client(ctx)
	if err != nil {
		return nil, err
	}
	return projectdelete.New(ddb.NewProjectDeletionStore(client, name), &s3Bucket{api: api, bucket: bucket}), nil
}

// s3Client is S3 with the AWS SDK's configuration from the environment, path-style when an
// endpoint is given (gofakes3, MinIO, LocalStack).
func (t *target) s3Client(ctx context.Context) (*s3.Client, error) {
	awsCfg, err := config.AWS(ctx)
	if err != nil {
		return nil, errs.Invalid("%v", err)
	}
	custom := t.f.Getenv("AWS_ENDPOINT_URL_S3") != "" || t.f.Getenv("AWS_ENDPOINT_URL") != ""
	return blob.NewClient(awsCfg, custom), nil
}

func deleteProjectRun(ctx context.Context, opts *deleteProjectOptions) error {
	if !opts.DryRun && !opts.Yes {
		if err := confirmDeletion(opts); err != nil {
			return err
		}
	}
	deleter, err := opts.Deleter(ctx)
	if err != nil {
		return err
	}
	res, err := deleter.Delete(ctx, opts.ProjectID, projectdelete.Options{
		DryRun: opts.DryRun, Grace: opts.Grace, Segments: opts.Segments, AfterBatch: opts.AfterBatch,
		Progress: func(phase string) {
			switch phase {
			case "wait":
				if opts.Grace > 0 {
					opts.IO.Infof("Keys deleted; waiting up to %s for cached keys to expire.", opts.Grace)
				}
			case "items":
				opts.IO.Infof("Scanning the table for the project's items.")
			}
		},
	})
	if res == nil {
		return err
	}
	if werr := writeDeleteResult(opts.IO, res, err == nil); werr != nil {
		return werr
	}
	if err != nil {
		if !opts.DryRun {
			opts.IO.Infof("The deletion stopped; run the command again to finish it.")
		}
		return err
	}
	return nil
}

// confirmDeletion asks for the project id on the terminal.
func confirmDeletion(opts *deleteProjectOptions) error {
	if opts.IsTerminal == nil || !opts.IsTerminal() {
		return cmdutil.FlagErrorf("refusing to delete project %s without confirmation: standard input is not a terminal; pass --yes", opts.ProjectID)
	}
	fmt.Fprintf(opts.IO.ErrOut, "This deletes project %s: every key, prompt, span, trace, feedback and object of it. It cannot be undone.\nType the project id to confirm: ", opts.ProjectID)
	line, err := bufio.NewReader(opts.IO.In).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("read confirmation: %w", err)
	}
	if strings.TrimSpace(line) != opts.ProjectID {
		return cmdutil.FlagErrorf("not confirmed: nothing deleted")
	}
	return nil
}

// deleteSummary is the JSON output of delete-project.
type deleteSummary struct {
	*projectdelete.Result
	Complete     bool  `json:"complete"`
	TotalItems   int   `json:"total_items"`
	TotalObjects int   `json:"total_objects"`
	TotalBytes   int64 `json:"total_bytes"`
}

func writeDeleteResult(io *cmdutil.IOStreams, res *projectdelete.Result, complete bool) error {
	if io.JSON() {
		return io.WriteJSON(deleteSummary{Result: res, Complete: complete,
			TotalItems: res.TotalItems(), TotalObjects: res.TotalObjects(), TotalBytes: res.TotalBytes()})
	}
	verb := "Deleted"
	switch {
	case res.DryRun:
		verb = "Would delete"
	case !complete:
		verb = "Deleted before stopping"
	}
	resumed := ""
	if res.Resumed && !res.DryRun {
		resumed = " (resumed)"
	}
	fmt.Fprintf(io.Out, "%s %d items and %d objects (%d bytes) of project %s%s.\n",
		verb, res.TotalItems(), res.TotalObjects(), res.TotalBytes(), res.ProjectID, resumed)
	w := tabwriter.NewWriter(io.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "KIND\tCOUNT\tBYTES")
	for _, kind := range sortedByCount(res.Items) {
		fmt.Fprintf(w, "item %s\t%d\t-\n", kind, res.Items[kind])
	}
	for _, kind := range sortedByCount(res.Objects) {
		fmt.Fprintf(w, "object %s\t%d\t%d\n", kind, res.Objects[kind], res.Bytes[kind])
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if res.Scanned > 0 || res.ScanUnits > 0 {
		_, err := fmt.Fprintf(io.Out, "The Scan read %d items of the table (%.1f read units).\n", res.Scanned, res.ScanUnits)
		return err
	}
	return nil
}

// sortedByCount orders kinds by count, most first, then by name; kinds with none are left out.
func sortedByCount(m map[string]int) []string {
	kinds := slices.DeleteFunc(slices.Collect(maps.Keys(m)), func(k string) bool { return m[k] == 0 })
	slices.SortFunc(kinds, func(a, b string) int { return cmp.Or(cmp.Compare(m[b], m[a]), cmp.Compare(a, b)) })
	return kinds
}

// s3API is what s3Bucket needs of S3.
type s3API interface {
	ListObjectsV2(context.Context, *s3.ListObjectsV2Input, ...func(*s3.Options)) (*s3.ListObjectsV2Output, error)
	DeleteObjects(context.Context, *s3.DeleteObjectsInput, ...func(*s3.Options)) (*s3.DeleteObjectsOutput, error)
}

// s3Bucket lists and deletes objects of one bucket for projectdelete.Deleter. It needs
// s3:ListBucket and s3:DeleteObject.
type s3Bucket struct {
	api    s3API
	bucket string
}

var _ projectdelete.Bucket = (*s3Bucket)(nil)

// List implements projectdelete.Bucket with ListObjectsV2, 1,000 keys a page.
func (b *s3Bucket) List(ctx context.Context, prefix string, page func([]projectdelete.Object) error) error {
	if prefix == "" {
		return errs.Invalid("refusing to list the whole bucket")
	}
	pages := s3.NewListObjectsV2Paginator(b.api, &s3.ListObjectsV2Input{Bucket: &b.bucket, Prefix: &prefix, MaxKeys: aws.Int32(1000)})
	for pages.HasMorePages() {
		out, err := pages.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("list objects under %q: %w", prefix, err)
		}
		objects := make([]projectdelete.Object, 0, len(out.Contents))
		for _, o := range out.Contents {
			objects = append(objects, projectdelete.Object{Key: aws.ToString(o.Key), Size: aws.ToInt64(o.Size)})
		}
		if err := page(objects); err != nil {
			return err
		}
	}
	return nil
}

// Delete implements projectdelete.Bucket with one DeleteObjects request (quiet: only failures come
// back, and any is an error).
func (b *s3Bucket) Delete(ctx context.Context, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	ids := make([]s3types.ObjectIdentifier, len(keys))
	for i, k := range keys {
		ids[i] = s3types.ObjectIdentifier{Key: aws.String(k)}
	}
	out, err := b.api.DeleteObjects(ctx, &s3.DeleteObjectsInput{
		Bucket: &b.bucket, Delete: &s3types.Delete{Objects: ids, Quiet: aws.Bool(true)},
	})
	if err != nil {
		return fmt.Errorf("delete %d objects: %w", len(keys), err)
	}
	if len(out.Errors) > 0 {
		e := out.Errors[0]
		return fmt.Errorf("delete %d objects: %d failed, the first %q: %s %s", len(keys), len(out.Errors),
			aws.ToString(e.Key), aws.ToString(e.Code), aws.ToString(e.Message))
	}
	return nil
}
