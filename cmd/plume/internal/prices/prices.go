// Package prices holds `plume model-prices`: the project's own prices of models, which win over
// the shipped price table when spans are priced.
package prices

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/plumehq/plume/api"
	"github.com/plumehq/plume/client"
	"github.com/plumehq/plume/cmd/plume/internal/cmdutil"
)

// NewCmdModelPrices returns the `plume model-prices` command group.
func NewCmdModelPrices(f *cmdutil.Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "model-prices <command>",
		Short: "List, read, set and delete the project's own model prices (USD per 1M tokens)",
		Long: `The project's own prices of models, in USD per 1M tokens. A project's price wins over the
shipped price table when an llm span's cost is computed: for fine-tunes, self-hosted models,
negotiated discounts or models the table does not know yet. A price applies to spans ingested
from then on (within a minute); spans already stored keep their cost.`,
		Args: cmdutil.NoArgs,
		RunE: cmdutil.ShowHelp,
	}
	cmd.AddCommand(newCmdList(f), newCmdGet(f), newCmdSet(f), newCmdDelete(f))
	return cmd
}

// priceFields are a price's fields in text output of one price.
var priceFields = []cmdutil.Column{
	{Header: "Model", Path: "model"}, {Header: "Source", Path: "source"}, {Header: "Provider", Path: "provider"},
	{Header: "Input", Path: "input"}, {Header: "Output", Path: "output"}, {Header: "Cached input", Path: "cached_input"},
	{Header: "Cache write", Path: "cache_write"}, {Header: "Updated", Path: "updated_at"}, {Header: "Updated by", Path: "updated_by"},
}

func newCmdList(f *cmdutil.Factory) *cobra.Command {
	var o cmdutil.ListOptions
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List the project's own model prices (USD per 1M tokens), by model",
		Example: `  plume model-prices list --where model~gpt`,
		Args:    cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return f.WithClient(cmd, &o, true, func(ctx context.Context, c *client.Client) error {
				list, err := c.ModelPrices(ctx)
				if err != nil {
					return err
				}
				if err := f.IO.PrintList(list.Overrides, []cmdutil.Column{{Header: "MODEL", Path: "model"}, {Header: "PROVIDER", Path: "provider"},
					{Header: "INPUT", Path: "input"}, {Header: "OUTPUT", Path: "output"}, {Header: "CACHED_INPUT", Path: "cached_input"},
					{Header: "CACHE_WRITE", Path: "cache_write"}, {Header: "UPDATED", Path: "updated_at"}, {Header: "UPDATED_BY", Path: "updated_by"}}, o.Local()); err != nil {
					return err
				}
				if !f.IO.JSON() {
					f.IO.Infof("Other models are priced by the shipped table: %d models, last checked %s.", list.PriceTable.Models, list.PriceTable.LastChecked)
				}
				return nil
			})
		},
	}
	cmdutil.AddListFlags(cmd, &o, 0)
	return cmd
}

func newCmdGet(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:     "get <model>",
		Short:   "Show the price spans of a model are priced with: the project's own, else the shipped table's",
		Example: `  plume model-prices get openai/gpt-4o-mini`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.WithClient(cmd, nil, true, func(ctx context.Context, c *client.Client) error {
				p, err := c.ModelPrice(ctx, args[0])
				if err != nil {
					return err
				}
				return f.IO.PrintItem(p, priceFields)
			})
		},
	}
}

func newCmdSet(f *cmdutil.Factory) *cobra.Command {
	var req api.PutModelPriceRequest
	var input, output float64
	cmd := &cobra.Command{
		Use:   "set <model> --input-price USD --output-price USD",
		Short: "Set the project's price of a model, in USD per 1M tokens",
		Long: `Set the project's price of a model (PUT /projects/{project_id}/model-prices/{model}), in USD
per 1M tokens (--input-price and --output-price, as --output is the global output format).
The model is the id as llm spans name it (attributes.model), or provider/model
(openai/gpt-4o-mini) for the spans of that provider (attributes.provider) only. It is stored
lowercased.`,
		Example: `  plume model-prices set my-fine-tune --input-price 0.3 --output-price 1.2
  plume model-prices set openai/gpt-4o-mini --input-price 0.12 --output-price 0.48 --cached-input-price 0.06 --provider openai`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req.Input, req.Output = &input, &output
			return f.WithClient(cmd, nil, true, func(ctx context.Context, c *client.Client) error {
				p, err := c.SetModelPrice(ctx, args[0], req)
				if err != nil {
					return err
				}
				return f.IO.PrintItem(p, priceFields)
			})
		},
	}
	fl := cmd.Flags()
	fl.Float64Var(&input, "input-price", 0, "the price of input tokens, in `USD` per 1M")
	fl.Float64Var(&output, "output-price", 0, "the price of output tokens, in `USD` per 1M")
	fl.Float64Var(&req.CachedInput, "cached-input-price", 0, "the price of cached input tokens, in `USD` per 1M (0: the input price)")
	fl.Float64Var(&req.CacheWrite, "cache-write-price", 0, "the price of tokens written to the cache, in `USD` per 1M (0: the input price)")
	fl.StringVar(&req.Provider, "provider", "", "the model's `provider` (openai, anthropic, ...), shown with the price")
	_ = cmd.MarkFlagRequired("input-price")
	_ = cmd.MarkFlagRequired("output-price")
	return cmd
}

func newCmdDelete(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:     "delete <model>",
		Short:   "Delete the project's price of a model: the shipped table prices it again",
		Example: `  plume model-prices delete openai/gpt-4o-mini`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return f.WithClient(cmd, nil, true, func(ctx context.Context, c *client.Client) error {
				deleted, err := c.DeleteModelPrice(ctx, args[0])
				if err != nil {
					return err
				}
				return f.IO.PrintItem(deleted, []cmdutil.Column{{Header: "Model", Path: "model"}, {Header: "Deleted", Path: "deleted"}})
			})
		},
	}
}
