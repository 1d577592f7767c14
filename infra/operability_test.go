package infra_test

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The operations part of template.yaml (docs/operations.md), checked against the
// rest of the template: the functions, queues, APIs and tables are read from the file, so a
// function, queue or index added without its log group or alarm fails here.

const (
	typeAlarm    = "AWS::CloudWatch::Alarm"
	typeLogGroup = "AWS::Logs::LogGroup"
	typeQueue    = "AWS::SQS::Queue"
	typeTable    = "AWS::DynamoDB::Table"
	typeHTTPAPI  = "AWS::Serverless::HttpApi"
	typeBucket   = "AWS::S3::Bucket"
)

// alarmTopic is the action of every alarm: the AlarmTopicArn parameter's topic, or the stack's
// own when the parameter is empty.
var alarmTopic = []any{map[string]any{"Fn::If": []any{"CreateAlarmTopic", ref("AlarmTopic"), ref("AlarmTopicArn")}}}

// asyncEventTypes are the SAM event types whose service invokes the function asynchronously
// (Lambda queues the event, retries it, and then sends it to the on-failure destination).
var asyncEventTypes = []string{"EventBridgeRule", "CloudWatchEvent", "Schedule", "ScheduleV2", "S3", "SNS", "CloudWatchLogs", "IoTRule", "Cognito"}

// clockEventTypes are the asynchronous events that carry no data: a failed tick is not worth
// keeping, the next tick is its retry. A function invoked only by them needs no failure
// destination (its Errors alarm still fires).
var clockEventTypes = []string{"Schedule", "ScheduleV2"}

// operabilityChecks are the checks of this file, by name.
var operabilityChecks = []struct {
	name  string
	check func(t checkT, tpl map[string]any)
}{
	{"function log groups", checkLogGroups},
	{"function alarms", checkFunctionAlarms},
	{"asynchronous functions", checkAsyncFunctions},
	{"queue consumers", checkQueueConsumers},
	{"dead-letter queues", checkDeadLetterQueues},
	{"HTTP APIs", checkHTTPAPIs},
	{"tables", checkTableAlarms},
	{"alarm actions", checkAlarmActions},
	{"span retention", checkSpanRetention},
}

func TestOperability(t *testing.T) {
	tpl := loadTemplate(t)
	for _, c := range operabilityChecks {
		t.Run(c.name, func(t *testing.T) { c.check(t, tpl) })
	}
}

