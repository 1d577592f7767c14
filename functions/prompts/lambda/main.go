// Command lambda is the prompts area's Lambda function (PromptsFunction in template.yaml),
// built as bootstrap for provided.al2023.
package main

import (
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/plumehq/plume/functions/prompts"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/config"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/lambdahttp"
	"github.com/plumehq/plume/shared/prompt"
)

func main() {
	lambdahttp.Main(func(cfg config.Config, awsCfg aws.Config) (http.Handler, error) {
		table := ddb.NewTable(ddb.NewClient(awsCfg, cfg.CustomDynamoDBEndpoint), cfg.Table)
		authn := auth.NewAuthenticator(ddb.NewAuthStore(table), cfg.AuthCacheTTL)
		return prompts.NewHandler(prompt.NewService(ddb.NewPromptStore(table)), authn), nil
	})
}
