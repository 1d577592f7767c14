package awsjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/aws/smithy-go"
)

// ErrThrottling matches (errors.Is) an *Error that says the caller was throttled: a 429 or
// a throttling code (ThrottlingException, RequestThrottled, ...), as the SDK's retryer tells
// throttling apart.
var ErrThrottling = errors.New("awsjson: throttled")

// ErrNotFound matches (errors.Is) an *Error that says the resource named does not exist: a
// missing queue (QueueDoesNotExist) or secret, bus or rule (ResourceNotFoundException).
var ErrNotFound = errors.New("awsjson: not found")

// Error is the error answer of an operation (any status but 2xx).
type Error struct {
	// Service is the service's SDK id (SQS).
	Service string
	// Operation is the operation's name (SendMessage).
	Operation string
	// StatusCode is the answer's HTTP status.
	StatusCode int
	// Code is the error's code: the shape name of the answer's __type without its namespace
	// (QueueDoesNotExist), else of its X-Amzn-ErrorType header; empty when it has neither.
	Code string
	// Message is the answer's message.
	Message string
	// RequestID is the answer's X-Amzn-RequestId.
	RequestID string
}

var _ smithy.APIError = (*Error)(nil)

func (e *Error) Error() string {
	code := e.Code
	if code == "" {
		code = http.StatusText(e.StatusCode)
	}
	msg := fmt.Sprintf("%s %s: %d %s", e.Service, e.Operation, e.StatusCode, code)
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if e.RequestID != "" {
		msg += " (request id " + e.RequestID + ")"
	}
	return msg
}

// Is matches ErrThrottling and ErrNotFound.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrThrottling:
		return e.throttling()
	case ErrNotFound:
		return notFoundCode(e.Code)
	}
	return false
}

// ErrorCode is Code (smithy.APIError).
func (e *Error) ErrorCode() string { return e.Code }

// ErrorMessage is Message (smithy.APIError).
func (e *Error) ErrorMessage() string { return e.Message }

// ErrorFault is whose fault the error is: the server's for a 5xx, else the client's
// (smithy.APIError).
func (e *Error) ErrorFault() smithy.ErrorFault {
	if e.StatusCode >= 500 {
		return smithy.FaultServer
	}
	return smithy.FaultClient
}

// throttlingCode reports whether code is one the SDK's standard retryer takes for
// throttling. (Switches, not maps: nothing built at init.)
func throttlingCode(code string) bool {
	switch code {
	case "Throttling", "ThrottlingException", "ThrottledException", "RequestThrottledException",
		"TooManyRequestsException", "ProvisionedThroughputExceededException", "TransactionInProgressException",
		"RequestLimitExceeded", "BandwidthLimitExceeded", "LimitExceededException", "RequestThrottled",
		"SlowDown", "PriorRequestNotComplete", "EC2ThrottledException":
		return true
	}
	return false
}

// timeoutCode reports whether code is that of a request that timed out at the service,
// retried as the SDK's standard retryer retries it.
func timeoutCode(code string) bool {
	return code == "RequestTimeout" || code == "RequestTimeoutException"
}

// notFoundCode reports whether code says a resource does not exist: EventBridge's and
// Secrets Manager's ResourceNotFoundException, SQS's QueueDoesNotExist (its JSON protocol's
// name) or AWS.SimpleQueueService.NonExistentQueue (its query protocol's).
func notFoundCode(code string) bool {
	switch code {
	case "ResourceNotFoundException", "QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue":
		return true
	}
	return false
}

func (e *Error) throttling() bool {
	return e.StatusCode == http.StatusTooManyRequests || throttlingCode(e.Code)
}

// retryable reports whether the SDK's standard retryer sends the request again.
func (e *Error) retryable() bool {
	switch e.StatusCode {
	case 500, 502, 503, 504:
		return true
	}
	return e.throttling() || timeoutCode(e.Code)
}

// decodeError is the *Error of an answer of status other than 2xx whose body is body. A body
// that is not the protocol's error object still gives an error, with the status and header
// alone.
func decodeError(svc Service, op string, resp *http.Response, body []byte) *Error {
	var shape struct {
		Type         string `json:"__type"`
		Code         string `json:"code"`
		LowerMessage string `json:"message"`
		UpperMessage string `json:"Message"`
		ErrorMessage string `json:"errorMessage"`
	}
	_ = json.Unmarshal(body, &shape)
	code := shape.Type
	if code == "" {
		code = resp.Header.Get("X-Amzn-ErrorType")
	}
	if code == "" {
		code = shape.Code
	}
	msg := shape.LowerMessage
	if msg == "" {
		msg = shape.UpperMessage
	}
	if msg == "" {
		msg = shape.ErrorMessage
	}
	return &Error{Service: svc.ID, Operation: op, StatusCode: resp.StatusCode, Code: sanitizeCode(code),
		Message: msg, RequestID: resp.Header.Get("X-Amzn-RequestId")}
}

// sanitizeCode is an error code without what AWS JSON allows around it: a namespace before
// '#' (com.amazonaws.sqs#QueueDoesNotExist) and anything after ':' (a header's URI).
func sanitizeCode(code string) string {
	if i := strings.IndexByte(code, ':'); i >= 0 {
		code = code[:i]
	}
	if i := strings.LastIndexByte(code, '#'); i >= 0 {
		code = code[i+1:]
	}
	return strings.TrimSpace(code)
}