// TestOperabilityChecksFail proves that each check fails when the template lacks what it
// checks, on copies of the real template edited as a careless change would.
func TestOperabilityChecksFail(t *testing.T) {
	all := func(t checkT, tpl map[string]any) {
		for _, c := range operabilityChecks {
			c.check(t, tpl)
		}
	}
	resources := func(tpl map[string]any) map[string]any { return mapAt(tpl, "Resources") }
	props := func(tpl map[string]any, id string) map[string]any {
		return mapAt(mapAt(resources(tpl), id), "Properties")
	}

	tests := []struct {
		name   string
		change func(t *testing.T, tpl map[string]any)
		want   []string // each is part of some failure message; none: the checks pass
	}{
		{name: "the real template passes"},
		{
			name: "a new function without log group or alarms",
			change: func(t *testing.T, tpl map[string]any) {
				resources(tpl)["ExtraFunction"] = parseYAML(t, `
Type: AWS::Serverless::Function
Properties:
  CodeUri: .
  Events:
    Extra: {Type: HttpApi, Properties: {ApiId: !Ref HttpApi, Method: GET, Path: /extra}}
`)
			},
			want: []string{"ExtraFunction has no log group", "ExtraFunction has no Errors alarm", "ExtraFunction has no Throttles alarm"},
		},
		{
			name: "a new EventBridge consumer without destination or event age alarm",
			change: func(t *testing.T, tpl map[string]any) {
				resources(tpl)["ExtraFunction"] = parseYAML(t, `
Type: AWS::Serverless::Function
Properties:
  CodeUri: .
  Events:
    Extra: {Type: EventBridgeRule, Properties: {Pattern: {source: [aws.s3]}}}
`)
			},
			want: []string{"ExtraFunction is invoked asynchronously without an on-failure destination",
				"ExtraFunction has no AsyncEventAge alarm", "event Extra of ExtraFunction has no DeadLetterConfig"},
		},
		{
			name: "a function invoked asynchronously by other code, without destination",
			change: func(t *testing.T, tpl map[string]any) {
				resources(tpl)["ExtraFunction"] = parseYAML(t, `
Type: AWS::Serverless::Function
Properties:
  CodeUri: .
  EventInvokeConfig: {MaximumRetryAttempts: 2}
`)
			},
			want: []string{"ExtraFunction is invoked asynchronously without an on-failure destination"},
		},
		{
			name:   "a deleted Throttles alarm",
			change: func(_ *testing.T, tpl map[string]any) { delete(resources(tpl), "MonitorFunctionThrottlesAlarm") },
			want:   []string{"MonitorFunction has no Throttles alarm"},
		},
		{
			name: "an Errors alarm that needs two errors",
			change: func(_ *testing.T, tpl map[string]any) {
				props(tpl, "PromptsFunctionErrorsAlarm")["Threshold"] = 1
			},
			want: []string{"PromptsFunction has no Errors alarm"},
		},
		{
			name: "a log group kept forever",
			change: func(_ *testing.T, tpl map[string]any) {
				delete(props(tpl, "JudgesFunctionLogGroup"), "RetentionInDays")
			},
			want: []string{"JudgesFunction has no log group with RetentionInDays"},
		},
		{
			name: "a judge event failure kept nowhere",
			change: func(_ *testing.T, tpl map[string]any) {
				delete(mapAt(props(tpl, "EvaluatorFunction"), "EventInvokeConfig"), "DestinationConfig")
			},
			want: []string{"EvaluatorFunction is invoked asynchronously without an on-failure destination"},
		},
		{
			name:   "an asynchronous function without event age alarm",
			change: func(_ *testing.T, tpl map[string]any) { delete(resources(tpl), "OptimizerWorkerFunctionEventAgeAlarm") },
			want:   []string{"OptimizerWorkerFunction has no AsyncEventAge alarm"},
		},
		{
			name: "a new dead-letter queue without depth alarm",
			change: func(t *testing.T, tpl map[string]any) {
				resources(tpl)["ExtraQueue"] = parseYAML(t, `
Type: AWS::SQS::Queue
Properties:
  RedrivePolicy: {deadLetterTargetArn: !GetAtt ExtraDeadLetterQueue.Arn, maxReceiveCount: 3}
`)
				resources(tpl)["ExtraDeadLetterQueue"] = parseYAML(t, `{Type: AWS::SQS::Queue}`)
			},
			want: []string{"dead-letter queue ExtraDeadLetterQueue has no depth alarm"},
		},
		{
			name: "a consumed queue without dead-letter queue",
			change: func(_ *testing.T, tpl map[string]any) {
				delete(props(tpl, "OptimizationQueue"), "RedrivePolicy")
			},
			want: []string{"OptimizationQueue, which OptimizerWorkerFunction consumes, has no RedrivePolicy"},
		},
		{
			name:   "a consumed queue without age alarm",
			change: func(_ *testing.T, tpl map[string]any) { delete(resources(tpl), "OptimizationQueueAgeAlarm") },
			want:   []string{"OptimizationQueue has no ApproximateAgeOfOldestMessage alarm"},
		},
		{
			name:   "an API without 5xx alarm",
			change: func(_ *testing.T, tpl map[string]any) { delete(resources(tpl), "HttpApi5xxAlarm") },
			want:   []string{"HttpApi has no 5xx alarm"},
		},
		{
			name:   "an API without throttling",
			change: func(_ *testing.T, tpl map[string]any) { delete(props(tpl, "HttpApi"), "DefaultRouteSettings") },
			want:   []string{"HttpApi has no DefaultRouteSettings.ThrottlingRateLimit"},
		},
		{
			name: "a new index without throttle alarm",
			change: func(t *testing.T, tpl map[string]any) {
				p := props(tpl, "Table")
				p["GlobalSecondaryIndexes"] = append(p["GlobalSecondaryIndexes"].([]any), parseYAML(t, `{IndexName: GSI9}`))
			},
			want: []string{"Table has no alarm on ReadThrottleEvents of GSI9", "Table has no alarm on WriteThrottleEvents of GSI9"},
		},
		{
			name: "an alarm nobody hears",
			change: func(_ *testing.T, tpl map[string]any) {
				delete(props(tpl, "TableThrottlesAlarm"), "AlarmActions")
			},
			want: []string{"alarm TableThrottlesAlarm does not notify the alarm topic"},
		},
		{
			name: "attachments kept forever",
			change: func(_ *testing.T, tpl map[string]any) {
				lc := mapAt(props(tpl, "Bucket"), "LifecycleConfiguration")
				lc["Rules"] = slices.DeleteFunc(slices.Clone(lc["Rules"].([]any)), func(r any) bool {
					return strings.Contains(fmt.Sprint(r), "attachments/")
				})
			},
			want: []string{"no lifecycle rule expires attachments/"},
		},
		{
			name: "multipart uploads kept forever",
			change: func(_ *testing.T, tpl map[string]any) {
				lc := mapAt(props(tpl, "Bucket"), "LifecycleConfiguration")
				lc["Rules"] = lc["Rules"].([]any)[1:]
			},
			want: []string{"no unconditional lifecycle rule aborts incomplete multipart uploads after 1 day"},
		},
		{
			name: "a span writer that does not know the retention",
			change: func(_ *testing.T, tpl map[string]any) {
				delete(mapAt(mapAt(props(tpl, "GatewayFunction"), "Environment"), "Variables"), "PLUME_SPAN_RETENTION_DAYS")
			},
			want: []string{"GatewayFunction writes spans/ but has no PLUME_SPAN_RETENTION_DAYS"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tpl := loadTemplate(t)
			if tt.change != nil {
				tt.change(t, tpl)
			}
			failures := record(func(r checkT) { all(r, tpl) })
			if len(tt.want) == 0 {
				assert.Empty(t, failures)
			}
			for _, want := range tt.want {
				assert.True(t, slices.ContainsFunc(failures, func(f string) bool { return strings.Contains(f, want) }),
					"no failure mentions %q; the failures:\n%s", want, strings.Join(failures, "\n"))
			}
		})
	}
}

