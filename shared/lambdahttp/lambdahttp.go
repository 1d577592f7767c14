package lambdahttp

import (
	"net/http"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
)

// Start serves h for the life of the Lambda execution environment. It does not return.
// Client-visible failures are HTTP answers written by h; the adapter only returns an error to
// the runtime when the event itself cannot be turned into a request.
func Start(h http.Handler) {
	lambda.Start(httpadapter.NewV2(h).ProxyWithContext)
}
