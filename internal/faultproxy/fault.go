package faultproxy

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Any is the Rule.Op that matches every request.
const Any = ""

// Forever is the Rule.Following that makes a rule fire on every matching request from the Nth
// on.
const Forever = -1

// Rule makes the proxy fail some of the requests of one operation.
//
// A rule counts the requests it matches from the moment Fail adds it, whether or not another
// rule fires on them, and fires on the Nth of them and on the Following ones. When several
// rules fire on one request, the one added first applies.
type Rule struct {
	// Op is the operation matched, as Op names it ("PutItem", "PUT object"); Any matches all.
	Op string
	// Nth is the first matching request the rule fires on, 1-based; 0 is taken as 1.
	Nth int
	// Following is the number of matching requests after the Nth that the rule also fires on;
	// Forever fires on every later one.
	Following int
	// Fault is what the proxy does to the requests the rule fires on.
	Fault Fault
	// Retries makes the rule fire on every later attempt of a request it fired on too (the
	// AWS SDK sends its retries with the first attempt's Amz-Sdk-Invocation-Id), whatever
	// other requests of the operation come between: the request fails after all its attempts,
	// even among concurrent requests of one operation. A retry is not counted as a request.
	Retries bool
}

// fires reports whether the rule fires on the seen-th request it matched.
func (r Rule) fires(seen int) bool {
	nth := max(r.Nth, 1)
	return seen >= nth && (r.Following == Forever || seen <= nth+r.Following)
}

// check returns why r cannot be used, or nil.
func (r Rule) check() error {
	switch {
	case r.Nth < 0:
		return fmt.Errorf("rule for %q: Nth is %d, want 1 or more", r.Op, r.Nth)
	case r.Following < Forever:
		return fmt.Errorf("rule for %q: Following is %d, want 0 or more, or Forever", r.Op, r.Following)
	case r.Fault.kind == 0:
		return fmt.Errorf("rule for %q: no Fault", r.Op)
	case r.Fault.kind == kindDelay && r.Fault.delay < 0:
		return fmt.Errorf("rule for %q: negative delay %s", r.Op, r.Fault.delay)
	}
	return nil
}

type faultKind int

const (
	kindThrottle faultKind = iota + 1
	kindServerError
	kindDelay
	kindDrop
	kindDropAfterForward
)

// Fault is what the proxy does to a request a rule fires on: one of Throttle, ServerError,
// Drop, DropAfterForward or a Delay.
type Fault struct {
	kind  faultKind
	delay time.Duration
}

var (
	// Throttle answers as the service does when it throttles, without forwarding: DynamoDB's
	// HTTP 400 ProvisionedThroughputExceededException, S3's 503 SlowDown. The AWS SDK retries
	// both as throttling errors.
	Throttle = Fault{kind: kindThrottle}

	// ServerError answers as the service does when it fails, without forwarding: DynamoDB's
	// HTTP 500 InternalServerError, S3's 500 InternalError. The AWS SDK retries both.
	ServerError = Fault{kind: kindServerError}

	// Drop closes the client's connection without answering and without forwarding: the
	// client sees an EOF or a connection reset, and nothing happened at the target.
	//
	// Go's http.Transport itself sends a GET or HEAD again, before the SDK sees an error, when
	// the server closes a reused connection without answering; so dropping one GET object or
	// HEAD object usually goes unnoticed, and the proxy counts it twice. Drop two (Following:
	// 1) to fail one attempt of the SDK. POST (all of DynamoDB) and PUT are never sent again
	// by http.Transport.
	Drop = Fault{kind: kindDrop}

	// DropAfterForward forwards the request and waits for the target's answer, so the request
	// takes effect, then closes the client's connection without answering: the write happened
	// but the client does not know. The AWS SDK retries such a request, so a test sees the
	// retry meet the effect of the first attempt (a failed attribute_not_exists condition, a
	// counter incremented twice). GET and HEAD requests are sent again as for Drop.
	DropAfterForward = Fault{kind: kindDropAfterForward}
)

// Delay returns the fault that holds a request for d, then forwards it. If the client gives up
// or the proxy is closed first, the request is not forwarded and the connection is closed.
func Delay(d time.Duration) Fault { return Fault{kind: kindDelay, delay: d} }

// String names the fault: "Throttle", "Delay(10ms)" ...
func (f Fault) String() string {
	switch f.kind {
	case kindThrottle:
		return "Throttle"
	case kindServerError:
		return "ServerError"
	case kindDelay:
		return fmt.Sprintf("Delay(%s)", f.delay)
	case kindDrop:
		return "Drop"
	case kindDropAfterForward:
		return "DropAfterForward"
	}
	return "no fault"
}

// requestID is the request id of every error the proxy makes up.
const requestID = "faultproxy"

// awsError is an error answer of one service.
type awsError struct {
	status  int
	code    string
	message string
}

// errorFor returns the answer fault gives in place of the service, DynamoDB when dynamo is
// true and S3 otherwise.
func errorFor(fault faultKind, dynamo bool) awsError {
	switch {
	case fault == kindThrottle && dynamo:
		return awsError{http.StatusBadRequest, "ProvisionedThroughputExceededException", "The level of configured provisioned throughput for the table was exceeded (injected by faultproxy)."}
	case fault == kindThrottle:
		return awsError{http.StatusServiceUnavailable, "SlowDown", "Please reduce your request rate (injected by faultproxy)."}
	case dynamo:
		return awsError{http.StatusInternalServerError, "InternalServerError", "Internal server error (injected by faultproxy)."}
	default:
		return awsError{http.StatusInternalServerError, "InternalError", "We encountered an internal error. Please try again (injected by faultproxy)."}
	}
}

// writeDynamoDB writes e as DynamoDB's JSON protocol does.
// See https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.Errors.html.
func (e awsError) writeDynamoDB(w http.ResponseWriter) {
	body, _ := json.Marshal(map[string]string{ // a map of strings always marshals
		"__type":  "com.amazonaws.dynamodb.v20120810#" + e.code,
		"message": e.message,
	})
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Header().Set("X-Amzn-Requestid", requestID)
	w.WriteHeader(e.status)
	_, _ = w.Write(body)
}

// writeS3 writes e as S3's REST XML protocol does (a HEAD answer has no body).
// See https://docs.aws.amazon.com/AmazonS3/latest/API/ErrorResponses.html.
func (e awsError) writeS3(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("X-Amz-Request-Id", requestID)
	w.WriteHeader(e.status)
	_, _ = fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+
		`<Error><Code>%s</Code><Message>%s</Message><RequestId>%s</RequestId><HostId>%s</HostId></Error>`,
		e.code, e.message, requestID, requestID)
}

// drainLimit bounds the bytes of a request or response body read only to be thrown away. A
// body left unread makes closing its connection send a reset instead of a clean end.
const drainLimit = 64 << 20

// drain reads and discards up to drainLimit bytes of body.
func drain(body io.Reader) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, drainLimit))
}