// checkLogGroups: every function logs to a log group of the template (its LoggingConfig.LogGroup,
// or one named /aws/lambda/<function>) that expires its events after LogRetentionDays.
func checkLogGroups(t checkT, tpl map[string]any) {
	t.Helper()
	groups := resourcesOfType(tpl, typeLogGroup)
	for _, id := range functionIDs(tpl) {
		var group map[string]any
		if r, ok := mapAt(mapAt(functionResource(tpl, id), "Properties"), "LoggingConfig")["LogGroup"].(map[string]any); ok {
			group = groups[fmt.Sprint(r["Ref"])]
		}
		for _, g := range groups {
			name := mapAt(g, "Properties")["LogGroupName"]
			if reflect.DeepEqual(name, map[string]any{"Fn::Sub": "/aws/lambda/${" + id + "}"}) {
				group = g
			}
		}
		if !assert.NotNil(t, group, "%s has no log group: set its LoggingConfig.LogGroup to an %s of the template", id, typeLogGroup) {
			continue
		}
		assert.Equal(t, ref("LogRetentionDays"), mapAt(group, "Properties")["RetentionInDays"],
			"%s has no log group with RetentionInDays: !Ref LogRetentionDays", id)
	}
}

// checkFunctionAlarms: every function has an alarm on any error and on any throttle.
func checkFunctionAlarms(t checkT, tpl map[string]any) {
	t.Helper()
	for _, id := range functionIDs(tpl) {
		dims := map[string]any{"FunctionName": ref(id)}
		for _, metric := range []string{"Errors", "Throttles"} {
			assert.NotEmpty(t, alarmsOn(tpl, "AWS/Lambda", metric, dims, firesOnAny),
				"%s has no %s alarm (AWS/Lambda %s > 0, FunctionName !Ref %s)", id, metric, metric, id)
		}
	}
}

