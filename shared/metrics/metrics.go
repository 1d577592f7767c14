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
	"context"
	"log/slog"
	"os"
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

// directive is the "_aws" member of a record.
type directive struct {
	Timestamp         int64          `json:"Timestamp"`
	CloudWatchMetrics []metricsBlock `json:"CloudWatchMetrics"`
}

type metricsBlock struct {
	Namespace  string       `json:"Namespace"`
	Dimensions [][]string   `json:"Dimensions"`
	Metrics    []metricSpec `json:"Metrics"`
}

type metricSpec struct {
	Name string `json:"Name"`
	Unit string `json:"Unit"`
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
	d := directive{Timestamp: now.UnixMilli(), CloudWatchMetrics: []metricsBlock{{
		Namespace: Namespace, Dimensions: [][]string{{"Function"}}, Metrics: make([]metricSpec, len(values)),
	}}}
	attrs := make([]any, 0, 2*len(values)+6)
	attrs = append(attrs, "_aws", d, "Function", function)
	if projectID != "" {
		attrs = append(attrs, "project_id", projectID)
	}
	for i, v := range values {
		d.CloudWatchMetrics[0].Metrics[i] = metricSpec{Name: v.Name, Unit: v.Unit}
		attrs = append(attrs, v.Name, v.Value)
	}
	logger.InfoContext(ctx, "metrics", attrs...)
}
