// Command lambda is the settings area's Lambda function (SettingsFunction in template.yaml).
package main

import (
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/plumehq/plume/functions/settings"
	"github.com/plumehq/plume/shared/auth"
	"github.com/plumehq/plume/shared/config"
	"github.com/plumehq/plume/shared/ddb"
	"github.com/plumehq/plume/shared/lambdahttp"
	"github.com/plumehq/plume/shared/pricing"
)

func main() {
	lambdahttp.Main(func(cfg config.Config, awsCfg aws.Config) (http.Handler, error) {
		table := ddb.NewTable(ddb.NewClient(awsCfg, cfg.CustomDynamoDBEndpoint), cfg.Table)
		authn := auth.NewAuthenticator(ddb.NewAuthStore(table), cfg.AuthCacheTTL)
		return settings.NewHandler(ddb.NewPriceStore(table), pricing.Default(), authn), nil
	})
}