// checkAsyncFunctions: a function that Lambda invokes asynchronously (an asynchronous event, or
// an EventInvokeConfig for direct asynchronous invokes) has an alarm on the age of its queued
// events and, unless a clock is all that invokes it, keeps the events that failed every
// attempt (an on-failure destination or a DeadLetterQueue). An EventBridge rule keeps the
// events it could not deliver (its DeadLetterConfig).
func checkAsyncFunctions(t checkT, tpl map[string]any) {
	t.Helper()
	for _, id := range functionIDs(tpl) {
		props := mapAt(functionResource(tpl, id), "Properties")
		invokeConfig := props["EventInvokeConfig"] != nil
		asyncEvents, dataEvents := false, false
		for _, name := range slices.Sorted(maps.Keys(mapAt(props, "Events"))) {
			ev := mapAt(mapAt(props, "Events"), name)
			typ := fmt.Sprint(ev["Type"])
			if !slices.Contains(asyncEventTypes, typ) {
				continue
			}
			asyncEvents = true
			dataEvents = dataEvents || !slices.Contains(clockEventTypes, typ)
			if typ == "EventBridgeRule" || typ == "CloudWatchEvent" {
				assert.NotNil(t, mapAt(mapAt(ev, "Properties"), "DeadLetterConfig")["Arn"],
					"event %s of %s has no DeadLetterConfig: events the rule cannot deliver are lost", name, id)
			}
		}
		if !asyncEvents && !invokeConfig {
			continue
		}
		assert.NotEmpty(t, alarmsOn(tpl, "AWS/Lambda", "AsyncEventAge", map[string]any{"FunctionName": ref(id)}, nil),
			"%s has no AsyncEventAge alarm (FunctionName !Ref %s)", id, id)
		if asyncEvents && !dataEvents {
			continue // ticks only
		}
		onFailure := mapAt(mapAt(mapAt(props, "EventInvokeConfig"), "DestinationConfig"), "OnFailure")["Destination"]
		dlq := mapAt(props, "DeadLetterQueue")["TargetArn"]
		assert.True(t, onFailure != nil || dlq != nil,
			"%s is invoked asynchronously without an on-failure destination (EventInvokeConfig.DestinationConfig.OnFailure) or DeadLetterQueue", id)
	}
}

// checkQueueConsumers: a queue that a function consumes (an SQS event) sends the messages that
// fail maxReceiveCount times to a dead-letter queue, and has an alarm on the age of its oldest
// message (work that waits, or fails and comes back).
func checkQueueConsumers(t checkT, tpl map[string]any) {
	t.Helper()
	for _, id := range functionIDs(tpl) {
		for _, ev := range mapAt(mapAt(functionResource(tpl, id), "Properties"), "Events") {
			if asMap(ev)["Type"] != "SQS" {
				continue
			}
			queue := resourceOf(mapAt(asMap(ev), "Properties")["Queue"])
			q, ok := resourcesOfType(tpl, typeQueue)[queue]
			if !assert.True(t, ok, "%s consumes %v, which is no %s of the template", id, queue, typeQueue) {
				continue
			}
			assert.NotNil(t, mapAt(mapAt(q, "Properties"), "RedrivePolicy")["deadLetterTargetArn"],
				"%s, which %s consumes, has no RedrivePolicy: a message that always fails is delivered until it expires", queue, id)
			assert.NotEmpty(t, alarmsOn(tpl, "AWS/SQS", "ApproximateAgeOfOldestMessage", map[string]any{"QueueName": getAtt(queue, "QueueName")}, nil),
				"%s has no ApproximateAgeOfOldestMessage alarm", queue)
		}
	}
}

