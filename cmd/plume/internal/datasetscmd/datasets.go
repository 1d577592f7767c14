// Package datasetscmd holds `plume datasets` and `plume experiments`: versioned datasets
// (list, show, push, pull, versions) and the experiments run on them (list, show, results).
package datasetscmd

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
)

// NewCmdDatasets returns the `plume datasets` command group.
func NewCmdDatasets(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "datasets <command>",
		Short: "List, show, push and pull versioned datasets",
		Args:  cmdutil.NoArgs,
		RunE:  cmdutil.ShowHelp,
	}
	cmd.AddCommand(newCmdList(f), newCmdShow(f), newCmdPush(f), newCmdPull(f), newCmdVersions(f))
	return cmd
}

var datasetCols = cmdutil.Cols("name", "version_number", "row_count", "description", "created_at")

// pageFlags are --limit and --cursor of a list read a page at a time.
func pageFlags(cmd *cobra.Command, o *client.PageOptions) {
	cmd.Flags().IntVar(&o.Limit, "limit", 0, "how many records the server answers (0: its default)")
	cmd.Flags().StringVar(&o.Cursor, "cursor", "", "the next_cursor of the previous page")
}

// printPage prints a page's records and says how to read on.
func printPage(f *cmdutil.Factory, rows any, cols []cmdutil.Column, next *string) error {
	if err := f.IO.PrintList(rows, cols, &cmdutil.ListOptions{}); err != nil {
		return err
	}
	if next != nil {
		f.IO.Infof("More: --cursor %s", *next)
	}
	return nil
}

func newCmdList(f *cmdutil.Factory) *cobra.Command {
	var o client.PageOptions
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the project's datasets by name",
		Args:  cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.WithClient(cmd, nil, false, func(ctx context.Context, c *client.Client) error {
				list, err := c.Datasets(ctx, o)
				if err != nil {
					return err
				}
				if f.IO.JSON() {
					return f.IO.WriteJSON(list)
				}
				return printPage(f, list.Datasets, datasetCols, list.NextCursor)
			})
		},
	}
	pageFlags(cmd, &o)
	return cmd
}

func newCmdShow(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "show <name>",
		Short: "Show a dataset",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.WithClient(cmd, nil, false, func(ctx context.Context, c *client.Client) error {
				d, err := c.Dataset(ctx, args[0])
				if err != nil {
					return err
				}
				return f.IO.PrintItem(d, append(cmdutil.Cols("id"), datasetCols...))
			})
		},
	}
}

func newCmdVersions(f *cmdutil.Factory) *cobra.Command {
	var o client.PageOptions
	cmd := &cobra.Command{
		Use:   "versions <name>",
		Short: "List a dataset's versions, newest first",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.WithClient(cmd, nil, false, func(ctx context.Context, c *client.Client) error {
				list, err := c.DatasetVersions(ctx, args[0], o)
				if err != nil {
					return err
				}
				if f.IO.JSON() {
					return f.IO.WriteJSON(list)
				}
				return printPage(f, list.Versions, cmdutil.Cols("version_number", "id", "row_count", "bytes", "created_at"), list.NextCursor)
			})
		},
	}
	pageFlags(cmd, &o)
	return cmd
}

func newCmdPush(f *cmdutil.Factory) *cobra.Command {
	var create bool
	var description string
	cmd := &cobra.Command{
		Use:   "push <name> <file.ndjson|->",
		Short: "Push every row of an NDJSON file (one JSON object a line) as the dataset's next version",
		Long: `Push the rows of an NDJSON file (- reads stdin) as the dataset's next version. A file
too large for one request goes through a presigned upload. --create creates the dataset first
when it does not exist.`,
		Example: `  plume datasets push capitals rows.ndjson --create
  plume datasets pull capitals --version 1 > v1.ndjson`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			data, err := readInput(f.IO.In, args[1])
			if err != nil {
				return cmdutil.FlagErrorWrap(err)
			}
			return f.WithClient(cmd, nil, false, func(ctx context.Context, c *client.Client) error {
				if create {
					if _, err := c.CreateDataset(ctx, args[0], description); err != nil && !errors.Is(err, client.ErrConflict) {
						return err
					}
				}
				v, err := c.PushDataset(ctx, args[0], data)
				if err != nil {
					return err
				}
				return f.IO.PrintItem(v, cmdutil.Cols("version_number", "id", "row_count", "bytes", "created_at"))
			})
		},
	}
	cmd.Flags().BoolVar(&create, "create", false, "create the dataset when it does not exist")
	cmd.Flags().StringVar(&description, "description", "", "the `text` describing a dataset --create makes")
	return cmd
}

func newCmdPull(f *cmdutil.Factory) *cobra.Command {
	var version int
	cmd := &cobra.Command{
		Use:   "pull <name>",
		Short: "Print every row of a version (the latest by default) as NDJSON: {row_id, data} a line",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if version < 0 {
				return cmdutil.FlagErrorf("--version must be positive")
			}
			return f.WithClient(cmd, nil, false, func(ctx context.Context, c *client.Client) error {
				w := bufio.NewWriter(f.IO.Out)
				enc := json.NewEncoder(w)
				enc.SetEscapeHTML(false)
				v, err := c.PullDataset(ctx, args[0], version, func(r api.DatasetRow) error { return enc.Encode(r) })
				if err != nil {
					return err
				}
				if err := w.Flush(); err != nil {
					return err
				}
				f.IO.Infof("Version %d (%s).", v.VersionNumber, v.ID)
				return nil
			})
		},
	}
	cmd.Flags().IntVar(&version, "version", 0, "the version `number` (default: the latest)")
	return cmd
}

// readInput reads a file, or stdin for "-".
func readInput(stdin io.Reader, name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(stdin)
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", name, err)
	}
	return data, nil
}
