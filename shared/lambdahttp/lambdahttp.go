package lambdahttp

import (
	"context"
	"net/http"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"
)

// Start serves h for the life of the Lambda execution environment. It does not return.
// Client-visible failures are HTTP answers written by h; the adapter only returns an error to
// the runtime when the event itself cannot be turned into a request.
//
// Each answer leaves in its smallest encoding (smallest): base64 when that is shorter than
// the body as a JSON string, so that an answer of b bytes weighs at most 4/3 b in Lambda's
// response payload (MaxResponsePayload).
func Start(h http.Handler) {
	lambda.Start(newBuffered(h).invoke)
}

// buffered answers API Gateway (payload 2.0) and buffered Function URL events.
type buffered struct{ adapter *httpadapter.HandlerAdapterV2 }

func newBuffered(h http.Handler) buffered { return buffered{adapter: httpadapter.NewV2(h)} }

// invoke is the Lambda handler of Start: h's answer to ev, in its smallest encoding.
func (b buffered) invoke(ctx context.Context, ev events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	res, err := b.adapter.ProxyWithContext(ctx, ev)
	if err != nil {
		return res, err
	}
	return smallest(res), nil
}