// checkDeadLetterQueues: every queue that receives what failed (a redrive target, a function's
// on-failure destination or DeadLetterQueue, an event's DeadLetterConfig) alarms as soon as it
// holds a message.
func checkDeadLetterQueues(t checkT, tpl map[string]any) {
	t.Helper()
	dlqs := map[string]bool{}
	for _, q := range resourcesOfType(tpl, typeQueue) {
		if arn := mapAt(mapAt(q, "Properties"), "RedrivePolicy")["deadLetterTargetArn"]; arn != nil {
			dlqs[resourceOf(arn)] = true
		}
	}
	for _, id := range functionIDs(tpl) {
		props := mapAt(functionResource(tpl, id), "Properties")
		if d := mapAt(mapAt(mapAt(props, "EventInvokeConfig"), "DestinationConfig"), "OnFailure"); d["Type"] == "SQS" {
			dlqs[resourceOf(d["Destination"])] = true
		}
		if d := mapAt(props, "DeadLetterQueue"); d["Type"] == "SQS" {
			dlqs[resourceOf(d["TargetArn"])] = true
		}
		for _, ev := range mapAt(props, "Events") {
			if arn := mapAt(mapAt(asMap(ev), "Properties"), "DeadLetterConfig")["Arn"]; arn != nil {
				dlqs[resourceOf(arn)] = true
			}
		}
	}
	require.NotEmpty(t, dlqs, "the template has no dead-letter queue: this check would prove nothing")
	queues := resourcesOfType(tpl, typeQueue)
	for _, q := range slices.Sorted(maps.Keys(dlqs)) {
		if !assert.Contains(t, queues, q, "dead-letter queue %s is no %s of the template", q, typeQueue) {
			continue
		}
		assert.NotEmpty(t, alarmsOn(tpl, "AWS/SQS", "ApproximateNumberOfMessagesVisible", map[string]any{"QueueName": getAtt(q, "QueueName")}, firesOnAny),
			"dead-letter queue %s has no depth alarm (ApproximateNumberOfMessagesVisible > 0)", q)
	}
}

// checkHTTPAPIs: every HTTP API throttles its default route by the parameters and has an alarm
// on its 5xx answers (a count or a rate).
func checkHTTPAPIs(t checkT, tpl map[string]any) {
	t.Helper()
	apis := resourcesOfType(tpl, typeHTTPAPI)
	require.NotEmpty(t, apis, "the template has no %s", typeHTTPAPI)
	for _, id := range slices.Sorted(maps.Keys(apis)) {
		settings := mapAt(mapAt(apis[id], "Properties"), "DefaultRouteSettings")
		assert.Equal(t, ref("ApiThrottlingRateLimit"), settings["ThrottlingRateLimit"], "%s has no DefaultRouteSettings.ThrottlingRateLimit", id)
		assert.Equal(t, ref("ApiThrottlingBurstLimit"), settings["ThrottlingBurstLimit"], "%s has no DefaultRouteSettings.ThrottlingBurstLimit", id)
		assert.NotEmpty(t, alarmsOn(tpl, "AWS/ApiGateway", "5xx", map[string]any{"ApiId": ref(id)}, nil), "%s has no 5xx alarm", id)
	}
}

// checkTableAlarms: every table has an alarm on throttled reads and writes of the table and of
// each of its global secondary indexes (an index that throttles throttles the table's writes).
func checkTableAlarms(t checkT, tpl map[string]any) {
	t.Helper()
	tables := resourcesOfType(tpl, typeTable)
	require.NotEmpty(t, tables, "the template has no %s", typeTable)
	for _, id := range slices.Sorted(maps.Keys(tables)) {
		targets := map[string]map[string]any{"the table": {"TableName": ref(id)}}
		gsis, _ := mapAt(tables[id], "Properties")["GlobalSecondaryIndexes"].([]any)
		for _, g := range gsis {
			name := fmt.Sprint(asMap(g)["IndexName"])
			targets[name] = map[string]any{"TableName": ref(id), "GlobalSecondaryIndexName": name}
		}
		for _, what := range slices.Sorted(maps.Keys(targets)) {
			for _, metric := range []string{"ReadThrottleEvents", "WriteThrottleEvents"} {
				assert.NotEmpty(t, alarmsOn(tpl, "AWS/DynamoDB", metric, targets[what], nil),
					"%s has no alarm on %s of %s", id, metric, what)
			}
		}
	}
}

