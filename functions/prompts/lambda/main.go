// Command lambda is the prompts area's Lambda function (PromptsFunction in template.yaml),
// built as bootstrap for provided.al2023.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/plumehq/plume/functions/prompts"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/config"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/lambdahttp"
	"github.com/plumehq/plume/shared/prompt"
	"github.com/plumehq/plume/shared/web"
)

func main() {
	cfg, err := config.FromEnv(os.Getenv)
	if err != nil {
		slog.Error("bad configuration", "error", err)
		os.Exit(1)
	}
	slog.SetDefault(web.NewLogger(os.Stdout, cfg.LogLevel))
	awsCfg, err := config.AWS(context.Background())
	if err != nil {
		slog.Error("bad AWS configuration", "error", err)
		os.Exit(1)
	}
	table := ddb.NewTable(ddb.NewClient(awsCfg, cfg.CustomDynamoDBEndpoint), cfg.Table)
	authn := auth.NewAuthenticator(ddb.NewAuthStore(table), cfg.AuthCacheTTL)
	svc := prompt.NewService(ddb.NewPromptStore(table))
	lambdahttp.Start(prompts.NewHandler(svc, authn))
}
