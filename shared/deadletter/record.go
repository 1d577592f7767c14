package deadletter

import (
	"encoding/json"
	"time"
)

// The invocation record's fields and values, as Lambda writes them to an on-failure
// destination. The shape is documented with an example in "Capturing records of Lambda
// asynchronous invocations":
// https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-retain-records.html
const (
	// Version is the record version Lambda writes.
	Version = "1.0"
	// ConditionRetriesExhausted: the function failed every attempt.
	ConditionRetriesExhausted = "RetriesExhausted"
	// ConditionEventAgeExceeded: the event waited longer than the maximum event age.
	ConditionEventAgeExceeded = "EventAgeExceeded"
	// ExecutedVersionLatest is the executed version of an unpublished function.
	ExecutedVersionLatest = "$LATEST"
	// FunctionErrorUnhandled is responseContext.functionError for an attempt that failed.
	FunctionErrorUnhandled = "Unhandled"
)

// Record is Lambda's invocation record for a failed asynchronous invocation, the body of each
// message Lambda sends to an SQS on-failure destination:
//
//	{
//	  "version": "1.0",
//	  "timestamp": "2026-01-05T10:00:00.123Z",
//	  "requestContext": {
//	    "requestId": "…",
//	    "functionArn": "arn:aws:lambda:us-east-1:123456789012:function:f:$LATEST",
//	    "condition": "RetriesExhausted",
//	    "approximateInvokeCount": 3
//	  },
//	  "requestPayload": {…the event…},
//	  "responseContext": {"statusCode": 200, "executedVersion": "$LATEST", "functionError": "Unhandled"},
//	  "responsePayload": {"errorMessage": "…", "errorType": "…"}
//	}
//
// See https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-retain-records.html.
type Record struct {
	Version string `json:"version"`
	// Timestamp is when the record was written (Lambda writes milliseconds, in UTC).
	Timestamp      time.Time      `json:"timestamp"`
	RequestContext RequestContext `json:"requestContext"`
	// RequestPayload is the event the function was invoked with, as sent.
	RequestPayload  json.RawMessage `json:"requestPayload"`
	ResponseContext ResponseContext `json:"responseContext"`
	// ResponsePayload is the last attempt's answer: for a failure, the error object
	// ({"errorMessage": "...", "errorType": "..."}).
	ResponsePayload json.RawMessage `json:"responsePayload,omitempty"`
}

// RequestContext says which invocation failed and why.
type RequestContext struct {
	// RequestID is the invocation's request id, the same for every attempt.
	RequestID   string `json:"requestId"`
	FunctionARN string `json:"functionArn"`
	// Condition is why the record was sent (ConditionRetriesExhausted, ...).
	Condition string `json:"condition"`
	// ApproximateInvokeCount is the number of attempts made.
	ApproximateInvokeCount int `json:"approximateInvokeCount"`
}

// ResponseContext describes the last attempt's response.
type ResponseContext struct {
	// StatusCode is the status of the Invoke API call, 200 even when the function failed.
	StatusCode      int    `json:"statusCode"`
	ExecutedVersion string `json:"executedVersion"`
	// FunctionError is FunctionErrorUnhandled when the function failed, empty otherwise.
	FunctionError string `json:"functionError,omitempty"`
}

// eventOf returns the original event a message body holds and whether it holds one: a
// destination record's requestPayload, or the body itself when it is JSON but no destination
// record (DeadLetterConfig sends the event as is). A record is told from an event by its
// requestContext.condition and its requestPayload, which events do not carry together (an API
// Gateway event has a requestContext, but without a condition).
func eventOf(body []byte) (json.RawMessage, bool) {
	if !json.Valid(body) {
		return nil, false
	}
	var probe struct {
		RequestContext *struct {
			Condition string `json:"condition"`
		} `json:"requestContext"`
		RequestPayload json.RawMessage `json:"requestPayload"`
	}
	if json.Unmarshal(body, &probe) != nil || probe.RequestContext == nil || probe.RequestContext.Condition == "" {
		// Not an object, or an object that is no record: the event itself.
		return body, true
	}
	if len(probe.RequestPayload) == 0 || string(probe.RequestPayload) == "null" {
		// A record without its event: nothing to replay.
		return nil, false
	}
	return probe.RequestPayload, true
}