// checkAlarmActions: every alarm notifies the alarm topic going into alarm and back to OK, and
// missing data (no invocations, an empty queue) is not an alarm.
func checkAlarmActions(t checkT, tpl map[string]any) {
	t.Helper()
	alarms := resourcesOfType(tpl, typeAlarm)
	require.NotEmpty(t, alarms, "the template has no %s", typeAlarm)
	for _, id := range slices.Sorted(maps.Keys(alarms)) {
		props := mapAt(alarms[id], "Properties")
		assert.Equal(t, alarmTopic, props["AlarmActions"], "alarm %s does not notify the alarm topic (AlarmActions)", id)
		assert.Equal(t, alarmTopic, props["OKActions"], "alarm %s does not notify the alarm topic when it clears (OKActions)", id)
		assert.Equal(t, "notBreaching", props["TreatMissingData"], "alarm %s: TreatMissingData must be notBreaching", id)
	}
	topic := templateResource(t, tpl, "AlarmTopic", "AWS::SNS::Topic")
	assert.Equal(t, "CreateAlarmTopic", topic["Condition"], "AlarmTopic is created only when AlarmTopicArn is empty")
}

// checkSpanRetention: the bucket always aborts incomplete multipart uploads after a day and,
// when SpanRetentionDays is above 0, expires span batches, attachments and the list index's
// runs after that many days; every function that writes span batches or list index runs is
// told the retention (the TTL of the index items it writes).
func checkSpanRetention(t checkT, tpl map[string]any) {
	t.Helper()
	buckets := resourcesOfType(tpl, typeBucket)
	require.NotEmpty(t, buckets, "the template has no %s", typeBucket)
	for _, id := range slices.Sorted(maps.Keys(buckets)) {
		rules, _ := mapAt(mapAt(buckets[id], "Properties"), "LifecycleConfiguration")["Rules"].([]any)
		abort := false
		expires := map[string]bool{}
		for _, r := range rules {
			rule, _ := r.(map[string]any)
			if mapAt(rule, "AbortIncompleteMultipartUpload")["DaysAfterInitiation"] == 1 && rule["Status"] == "Enabled" {
				abort = true
			}
			cond, _ := rule["Fn::If"].([]any)
			if len(cond) != 3 || cond[0] != "HasSpanRetention" || !reflect.DeepEqual(cond[2], ref("AWS::NoValue")) {
				continue
			}
			rule, _ = cond[1].(map[string]any)
			if rule["Status"] == "Enabled" && reflect.DeepEqual(rule["ExpirationInDays"], ref("SpanRetentionDays")) {
				expires[fmt.Sprint(rule["Prefix"])] = true
			}
		}
		assert.True(t, abort, "%s: no unconditional lifecycle rule aborts incomplete multipart uploads after 1 day", id)
		for _, prefix := range []string{"spans/", "attachments/", "index/"} {
			assert.True(t, expires[prefix],
				"%s: no lifecycle rule expires %s after SpanRetentionDays (!If [HasSpanRetention, rule, !Ref AWS::NoValue])", id, prefix)
		}
	}
	for _, id := range functionIDs(tpl) {
		props := mapAt(functionResource(tpl, id), "Properties")
		if props["Policies"] == nil {
			continue // no policy, no spans written (TestFunctionsLeastPrivilege fails it)
		}
		var writes string
		for _, st := range allowStatements(t, props["Policies"]) {
			if !slices.Contains(stringsOf(st["Action"]), "s3:PutObject") {
				continue
			}
			for _, prefix := range []string{"spans/", "index/"} {
				if slices.ContainsFunc(stringsOfAny(st["Resource"]), func(r any) bool {
					return reflect.DeepEqual(r, map[string]any{"Fn::Sub": "${Bucket.Arn}/" + prefix + "*"})
				}) {
					writes = prefix
				}
			}
		}
		if writes != "" {
			assert.Equal(t, ref("SpanRetentionDays"), mapAt(mapAt(props, "Environment"), "Variables")["PLUME_SPAN_RETENTION_DAYS"],
				"%s writes %s but has no PLUME_SPAN_RETENTION_DAYS: !Ref SpanRetentionDays", id, writes)
		}
	}
}

