// Package metrics publishes Plume's metrics in CloudWatch's Embedded Metric Format
// (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html):
// a structured log line that CloudWatch Logs turns into metrics as it ingests it. No
// PutMetricData call is made, so publishing costs no request, no latency and no IAM permission;
// the metrics cost what CloudWatch charges for custom metrics.
//
// Every metric is in the namespace Plume with one dimension, Function (the Lambda function's
// name, "local" elsewhere), so that a deployment has a handful of metrics, whatever its number
// of projects. The project a record is about is a property of the log line, not a dimension:
// CloudWatch Logs Insights can group by it without a metric per project.
//
// A record is written through the process's slog logger (JSON, one line), beside the other
// log lines of the request: in Lambda, a JSON log line is an EMF record when it carries the
// "_aws" member.
package metrics

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"strconv"
	"time"
)

// Namespace is the CloudWatch namespace of Plume's metrics.
const Namespace = "Plume"

// The units of EMF used here.
const (
	UnitCount = "Count"
	UnitNone  = "None"
)

// The metrics Plume publishes, by name.
const (
	SpansIngested     = "SpansIngested"     // spans stored by POST /spans and OTLP
	SpansRejected     = "SpansRejected"     // spans of a batch refused (the batch's other spans stored)
	Evaluations       = "Evaluations"       // judge evaluations written
	EvaluationsFailed = "EvaluationsFailed" // evaluations that failed (retried by the event)
	ModelCalls        = "ModelCalls"        // model calls made by the judges, optimization and the gateway
	ModelCostUSD      = "ModelCostUSD"      // their cost, in USD (priced models only)
	ModelTokens       = "ModelTokens"       // tokens of the gateway's calls
)

// Value is one metric of a record.
type Value struct {
	Name  string
	Value float64
	Unit  string
}

// Count is a Value of unit Count.
func Count(name string, n int) Value { return Value{Name: name, Value: float64(n), Unit: UnitCount} }

// Amount is a Value without a unit (a cost in USD).
func Amount(name string, v float64) Value { return Value{Name: name, Value: v, Unit: UnitNone} }

// function is the Function dimension of this process.
var function = functionName(os.Getenv)

func functionName(getenv func(string) string) string {
	if name := getenv("AWS_LAMBDA_FUNCTION_NAME"); name != "" {
		return name
	}
	return "local"
}

// directive is the "_aws" member of a record: its timestamp and its metrics' names and units.
// It writes itself (MarshalJSON) as encoding/json wrote the structs it replaces, which the
// JSON handler copies as they are: no reflection on every record (issue 31). TestDirective
// holds it to json.Marshal of those structs.
type directive struct {
	timestamp int64
	values    []Value
}

// MarshalJSON is {"Timestamp":...,"CloudWatchMetrics":[{"Namespace":"Plume",
// "Dimensions":[["Function"]],"Metrics":[{"Name":...,"Unit":...},...]}]}.
func (d directive) MarshalJSON() ([]byte, error) {
	return d.AppendJSON(make([]byte, 0, 112+40*len(d.values))), nil
}

// AppendJSON appends what MarshalJSON returns, which is compact: the process's logger copies
// it into the line as it is (shared/web).
func (d directive) AppendJSON(b []byte) []byte {
	b = append(b, `{"Timestamp":`...)
	b = strconv.AppendInt(b, d.timestamp, 10)
	b = append(b, `,"CloudWatchMetrics":[{"Namespace":`...)
	b = appendString(b, Namespace)
	b = append(b, `,"Dimensions":[["Function"]],"Metrics":[`...)
	for i, v := range d.values {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"Name":`...)
		b = appendString(b, v.Name)
		b = append(b, `,"Unit":`...)
		b = appendString(b, v.Unit)
		b = append(b, '}')
	}
	return append(b, "]}]}"...)
}

// appendString appends s as a JSON string as slog's JSON handler writes a value's strings
// (json.Encoder, HTML left as it is): copied between quotes when it is printable ASCII without
// a quote or a backslash, else through the encoder.
func appendString(b []byte, s string) []byte {
	plain := true
	for i := 0; i < len(s) && plain; i++ {
		c := s[i]
		plain = c >= 0x20 && c < 0x7f && c != '"' && c != '\\'
	}
	if plain {
		return append(append(append(b, '"'), s...), '"')
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}

// Emit writes one record of values about projectID ("" for none) at now, through logger
// (slog.Default() when nil). Values of zero are published too (an alarm on a rate needs them);
// nothing is written without values.
func Emit(ctx context.Context, logger *slog.Logger, now time.Time, projectID string, values ...Value) {
	if len(values) == 0 {
		return
	}
	if logger == nil {
		logger = slog.Default()
	}
	attrs := make([]slog.Attr, 0, len(values)+3)
	attrs = append(attrs, slog.Any("_aws", directive{timestamp: now.UnixMilli(), values: values}), slog.String("Function", function))
	if projectID != "" {
		attrs = append(attrs, slog.String("project_id", projectID))
	}
	for _, v := range values {
		attrs = append(attrs, slog.Float64(v.Name, v.Value))
	}
	logger.LogAttrs(ctx, slog.LevelInfo, "metrics", attrs...)
}
