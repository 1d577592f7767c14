package lambdahttp

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/plumehq/plume/shared/textcut"
)

// Lambda's limits on a synchronous invocation, which API Gateway HTTP APIs and Function URLs in
// BUFFERED invoke mode make (https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html:
// "6 MB each for request and response (synchronous)"), and on a streamed response. Measured,
// the two 6 MB differ by 100 bytes: Lambda refuses an event over 6,291,456 bytes with
// RequestEntityTooLargeException ("Request must be smaller than 6291456 bytes for the
// InvokeFunction operation") and fails an invocation whose response is over 6,291,556 with
// Function.ResponseSizeTooLarge ("Response payload size exceeded maximum allowed payload size
// (6291556 bytes).").
const (
	// MaxRequestPayload is the most bytes the invocation event may have: the JSON document
	// API Gateway or the Function URL builds from the request (Event), in which the body is a
	// JSON string, escaped, or base64-encoded (4/3 of its size) when it is binary.
	MaxRequestPayload = 6 << 20
	// MaxBinaryBody is the largest binary body (protobuf, or any body with a Content-Encoding)
	// that an event surely carries: base64-encoded, it takes 4/3 of its size, and the rest of
	// the event (the request line and headers, at most 10 KB at API Gateway, and the request
	// context) fits in the 16 KiB left: 4,706,304 bytes. A text body (JSON) counts as a JSON
	// string instead: its size plus what JSON escapes in it.
	MaxBinaryBody = (MaxRequestPayload - 16<<10) / 4 * 3
	// MaxResponsePayload is the most bytes the function's response may have: the runtime's
	// JSON encoding of the events.APIGatewayV2HTTPResponse (ResponsePayload), in which the body
	// is a JSON string, escaped, or base64-encoded when it is not UTF-8 (a gzipped answer) or
	// when that is smaller (Start).
	MaxResponsePayload = 6<<20 + 100
	// MaxStreamedResponse is the most bytes a streamed response (a Function URL in
	// RESPONSE_STREAM mode) may send; Lambda cuts it there.
	MaxStreamedResponse = 20 << 20
	// Timeout is template.yaml's Timeout of the HTTP functions (Globals): API Gateway HTTP APIs
	// give up after 30 s, and the functions stop before that. AsDeployed does not enforce it
	// (it says why).
	Timeout = 29 * time.Second
)

// alwaysText is the size under which a body is sent as text (smallest): escaped at its worst,
// six bytes a byte, it stays under MaxResponsePayload with 290 KB for the headers.
const alwaysText = 1_000_000

// ResponsePayload is the size in bytes of res as the Lambda runtime sends it: aws-lambda-go's
// encoding of the handler's result (a json.Encoder with HTML escaping off, which ends it with a
// newline). Lambda refuses a response over MaxResponsePayload.
func ResponsePayload(res events.APIGatewayV2HTTPResponse) int { return encodedSize(res) }

// RequestPayload is the size in bytes of ev as Lambda receives it, for MaxRequestPayload.
func RequestPayload(ev events.APIGatewayV2HTTPRequest) int { return encodedSize(ev) }

// encodedSize is the length of v's JSON encoding with HTML escaping off, newline included.
func encodedSize(v any) int {
	var n counter
	enc := json.NewEncoder(&n)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // the event types always encode
	return int(n)
}

// counter is an io.Writer that counts what it is given.
type counter int

func (c *counter) Write(p []byte) (int, error) {
	*c += counter(len(p))
	return len(p), nil
}

// smallest is res with its body base64-encoded when that is shorter than the body as a JSON
// string. API Gateway and Function URLs decode a base64 body (isBase64Encoded) before they send
// it, so the client receives the same bytes; only the response payload, which Lambda caps at
// MaxResponsePayload, changes. A JSON answer made of strings that themselves hold JSON (a
// span's input, an evaluation's reason quoting the model) escapes every quote twice and can
// double in the payload, and a control character becomes six bytes; base64 costs 4/3 whatever
// the content, so the payload of a body of b bytes is at most 4/3 b plus the headers.
//
// A body under a megabyte fits as text whatever it holds (six bytes a byte at worst), so it
// stays text, readable in logs; only larger ones are measured (textcut.JSONLen, a pass over the
// bytes).
func smallest(res events.APIGatewayV2HTTPResponse) events.APIGatewayV2HTTPResponse {
	if res.IsBase64Encoded || len(res.Body) < alwaysText {
		return res
	}
	if base64.StdEncoding.EncodedLen(len(res.Body)) < textcut.JSONLen(res.Body) {
		res.Body = base64.StdEncoding.EncodeToString([]byte(res.Body))
		res.IsBase64Encoded = true
	}
	return res
}

// Payload is the response payload Start sends for an answer of status, header and body: the
// adapter's response (a repeated header joined by ",", the cookies apart, a body that is not
// UTF-8 base64-encoded) in its smallest encoding, as the runtime encodes it. Lambda refuses one
// over MaxResponsePayload.
func Payload(status int, header http.Header, body []byte) int {
	res := events.APIGatewayV2HTTPResponse{StatusCode: status, Headers: map[string]string{}, Cookies: []string{}}
	for k, v := range header {
		if strings.EqualFold(k, "Set-Cookie") {
			res.Cookies = append(res.Cookies, v...)
			continue
		}
		res.Headers[k] = strings.Join(v, ",")
	}
	if utf8.Valid(body) {
		res.Body = string(body)
	} else {
		res.Body, res.IsBase64Encoded = base64.StdEncoding.EncodeToString(body), true
	}
	return ResponsePayload(smallest(res))
}