// metric is one CloudWatch metric an alarm reads.
type metric struct {
	namespace, name string
	dims            map[string]any // dimension name -> value, as the template writes it
}

// alarmMetrics returns the metrics alarm reads: its single metric, or each MetricStat of its
// metric math.
func alarmMetrics(alarm map[string]any) []metric {
	props := mapAt(alarm, "Properties")
	one := func(m map[string]any) metric {
		dims := map[string]any{}
		list, _ := m["Dimensions"].([]any)
		for _, d := range list {
			dm, _ := d.(map[string]any)
			dims[fmt.Sprint(dm["Name"])] = normalize(dm["Value"])
		}
		return metric{namespace: fmt.Sprint(m["Namespace"]), name: fmt.Sprint(m["MetricName"]), dims: dims}
	}
	if props["MetricName"] != nil {
		return []metric{one(props)}
	}
	var out []metric
	list, _ := props["Metrics"].([]any)
	for _, m := range list {
		q, _ := m.(map[string]any)
		if stat := mapAt(mapAt(q, "MetricStat"), "Metric"); len(stat) > 0 {
			out = append(out, one(stat))
		}
	}
	return out
}

// alarmsOn returns the alarms that read the metric namespace/name with exactly dims and, when
// want is not nil, for which want holds.
func alarmsOn(tpl map[string]any, namespace, name string, dims map[string]any, want func(alarm map[string]any) bool) []string {
	var out []string
	for id, a := range resourcesOfType(tpl, typeAlarm) {
		if want != nil && !want(a) {
			continue
		}
		if slices.ContainsFunc(alarmMetrics(a), func(m metric) bool {
			return m.namespace == namespace && m.name == name && reflect.DeepEqual(m.dims, dims)
		}) {
			out = append(out, id)
		}
	}
	return out
}

// firesOnAny reports whether a single-metric alarm fires on any datapoint above 0 (the first
// error, throttle or dead letter).
func firesOnAny(alarm map[string]any) bool {
	p := mapAt(alarm, "Properties")
	switch p["ComparisonOperator"] {
	case "GreaterThanThreshold":
		return fmt.Sprint(p["Threshold"]) == "0"
	case "GreaterThanOrEqualToThreshold":
		return fmt.Sprint(p["Threshold"]) == "1"
	}
	return false
}

// asMap returns v as a map, or an empty map.
func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	if m == nil {
		return map[string]any{}
	}
	return m
}

// ref returns the long form of !Ref id.
func ref(id string) map[string]any { return map[string]any{"Ref": id} }

// getAtt returns the long form of !GetAtt id.attr, as plain keeps the short form.
func getAtt(id, attr string) map[string]any { return map[string]any{"Fn::GetAtt": id + "." + attr} }

// normalize writes Fn::GetAtt in its dotted string form, whichever form the template used.
func normalize(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	if l, ok := m["Fn::GetAtt"].([]any); ok && len(l) == 2 {
		return getAtt(fmt.Sprint(l[0]), fmt.Sprint(l[1]))
	}
	return v
}

// resourceOf returns the logical id that !Ref id or !GetAtt id.Attr refers to, or "".
func resourceOf(v any) string {
	m, _ := normalize(v).(map[string]any)
	if r, ok := m["Ref"].(string); ok {
		return r
	}
	if s, ok := m["Fn::GetAtt"].(string); ok {
		id, _, _ := strings.Cut(s, ".")
		return id
	}
	return ""
}

// stringsOfAny returns a Resource value as a list: one value or a list of values.
func stringsOfAny(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	return []any{v}
}
