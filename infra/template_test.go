package infra_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/plumehq/plume/infra"
	"github.com/plumehq/plume/internal/stack"
)

// Paths relative to this package's directory, where `go test` runs.
const (
	repoRoot          = ".."
	templatePath      = "../template.yaml"
	makefilePath      = "../Makefile"
	localTablePath    = "../localstack/table.json"
	localInitHookPath = "../localstack/init/ready.d/10-plume.sh"
)

const typeFunction = "AWS::Serverless::Function"

// functionCase is what one function of template.yaml is checked against.
type functionCase struct {
	// routes are exactly the route keys of its HttpApi events: its area's route variable (the
	// same keys plume-local mounts) and any public route it serves besides.
	routes []string
	// worker is true for a function without HTTP routes (a queue or schedule consumer); it
	// must then have no HttpApi events.
	worker bool
	policy policyCase
}

// policyCase is a function's least privilege.
type policyCase struct {
	actions   []string // exactly the actions the function is allowed
	forbidden []string // actions ("dynamodb:Scan") or whole services ("s3:") never to grant
	// s3 is exactly the bucket paths (Fn::Sub strings) each S3 action is allowed on.
	s3 map[string][]string
	// listPrefixes are exactly the s3:prefix values (StringLike) that s3:ListBucket, granted
	// on the whole bucket, is restricted to: a grant without that condition lists everything.
	listPrefixes []string
	// keys are, by action, the partitions it is confined to: every Allow statement granting
	// it must allow exactly keys[action].allow (dynamodb:LeadingKeys, ForAllValues:StringLike)
	// and a Deny statement of it must take back exactly keys[action].deny (ForAnyValue), but
	// for keys[action].spared (ForAllValues:StringNotLike).
	keys map[string]keyScope
}

// keyScope is the partition key patterns an action is allowed on, those taken back, and those
// of the taken back that stay allowed.
type keyScope struct{ allow, deny, spared []string }

// deletesInProject confines DeleteItem to the items of the project's own partition
// (P#<project id>: price overrides), none of the partitions under it, and allow's others.
func deletesInProject(allow ...string) map[string]keyScope {
	return map[string]keyScope{"dynamodb:DeleteItem": {allow: append(allow, "P#*"), deny: []string{"P#*#*"}}}
}

// functionCases holds every function of template.yaml, by logical id. The list of functions is
// read from the template, not from here: a function without an entry fails the routes, IAM
// and coverage checks, and one without a Makefile target fails the build check. The routes of
// an HTTP function are those of its app.Function in internal/stack, the list plume-local
// serves: a template function the stack does not serve has no routes and fails.
var functionCases = map[string]functionCase{
	"PromptsFunction": {
		routes: stackRoutes("PromptsFunction"),
		policy: policyCase{
			actions: []string{
				"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query",
				"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:ConditionCheckItem",
			},
			// Never Scan on a request path; no prompts request deletes items or touches S3.
			forbidden: []string{"dynamodb:Scan", "dynamodb:DeleteItem", "s3:"},
		},
	},
	"TracingIngestFunction": {
		routes: stackRoutes("TracingIngestFunction"),
		policy: policyCase{
			actions: []string{
				"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:PutItem", "dynamodb:UpdateItem",
				"s3:PutObject", "s3:GetObject",
			},
			// Ingestion writes and merges (the aggregates are the stream consumer's); it never
			// deletes items or objects, scans or lists.
			forbidden: []string{"dynamodb:Scan", "dynamodb:DeleteItem", "dynamodb:TransactWriteItems", "s3:DeleteObject", "s3:ListBucket"},
			// Batch objects are read back to merge; attachments are only written (extraction and
			// presigned uploads).
			s3: map[string][]string{
				"s3:PutObject": {"${Bucket.Arn}/spans/*", "${Bucket.Arn}/attachments/*"},
				"s3:GetObject": {"${Bucket.Arn}/spans/*"},
			},
		},
	},
	"TracingQueryFunction": {
		routes: stackRoutes("TracingQueryFunction"),
		policy: policyCase{
			actions: []string{"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "s3:GetObject", "s3:ListBucket"},
			// The function that reads spans can neither change nor delete them.
			forbidden: []string{"dynamodb:Scan", "dynamodb:DeleteItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "s3:PutObject", "s3:DeleteObject"},
			// Attachments: the permission its presigned GET URLs carry, and the listing of a
			// span's attachment objects that gives their stored sizes.
			s3: map[string][]string{
				"s3:GetObject":  {"${Bucket.Arn}/spans/*", "${Bucket.Arn}/attachments/*", "${Bucket.Arn}/index/*"},
				"s3:ListBucket": {"${Bucket.Arn}"},
			},
			listPrefixes: []string{"attachments/*"},
		},
	},
	"OTLPFunction": {
		routes: stackRoutes("OTLPFunction"),
		policy: policyCase{
			actions: []string{
				"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:PutItem", "dynamodb:UpdateItem",
				"s3:PutObject", "s3:GetObject",
			},
			forbidden: []string{"dynamodb:Scan", "dynamodb:DeleteItem", "dynamodb:TransactWriteItems", "s3:DeleteObject", "s3:ListBucket"},
			// The same ingestion as TracingIngestFunction: attachments are extracted too.
			s3: map[string][]string{
				"s3:PutObject": {"${Bucket.Arn}/spans/*", "${Bucket.Arn}/attachments/*"},
				"s3:GetObject": {"${Bucket.Arn}/spans/*"},
			},
		},
	},
	"SettingsFunction": {
		routes: stackRoutes("SettingsFunction"),
		policy: policyCase{
			actions: []string{
				"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:PutItem", "dynamodb:UpdateItem",
				"dynamodb:DeleteItem", "dynamodb:ConditionCheckItem",
			},
			// Prices, API keys and the gateway limits' sums (one BatchGetItem) only: no S3, no
			// Scan, no batch writes.
			forbidden: []string{"dynamodb:Scan", "dynamodb:BatchWriteItem", "s3:"},
			keys:      deletesInProject(),
		},
	},
	"JudgesFunction": {
		routes: stackRoutes("JudgesFunction"),
		policy: policyCase{
			actions: []string{
				"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query",
				"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:ConditionCheckItem", "s3:PutObject",
			},
			// Judges are paused, never deleted; evaluations are replaced, never deleted. The
			// only object it writes is a backfill request; it reads none.
			forbidden: []string{"dynamodb:Scan", "dynamodb:DeleteItem", "s3:GetObject", "s3:DeleteObject", "s3:ListBucket"},
			s3:        map[string][]string{"s3:PutObject": {"${Bucket.Arn}/backfills/*"}},
		},
	},
	"FeedbackFunction": {
		routes: stackRoutes("FeedbackFunction"),
		policy: policyCase{
			actions: []string{
				"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query",
				"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:ConditionCheckItem", "s3:GetObject",
			},
			// Links are revoked, not deleted; the pages only read span batches.
			forbidden: []string{"dynamodb:Scan", "dynamodb:DeleteItem", "s3:PutObject", "s3:DeleteObject", "s3:ListBucket"},
			s3:        map[string][]string{"s3:GetObject": {"${Bucket.Arn}/spans/*"}},
		},
	},
	"SignalsFunction": {
		routes: stackRoutes("SignalsFunction"),
		policy: policyCase{
			actions: []string{
				"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:PutItem", "dynamodb:UpdateItem",
			},
			// Records and aggregates are only ever put and added to; no object is touched.
			forbidden: []string{"dynamodb:Scan", "dynamodb:DeleteItem", "s3:"},
		},
	},
	"DatasetsFunction": {
		routes: stackRoutes("DatasetsFunction"),
		policy: policyCase{
			actions: []string{
				"dynamodb:GetItem", "dynamodb:Query", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:ConditionCheckItem",
				"s3:PutObject", "s3:GetObject", "s3:DeleteObject",
			},
			// Datasets are immutable versions, never deleted; committed uploads are.
			forbidden: []string{"dynamodb:Scan", "dynamodb:DeleteItem", "s3:ListBucket"},
			s3: map[string][]string{
				"s3:PutObject": {"${Bucket.Arn}/datasets/*", "${Bucket.Arn}/experiment-judges/*"}, "s3:GetObject": {"${Bucket.Arn}/datasets/*"}, "s3:DeleteObject": {"${Bucket.Arn}/datasets/*"},
			},
		},
	},
	"OptimizerFunction": {
		routes: stackRoutes("OptimizerFunction"),
		policy: policyCase{
			actions: []string{
				"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:PutItem", "dynamodb:UpdateItem",
				"dynamodb:ConditionCheckItem", "sqs:SendMessage", "s3:GetObject",
			},
			// It queues runs and deploys their candidates; the worker runs them. No model; span
			// batches read only, for the proposals, and dataset versions' rows, to check a run's
			// columns.
			forbidden: []string{"dynamodb:Scan", "dynamodb:DeleteItem", "s3:PutObject", "s3:DeleteObject", "s3:ListBucket", "bedrock:", "secretsmanager:"},
			s3:        map[string][]string{"s3:GetObject": {"${Bucket.Arn}/spans/*", "${Bucket.Arn}/datasets/*"}},
		},
	},
	"OptimizerWorkerFunction": {
		worker: true,
		policy: policyCase{
			actions: []string{
				"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:PutItem",
				"s3:GetObject", "s3:PutObject", "sqs:SendMessage", "bedrock:InvokeModel", "secretsmanager:GetSecretValue",
			},
			// The worker writes runs, cached answers and checkpoints only: never a prompt
			// version (a person deploys), never a deletion.
			forbidden: []string{"dynamodb:Scan", "dynamodb:DeleteItem", "dynamodb:UpdateItem", "s3:DeleteObject", "s3:ListBucket"},
			s3: map[string][]string{
				"s3:GetObject": {"${Bucket.Arn}/spans/*", "${Bucket.Arn}/datasets/*", "${Bucket.Arn}/optimizations/*"},
				"s3:PutObject": {"${Bucket.Arn}/optimizations/*"},
			},
		},
	}, "RollupFunction": {
		worker: true,
		policy: policyCase{
			actions: []string{
				"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:PutItem", "dynamodb:UpdateItem",
				"dynamodb:Query",
				"dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator", "dynamodb:ListStreams",
				"s3:PutObject", "s3:GetObject", "s3:DeleteObject",
			},
			// The consumer adds to rollup items, keeps the list index, the feedback index (which
			// queries a span's partition and GSI3) and the derived signals of spans in A/B tests
			// (whose feedback it counts with a Query of the span's partition): it deletes or
			// scans nothing, and
			// touches no object outside index/.
			forbidden: []string{"dynamodb:Scan", "dynamodb:DeleteItem", "s3:ListBucket"},
			s3: map[string][]string{
				"s3:PutObject":    {"${Bucket.Arn}/index/*"},
				"s3:GetObject":    {"${Bucket.Arn}/index/*"},
				"s3:DeleteObject": {"${Bucket.Arn}/index/*"},
			},
		},
	},

	"MCPFunction": {
		routes: stackRoutes("MCPFunction"),
		policy: policyCase{
			// The union of the areas its tools call in-process (prompts, tracing queries, judges,
			// feedback, optimization runs, signals; the reads of datasets, webhooks and the event
			// log; monitors' reads and creation), and nothing more.
			actions: []string{
				"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:PutItem", "dynamodb:UpdateItem",
				"dynamodb:ConditionCheckItem", "s3:GetObject", "s3:ListBucket", "s3:PutObject", "sqs:SendMessage",
			},
			// No tool deletes; no model is called and no secret read here (the workers do that).
			forbidden: []string{"dynamodb:Scan", "dynamodb:DeleteItem", "s3:DeleteObject", "bedrock:", "secretsmanager:"},
			s3: map[string][]string{
				"s3:GetObject":  {"${Bucket.Arn}/spans/*", "${Bucket.Arn}/attachments/*", "${Bucket.Arn}/index/*", "${Bucket.Arn}/datasets/*"},
				"s3:ListBucket": {"${Bucket.Arn}"},
				"s3:PutObject":  {"${Bucket.Arn}/backfills/*"},
			},
			listPrefixes: []string{"attachments/*"},
		},
	},
	"GatewayFunction": {
		routes: stackRoutes("GatewayFunction"),
		policy: policyCase{
			// The caller's key, a prompt version's binding, the project's prices, the limits'
			// counters, a traced call's span as POST /spans writes it; the providers: Bedrock
			// and the provider secret when set.
			actions: []string{"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:PutItem",
				"dynamodb:UpdateItem", "s3:PutObject", "s3:GetObject",
				"bedrock:InvokeModel", "bedrock:InvokeModelWithResponseStream", "secretsmanager:GetSecretValue"},
			forbidden: []string{"dynamodb:Scan", "dynamodb:DeleteItem", "s3:DeleteObject", "s3:ListBucket"},
			s3: map[string][]string{
				"s3:PutObject": {"${Bucket.Arn}/spans/*", "${Bucket.Arn}/attachments/*"},
				"s3:GetObject": {"${Bucket.Arn}/spans/*"},
			},
		},
	},
	"DashboardFunction": {
		routes: stackRoutes("DashboardFunction"),
		policy: policyCase{
			// The union of the areas its pages call in-process (prompts, tracing queries, judges,
			// feedback, settings, optimization runs, signals, monitors, webhooks and the event
			// log, the datasets area's reads) and its sessions, and nothing more.
			actions: []string{
				"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:PutItem", "dynamodb:UpdateItem",
				"dynamodb:DeleteItem", "dynamodb:ConditionCheckItem", "s3:GetObject", "s3:ListBucket", "s3:PutObject", "sqs:SendMessage",
			},
			// No model is called and no secret read here (the workers do that).
			forbidden: []string{"dynamodb:Scan", "s3:DeleteObject", "bedrock:", "secretsmanager:"},
			s3: map[string][]string{
				"s3:GetObject":  {"${Bucket.Arn}/spans/*", "${Bucket.Arn}/attachments/*", "${Bucket.Arn}/index/*", "${Bucket.Arn}/datasets/*"},
				"s3:ListBucket": {"${Bucket.Arn}"},
				"s3:PutObject":  {"${Bucket.Arn}/backfills/*"},
			},
			listPrefixes: []string{"attachments/*"},
			// Its sessions, and the project's webhooks and monitors (their pages).
			keys: map[string]keyScope{"dynamodb:DeleteItem": {allow: []string{"WEBSESSION#*", "P#*"}, deny: []string{"P#*#*"},
				spared: []string{"P#*#WH", "P#*#MON"}}},
		},
	},
	"EvaluatorFunction": {
		worker: true,
		policy: policyCase{
			actions: []string{
				"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:PutItem", "dynamodb:UpdateItem",
				"dynamodb:ConditionCheckItem",
				"s3:GetObject", "s3:PutObject", "sqs:SendMessage", "bedrock:InvokeModel", "secretsmanager:GetSecretValue",
			},
			// The runner reads spans and writes evaluations and claims: it deletes nothing,
			// writes no object but the rest of a judge request about an experiment, and calls
			// no model with anything but Converse/InvokeModel.
			forbidden: []string{"dynamodb:Scan", "dynamodb:DeleteItem", "s3:DeleteObject", "s3:ListBucket", "bedrock:InvokeModelWithResponseStream"},
			s3: map[string][]string{
				"s3:GetObject": {"${Bucket.Arn}/spans/*", "${Bucket.Arn}/backfills/*", "${Bucket.Arn}/attachments/*", "${Bucket.Arn}/index/*", "${Bucket.Arn}/datasets/*", "${Bucket.Arn}/experiment-judges/*"},
				"s3:PutObject": {"${Bucket.Arn}/experiment-judges/*"},
			},
		},
	},
	"WebhooksFunction": {
		routes: stackRoutes("WebhooksFunction"),
		policy: policyCase{
			actions: []string{"dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:PutItem", "dynamodb:DeleteItem", "sqs:SendMessage"},
			// Deletes a webhook's item only; reads no object, calls no model.
			forbidden: []string{"dynamodb:Scan", "dynamodb:UpdateItem", "s3:", "bedrock:", "secretsmanager:"},
			keys:      map[string]keyScope{"dynamodb:DeleteItem": {allow: []string{"P#*#WH"}}},
		},
	},
	"EventsFunction": {
		worker: true,
		policy: policyCase{
			actions: []string{"dynamodb:Query", "dynamodb:PutItem", "sqs:SendMessage", "events:PutEvents",
				"dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator", "dynamodb:ListStreams"},
			forbidden: []string{"dynamodb:Scan", "dynamodb:DeleteItem", "dynamodb:UpdateItem", "s3:", "bedrock:", "secretsmanager:"},
		},
	},
	"MonitorsFunction": {
		routes: stackRoutes("MonitorsFunction"),
		policy: policyCase{
			actions: []string{"dynamodb:Query", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"},
			// Deletes a monitor's item only; reads no object, calls no model, queues nothing.
			forbidden: []string{"dynamodb:Scan", "s3:", "sqs:", "bedrock:", "secretsmanager:"},
			keys:      map[string]keyScope{"dynamodb:DeleteItem": {allow: []string{"P#*#MON"}}},
		},
	},
	"MonitorFunction": {
		worker: true,
		policy: policyCase{
			actions: []string{"dynamodb:Query", "dynamodb:UpdateItem", "dynamodb:BatchGetItem"},
			// Reads the rollups, the monitors and the gateway's daily spend counters (gateway_spend),
			// writes a monitor's state only: never a span.
			forbidden: []string{"dynamodb:Scan", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:DeleteItem", "s3:", "sqs:", "bedrock:", "secretsmanager:"},
			keys: map[string]keyScope{"dynamodb:UpdateItem": {allow: []string{"P#*#MON"}},
				"dynamodb:BatchGetItem": {allow: []string{"P#*#RL#*"}}},
		},
	},
	"WebhookDeliveryFunction": {
		worker: true,
		policy: policyCase{
			actions:   []string{"dynamodb:BatchGetItem", "dynamodb:PutItem", "sqs:SendMessage"},
			forbidden: []string{"dynamodb:Scan", "dynamodb:Query", "dynamodb:DeleteItem", "s3:", "bedrock:", "secretsmanager:"},
		},
	},
}

func TestTemplateMatchesSchema(t *testing.T) {
	table := templateResource(t, loadTemplate(t), "Table", "AWS::DynamoDB::Table")
	props := mapAt(table, "Properties")

	assert.Equal(t, shapeOfInput(infra.TableDefinition("x")), shapeOfJSON(t, props),
		"template.yaml Table must declare exactly infra.TableDefinition")

	ttl := mapAt(props, "TimeToLiveSpecification")
	assert.Equal(t, infra.AttrTTL, ttl["AttributeName"], "TTL attribute")
	assert.Equal(t, true, ttl["Enabled"], "TTL enabled")
}

func TestLocalstackTableMatchesSchema(t *testing.T) {
	raw, err := os.ReadFile(localTablePath)
	require.NoError(t, err)
	var def map[string]any
	require.NoError(t, json.Unmarshal(raw, &def), "%s is not JSON", localTablePath)

	assert.Equal(t, shapeOfInput(infra.TableDefinition("x")), shapeOfJSON(t, def),
		"%s must declare exactly infra.TableDefinition", localTablePath)

	// create-table cannot enable TTL; the init hook does it with update-time-to-live.
	hook, err := os.ReadFile(localInitHookPath)
	require.NoError(t, err)
	assert.Contains(t, string(hook), "AttributeName="+infra.AttrTTL,
		"%s must enable TTL on %q", localInitHookPath, infra.AttrTTL)
}

// TestTemplateFunctionsAreChecked fails for a function of template.yaml that functionCases
// does not describe, and for an entry whose function is gone.
func TestTemplateFunctionsAreChecked(t *testing.T) {
	tpl := loadTemplate(t)
	require.NotEmpty(t, functionIDs(tpl), "template.yaml declares no %s", typeFunction)
	checkCases(t, tpl, functionCases)
}

func TestTemplateRoutes(t *testing.T) {
	tpl := loadTemplate(t)
	for _, id := range functionIDs(tpl) {
		t.Run(id, func(t *testing.T) { checkRoutes(t, tpl, functionCases, id) })
	}
}

func TestTemplateRoutesAreUnique(t *testing.T) {
	owner := map[string]string{}
	for id, fn := range resourcesOfType(loadTemplate(t), typeFunction) {
		for _, props := range httpAPIEvents(fn) {
			key := routeKey(props)
			if prev, ok := owner[key]; ok {
				t.Errorf("route %q is declared by both %s and %s", key, prev, id)
			}
			owner[key] = id
		}
	}
}

func TestMakefileHasBuildTargets(t *testing.T) {
	raw, err := os.ReadFile(makefilePath)
	if errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s is missing; sam build (BuildMethod: makefile) needs a build-<LogicalId> target per function in it",
			makefilePath)
	}
	require.NoError(t, err)
	checkMakefile(t, loadTemplate(t), string(raw))
}

func TestFunctionsLeastPrivilege(t *testing.T) {
	tpl := loadTemplate(t)
	for _, id := range functionIDs(tpl) {
		t.Run(id, func(t *testing.T) { checkPolicy(t, tpl, functionCases, id) })
	}
}

// TestChecksFail proves that each check above fails when the template, the Makefile or the
// table drift apart: a check that cannot fail proves nothing.
func TestChecksFail(t *testing.T) {
	raw, err := os.ReadFile(makefilePath)
	require.NoError(t, err)
	makefile := string(raw)

	// extraFunction is a new function that nothing else knows of.
	const extraFunction = `
Type: AWS::Serverless::Function
Metadata: {BuildMethod: makefile}
Properties:
  CodeUri: .
  Policies:
    - Statement:
        - {Effect: Allow, Action: [dynamodb:GetItem], Resource: !GetAtt Table.Arn}
  Events:
    Extra: {Type: HttpApi, Properties: {ApiId: !Ref HttpApi, Method: GET, Path: /extra, PayloadFormatVersion: "2.0"}}
`
	withExtra := func(t *testing.T, tpl map[string]any, _ *string, _ map[string]functionCase) {
		mapAt(tpl, "Resources")["ExtraFunction"] = parseYAML(t, extraFunction)
	}
	// Every check of the real files, as the tests above run them.
	all := func(t checkT, tpl map[string]any, makefile string, cases map[string]functionCase) {
		checkCases(t, tpl, cases)
		checkMakefile(t, tpl, makefile)
		for _, id := range functionIDs(tpl) {
			checkRoutes(t, tpl, cases, id)
			checkPolicy(t, tpl, cases, id)
		}
	}
	tests := []struct {
		name   string
		change func(t *testing.T, tpl map[string]any, makefile *string, cases map[string]functionCase)
		check  func(t checkT, tpl map[string]any, makefile string, cases map[string]functionCase)
		want   []string // each is part of some failure message; none: the check passes
	}{
		{
			name:  "the real files pass",
			check: all,
		},
		{
			name:   "new function: not in the table",
			change: withExtra,
			check:  func(t checkT, tpl map[string]any, _ string, c map[string]functionCase) { checkCases(t, tpl, c) },
			want:   []string{"ExtraFunction has no entry in functionCases"},
		},
		{
			name:   "new function: no routes case",
			change: withExtra,
			check: func(t checkT, tpl map[string]any, _ string, c map[string]functionCase) {
				checkRoutes(t, tpl, c, "ExtraFunction")
			},
			want: []string{"ExtraFunction has no entry in functionCases"},
		},
		{
			name:   "new function: no least-privilege case",
			change: withExtra,
			check: func(t checkT, tpl map[string]any, _ string, c map[string]functionCase) {
				checkPolicy(t, tpl, c, "ExtraFunction")
			},
			want: []string{"ExtraFunction has no entry in functionCases"},
		},
		{
			name:   "new function: no Makefile target, not in FUNCTIONS",
			change: withExtra,
			check:  func(t checkT, tpl map[string]any, m string, _ map[string]functionCase) { checkMakefile(t, tpl, m) },
			want:   []string{`no "build-ExtraFunction:" target`, "FUNCTIONS of ../Makefile does not list ExtraFunction"},
		},
		{
			name: "new function with a table entry but no Makefile target",
			change: func(t *testing.T, tpl map[string]any, m *string, c map[string]functionCase) {
				withExtra(t, tpl, m, c)
				c["ExtraFunction"] = functionCase{
					routes: []string{"GET /extra"},
					policy: policyCase{actions: []string{"dynamodb:GetItem"}, forbidden: []string{"dynamodb:Scan"}},
				}
			},
			check: all,
			want:  []string{`no "build-ExtraFunction:" target`, "FUNCTIONS of ../Makefile does not list ExtraFunction"},
		},
		{
			name: "a stale entry",
			change: func(_ *testing.T, tpl map[string]any, _ *string, _ map[string]functionCase) {
				delete(mapAt(tpl, "Resources"), "SettingsFunction")
			},
			check: all,
			want:  []string{"functionCases has SettingsFunction", "FUNCTIONS of ../Makefile lists SettingsFunction"},
		},
		{
			name: "a route the area does not serve",
			change: func(t *testing.T, tpl map[string]any, _ *string, _ map[string]functionCase) {
				events := mapAt(mapAt(functionResource(tpl, "JudgesFunction"), "Properties"), "Events")
				events["Extra"] = parseYAML(t, `{Type: HttpApi, Properties: {ApiId: !Ref HttpApi, Method: GET, Path: /extra, PayloadFormatVersion: "2.0"}}`)
			},
			check: all,
			want:  []string{"HttpApi events of JudgesFunction"},
		},
		{
			name: "a worker with an HTTP route",
			change: func(_ *testing.T, _ map[string]any, _ *string, c map[string]functionCase) {
				fc := c["SettingsFunction"]
				fc.worker = true
				c["SettingsFunction"] = fc
			},
			check: all,
			want:  []string{"SettingsFunction is a worker"},
		},
		{
			name: "a worker nothing invokes",
			change: func(_ *testing.T, tpl map[string]any, _ *string, _ map[string]functionCase) {
				delete(mapAt(functionResource(tpl, "MonitorFunction"), "Properties"), "Events")
			},
			check: all,
			want:  []string{"MonitorFunction is a worker without events"},
		},
		{
			name: "a forbidden action",
			change: func(t *testing.T, tpl map[string]any, _ *string, _ map[string]functionCase) {
				policies := mapAt(functionResource(tpl, "TracingQueryFunction"), "Properties")["Policies"].([]any)
				st := policies[0].(map[string]any)["Statement"].([]any)[0].(map[string]any)
				st["Action"] = append(st["Action"].([]any), "dynamodb:PutItem")
			},
			check: all,
			want:  []string{`TracingQueryFunction must not be granted "dynamodb:PutItem"`, "actions granted to TracingQueryFunction"},
		},
		{
			name: "a bucket listing without its prefix condition",
			change: func(_ *testing.T, tpl map[string]any, _ *string, _ map[string]functionCase) {
				policies := mapAt(functionResource(tpl, "TracingQueryFunction"), "Properties")["Policies"].([]any)
				for _, s := range policies[0].(map[string]any)["Statement"].([]any) {
					delete(s.(map[string]any), "Condition")
				}
			},
			check: all,
			want:  []string{"s3:ListBucket needs a StringLike s3:prefix condition"},
		},
		{
			name: "a delete of any partition",
			change: func(t *testing.T, tpl map[string]any, _ *string, _ map[string]functionCase) {
				policies := mapAt(functionResource(tpl, "DashboardFunction"), "Properties")["Policies"].([]any)
				for _, s := range policies[0].(map[string]any)["Statement"].([]any) {
					if st := s.(map[string]any); st["Sid"] == "DashboardDeletes" {
						delete(st, "Condition")
					}
				}
			},
			check: all,
			want:  []string{"the partitions DashboardFunction may dynamodb:DeleteItem"},
		},
		{
			name: "a delete below a project",
			change: func(t *testing.T, tpl map[string]any, _ *string, _ map[string]functionCase) {
				policies := mapAt(functionResource(tpl, "SettingsFunction"), "Properties")["Policies"].([]any)
				doc := policies[0].(map[string]any)
				doc["Statement"] = slices.DeleteFunc(doc["Statement"].([]any), func(s any) bool { return s.(map[string]any)["Effect"] == "Deny" })
			},
			check: all,
			want:  []string{"the partitions SettingsFunction must not dynamodb:DeleteItem"},
		},
		{
			name: "a SAM policy template",
			change: func(t *testing.T, tpl map[string]any, _ *string, _ map[string]functionCase) {
				mapAt(functionResource(tpl, "JudgesFunction"), "Properties")["Policies"] = parseYAML(t, `[{DynamoDBCrudPolicy: {TableName: !Ref Table}}]`)
			},
			check: all,
			want:  []string{"not an inline policy document"},
		},
		{
			name: "a function built without the Makefile",
			change: func(_ *testing.T, tpl map[string]any, _ *string, _ map[string]functionCase) {
				delete(functionResource(tpl, "FeedbackFunction"), "Metadata")
			},
			check: all,
			want:  []string{"FeedbackFunction must have Metadata BuildMethod: makefile"},
		},
		{
			name: "a Makefile without a target",
			change: func(_ *testing.T, _ map[string]any, m *string, _ map[string]functionCase) {
				*m = strings.Replace(*m, "build-OTLPFunction:", "build-OTLP:", 1)
			},
			check: all,
			want:  []string{`no "build-OTLPFunction:" target`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tpl, m, cases := loadTemplate(t), makefile, maps.Clone(functionCases)
			if tt.change != nil {
				tt.change(t, tpl, &m, cases)
			}
			failures := record(func(r checkT) { tt.check(r, tpl, m, cases) })
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

// checkT is what the checks need of a test: *testing.T, or a recorder in TestChecksFail.
type checkT interface {
	require.TestingT
	Helper()
}

// recorder is a checkT that keeps the failures; FailNow stops the check (see record).
type recorder struct{ failures []string }

type failNow struct{}

func (r *recorder) Errorf(format string, args ...any) {
	r.failures = append(r.failures, fmt.Sprintf(format, args...))
}
func (r *recorder) FailNow() { panic(failNow{}) }
func (r *recorder) Helper()  {}

// record runs check and returns its failures.
func record(check func(checkT)) []string {
	r := &recorder{}
	func() {
		defer func() {
			if v := recover(); v != nil {
				if _, ok := v.(failNow); !ok {
					panic(v)
				}
			}
		}()
		check(r)
	}()
	return r.failures
}

// checkCases fails for each function of tpl without an entry in cases and for each entry
// without a function.
func checkCases(t checkT, tpl map[string]any, cases map[string]functionCase) {
	t.Helper()
	ids := functionIDs(tpl)
	for _, id := range ids {
		assert.Contains(t, cases, id,
			"function %s has no entry in functionCases (infra/template_test.go): add its routes and least privilege", id)
	}
	for _, id := range slices.Sorted(maps.Keys(cases)) {
		assert.Contains(t, ids, id, "functionCases has %s, which template.yaml does not declare", id)
	}
}

// checkRoutes checks that the HttpApi events of function id are exactly its routes.
func checkRoutes(t checkT, tpl map[string]any, cases map[string]functionCase, id string) {
	t.Helper()
	fc, ok := cases[id]
	require.True(t, ok, "function %s has no entry in functionCases: list its routes (its area's route keys)", id)
	fn := templateResource(t, tpl, id, typeFunction)
	events := httpAPIEvents(fn)
	if fc.worker {
		assert.Empty(t, events, "%s is a worker (no routes) in functionCases but has HttpApi events", id)
		assert.NotEmpty(t, mapAt(mapAt(fn, "Properties"), "Events"), "%s is a worker without events: nothing invokes it", id)
		return
	}
	require.NotEmpty(t, fc.routes, "functionCases[%s] lists no routes; a function without routes is a worker", id)
	require.NotEmpty(t, events, "%s has no HttpApi events", id)

	var got []string
	for name, props := range events {
		got = append(got, routeKey(props))
		assert.Equal(t, "2.0", props["PayloadFormatVersion"],
			"event %s.%s: PayloadFormatVersion must be \"2.0\"", id, name)
		assert.Equal(t, map[string]any{"Ref": "HttpApi"}, props["ApiId"],
			"event %s.%s: ApiId must be !Ref HttpApi (not SAM's implicit API)", id, name)
	}
	assert.ElementsMatch(t, fc.routes, got, "HttpApi events of %s", id)
}

// checkMakefile checks that every function of tpl is built by sam build through the Makefile:
// BuildMethod makefile, a build-<LogicalId> target, and a place in FUNCTIONS (which make build
// walks); and that FUNCTIONS names only functions of tpl.
func checkMakefile(t checkT, tpl map[string]any, makefile string) {
	t.Helper()
	ids := functionIDs(tpl)
	have := makeTargets(makefile)
	listed := makeVariable(makefile, "FUNCTIONS")
	for _, id := range ids {
		fn := templateResource(t, tpl, id, typeFunction)
		assert.Equal(t, "makefile", mapAt(fn, "Metadata")["BuildMethod"],
			"%s must have Metadata BuildMethod: makefile (sam build runs its build-%s target)", id, id)
		target := "build-" + id
		assert.True(t, have[target], "%s has no %q target (sam build runs `make %s`)", makefilePath, target+":", target)
		assert.Contains(t, listed, id, "FUNCTIONS of %s does not list %s (make build builds that list)", makefilePath, id)
	}
	for _, id := range listed {
		assert.Contains(t, ids, id, "FUNCTIONS of %s lists %s, which template.yaml does not declare", makefilePath, id)
	}
}

// checkPolicy checks that function id has exactly its least privilege, in inline statements.
func checkPolicy(t checkT, tpl map[string]any, cases map[string]functionCase, id string) {
	t.Helper()
	fc, ok := cases[id]
	require.True(t, ok, "function %s has no entry in functionCases: list its least-privilege policy", id)
	tt := fc.policy
	require.NotEmpty(t, tt.actions, "functionCases[%s] lists no allowed actions", id)
	require.NotEmpty(t, tt.forbidden, "functionCases[%s] lists no forbidden actions (at least dynamodb:Scan)", id)

	fn := templateResource(t, tpl, id, typeFunction)
	props := mapAt(fn, "Properties")
	require.NotContains(t, props, "Role", "a custom Role bypasses the inline policies checked here")

	var granted, listPrefixes []string
	s3 := map[string][]string{}
	for i, st := range allowStatements(t, props["Policies"]) {
		actions := stringsOf(st["Action"])
		require.NotEmpty(t, actions, "statement %d: Action must be listed explicitly", i)
		if slices.Contains(actions, "s3:ListBucket") {
			cond, _ := st["Condition"].(map[string]any)
			like, _ := cond["StringLike"].(map[string]any)
			prefixes := stringsOf(like["s3:prefix"])
			require.NotEmpty(t, prefixes, "statement %d: s3:ListBucket needs a StringLike s3:prefix condition", i)
			listPrefixes = append(listPrefixes, prefixes...)
		}
		for _, a := range actions {
			assert.NotContains(t, a, "*", "statement %d: wildcard action %q", i, a)
			for _, f := range tt.forbidden {
				assert.False(t, a == f || strings.HasSuffix(f, ":") && strings.HasPrefix(a, f),
					"statement %d: %s must not be granted %q", i, id, a)
			}
		}
		resources, ok := st["Resource"].([]any)
		if !ok {
			resources = []any{st["Resource"]}
		}
		for _, r := range resources {
			require.NotNil(t, r, "statement %d: Resource must be set", i)
			assert.NotEqual(t, "*", r, "statement %d: Resource must not be *", i)
		}
		assert.NotContains(t, st, "NotAction", "statement %d: NotAction grants almost everything", i)
		assert.NotContains(t, st, "NotResource", "statement %d: NotResource grants almost everything", i)
		for _, a := range actions {
			if !slices.Contains(granted, a) {
				granted = append(granted, a)
			}
			if strings.HasPrefix(a, "s3:") {
				for _, r := range resources {
					m, _ := r.(map[string]any)
					sub, _ := m["Fn::Sub"].(string)
					require.NotEmpty(t, sub, "statement %d: S3 resources are !Sub ${Bucket.Arn}/<prefix>/*, not %v", i, r)
					s3[a] = append(s3[a], sub)
				}
			}
		}
	}
	assert.ElementsMatch(t, tt.actions, granted, "actions granted to %s", id)
	for a, want := range tt.s3 {
		assert.ElementsMatch(t, want, s3[a], "resources of %s granted to %s", a, id)
	}
	for a := range s3 {
		assert.Contains(t, tt.s3, a, "%s is granted %s: list its resources in functionCases", id, a)
	}
	assert.ElementsMatch(t, tt.listPrefixes, listPrefixes, "prefixes %s may list", id)
	for action, scope := range tt.keys {
		for i, st := range statements(t, props["Policies"], "Allow") {
			if slices.Contains(stringsOf(st["Action"]), action) {
				assert.ElementsMatch(t, scope.allow, leadingKeys(st, "ForAllValues:StringLike"),
					"statement %d: the partitions %s may %s", i, id, action)
			}
		}
		var denied, spared []string
		for _, st := range statements(t, props["Policies"], "Deny") {
			if slices.Contains(stringsOf(st["Action"]), action) {
				denied = append(denied, leadingKeys(st, "ForAnyValue:StringLike")...)
				spared = append(spared, leadingKeys(st, "ForAllValues:StringNotLike")...)
			}
		}
		assert.ElementsMatch(t, scope.deny, denied, "the partitions %s must not %s", id, action)
		assert.ElementsMatch(t, scope.spared, spared, "of those, the partitions %s may %s", id, action)
	}
}

// leadingKeys are the dynamodb:LeadingKeys patterns of st's condition op.
func leadingKeys(st map[string]any, op string) []string {
	cond, _ := st["Condition"].(map[string]any)
	keys, _ := cond[op].(map[string]any)
	return stringsOf(keys["dynamodb:LeadingKeys"])
}

func TestTemplateLint(t *testing.T) {
	bin, err := exec.LookPath("cfn-lint")
	if err != nil {
		t.Fatalf("cfn-lint is not installed (%v); install it with: pip install cfn-lint", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, filepath.Base(templatePath))
	cmd.Dir = repoRoot
	out, err := cmd.CombinedOutput()
	if err != nil || len(out) > 0 {
		t.Fatalf("cfn-lint %s: %v\n%s", filepath.Base(templatePath), err, out)
	}
}

func TestMakeTargets(t *testing.T) {
	tests := []struct {
		name     string
		makefile string
		want     []string
	}{
		{name: "single", makefile: "build-A:\n\tgo build\n", want: []string{"build-A"}},
		{name: "several on one line", makefile: "build-A build-B: deps\n", want: []string{"build-A", "build-B"}},
		{name: "double colon", makefile: "build-A::\n", want: []string{"build-A"}},
		{name: "assignments are not rules", makefile: "GOFLAGS := -trimpath\nX ::= y\nY = a:b\n", want: nil},
		{name: "recipes and comments are not rules", makefile: "\techo a: b\n# build-A:\n", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for name := range makeTargets(tt.makefile) {
				got = append(got, name)
			}
			assert.ElementsMatch(t, tt.want, got)
		})
	}
}

func TestMakeVariable(t *testing.T) {
	tests := []struct {
		name     string
		makefile string
		want     []string
	}{
		{name: "recursive", makefile: "FUNCTIONS = A B\n", want: []string{"A", "B"}},
		{name: "simple", makefile: "FUNCTIONS := A\n", want: []string{"A"}},
		{name: "continued", makefile: "FUNCTIONS = A \\\n\tB \\\n  C\nX = D\n", want: []string{"A", "B", "C"}},
		{name: "appended", makefile: "FUNCTIONS = A\nFUNCTIONS += B\n", want: []string{"A", "B"}},
		{name: "set again", makefile: "FUNCTIONS = A\nFUNCTIONS = B\n", want: []string{"B"}},
		{name: "other variables and recipes", makefile: "MY_FUNCTIONS = A\n\tFUNCTIONS = B\n", want: nil},
		{name: "unset", makefile: "build:\n", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, makeVariable(tt.makefile, "FUNCTIONS"))
		})
	}
}

func TestPlain(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want any
	}{
		{name: "ref", yaml: "!Ref Table", want: map[string]any{"Ref": "Table"}},
		{name: "getatt", yaml: "!GetAtt Table.Arn", want: map[string]any{"Fn::GetAtt": "Table.Arn"}},
		{name: "sub", yaml: "!Sub ${Table.Arn}/index/*", want: map[string]any{"Fn::Sub": "${Table.Arn}/index/*"}},
		{name: "tagged sequence", yaml: "!Join [',', [a, !Ref B]]", want: map[string]any{
			"Fn::Join": []any{",", []any{"a", map[string]any{"Ref": "B"}}},
		}},
		{name: "tagged mapping", yaml: "!Transform {Name: X}", want: map[string]any{"Fn::Transform": map[string]any{"Name": "X"}}},
		{name: "core types", yaml: "{a: true, b: 29, c: \"2.0\", d: 2012-10-17, e: null}", want: map[string]any{
			"a": true, "b": 29, "c": "2.0", "d": "2012-10-17", "e": nil,
		}},
		{name: "alias", yaml: "{a: &x [1], b: *x}", want: map[string]any{"a": []any{1}, "b": []any{1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var doc yaml.Node
			require.NoError(t, yaml.Unmarshal([]byte(tt.yaml), &doc))
			got, err := plain(&doc)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// loadTemplate parses template.yaml into plain Go values (see plain).
func loadTemplate(t *testing.T) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(templatePath)
	require.NoError(t, err)
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal(raw, &doc), "parse %s", templatePath)
	v, err := plain(&doc)
	require.NoError(t, err, "convert %s", templatePath)
	tpl, ok := v.(map[string]any)
	require.True(t, ok, "%s: top level is not a mapping", templatePath)
	return tpl
}

// plain converts a YAML node to map[string]any, []any, string, bool, int, float64 or nil
// (dates stay strings, as CloudFormation reads them: Version: 2012-10-17).
// CloudFormation short-form tags become their long form, as CloudFormation reads them:
// `!Ref X` is {"Ref": "X"}, `!Sub s` is {"Fn::Sub": "s"}, `!GetAtt A.B` is
// {"Fn::GetAtt": "A.B"} (the dotted string form is kept as written).
func plain(n *yaml.Node) (any, error) {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return plain(n.Content[0])
	case yaml.AliasNode:
		return plain(n.Alias)
	}

	var v any
	var err error
	switch n.Kind {
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := n.Content[i], n.Content[i+1]
			if m[key.Value], err = plain(val); err != nil {
				return nil, fmt.Errorf("%s: %w", key.Value, err)
			}
		}
		v = m
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			cv, err := plain(c)
			if err != nil {
				return nil, err
			}
			s = append(s, cv)
		}
		v = s
	case yaml.ScalarNode:
		if isIntrinsicTag(n.Tag) || n.Tag == "!!timestamp" {
			v = n.Value
		} else if err := n.Decode(&v); err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
	default:
		return nil, fmt.Errorf("line %d: unexpected YAML node kind %v", n.Line, n.Kind)
	}

	if isIntrinsicTag(n.Tag) {
		return map[string]any{intrinsicName(n.Tag): v}, nil
	}
	return v, nil
}

// isIntrinsicTag reports whether tag is a local tag such as !Ref (not a YAML core tag like !!str).
func isIntrinsicTag(tag string) bool {
	return strings.HasPrefix(tag, "!") && !strings.HasPrefix(tag, "!!")
}

// intrinsicName maps a short-form tag to its long-form key: !Ref -> Ref, !Sub -> Fn::Sub.
func intrinsicName(tag string) string {
	name := strings.TrimPrefix(tag, "!")
	if name == "Ref" || name == "Condition" {
		return name
	}
	return "Fn::" + name
}

// functionIDs returns the logical ids of the functions of tpl, sorted.
func functionIDs(tpl map[string]any) []string {
	return slices.Sorted(maps.Keys(resourcesOfType(tpl, typeFunction)))
}

// functionResource returns the resource id of tpl, or an empty map.
func functionResource(tpl map[string]any, id string) map[string]any {
	return mapAt(mapAt(tpl, "Resources"), id)
}

// parseYAML parses a YAML snippet as loadTemplate does.
func parseYAML(t *testing.T, s string) any {
	t.Helper()
	var doc yaml.Node
	require.NoError(t, yaml.Unmarshal([]byte(s), &doc))
	v, err := plain(&doc)
	require.NoError(t, err)
	return v
}

// resourcesOfType returns the resources of tpl whose Type is typ, by logical ID.
func resourcesOfType(tpl map[string]any, typ string) map[string]map[string]any {
	out := map[string]map[string]any{}
	for id, r := range mapAt(tpl, "Resources") {
		if res, ok := r.(map[string]any); ok && res["Type"] == typ {
			out[id] = res
		}
	}
	return out
}

// templateResource returns the resource logicalID, failing the test unless it has type typ.
func templateResource(t checkT, tpl map[string]any, logicalID, typ string) map[string]any {
	t.Helper()
	res, ok := mapAt(tpl, "Resources")[logicalID].(map[string]any)
	require.True(t, ok, "template has no resource %s", logicalID)
	require.Equal(t, typ, res["Type"], "type of %s", logicalID)
	return res
}

// mapAt returns m[key] as a map, or an empty map when it is missing or not a map.
func mapAt(m map[string]any, key string) map[string]any {
	if v, ok := m[key].(map[string]any); ok {
		return v
	}
	return map[string]any{}
}

// httpAPIEvents returns the Properties of fn's events of type HttpApi, by event name.
func httpAPIEvents(fn map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for name, e := range mapAt(mapAt(fn, "Properties"), "Events") {
		if ev, ok := e.(map[string]any); ok && ev["Type"] == "HttpApi" {
			out[name] = mapAt(ev, "Properties")
		}
	}
	return out
}

// routeKey returns the API Gateway route key ("ANY /v1/prompts/{proxy+}") of an HttpApi event.
func routeKey(props map[string]any) string {
	return fmt.Sprintf("%s %s", strings.ToUpper(fmt.Sprint(props["Method"])), props["Path"])
}

// allowStatements returns the Allow statements of a SAM function's Policies. Only inline policy
// documents are accepted: SAM policy templates (DynamoDBCrudPolicy includes Scan and DeleteItem)
// and managed policies are opaque here, so they fail the test.
func allowStatements(t checkT, policies any) []map[string]any {
	t.Helper()
	return statements(t, policies, "Allow")
}

// statements returns the statements of effect (Allow or Deny) of a SAM function's Policies,
// as allowStatements reads them.
func statements(t checkT, policies any, effect string) []map[string]any {
	t.Helper()
	list, ok := policies.([]any)
	require.True(t, ok, "Policies must be a list of inline policy documents, got %T", policies)
	var out []map[string]any
	for i, p := range list {
		if cond, ok := p.(map[string]any)["Fn::If"].([]any); ok && len(cond) == 3 {
			// A policy granted under a condition (!If [Cond, policy, !Ref AWS::NoValue]) is
			// checked as if the condition held.
			p = cond[1]
		}
		doc, ok := p.(map[string]any)
		require.True(t, ok, "policy %d: managed policy %v; use an inline statement instead", i, p)
		stmts, ok := doc["Statement"].([]any)
		require.True(t, ok, "policy %d: not an inline policy document (a SAM policy template?): %v", i, doc)
		for _, s := range stmts {
			st, ok := s.(map[string]any)
			require.True(t, ok, "policy %d: statement is not a mapping: %v", i, s)
			if st["Effect"] == effect {
				out = append(out, st)
			}
		}
	}
	return out
}

// stringsOf returns v as a list of strings: a single string or a list of strings.
func stringsOf(v any) []string {
	switch v := v.(type) {
	case string:
		return []string{v}
	case []any:
		out := make([]string, 0, len(v))
		for _, s := range v {
			out = append(out, fmt.Sprint(s))
		}
		return out
	}
	return nil
}

// makeTargets returns the explicit targets of a Makefile: the names before the colon of rule
// lines, including lines that declare several targets (`build-A build-B:`). Variable
// assignments (`X := y`) and recipe lines are not rules.
func makeTargets(makefile string) map[string]bool {
	rule := regexp.MustCompile(`^([^\s:#=][^:#=]*?)\s*::?(?:[^:=]|$)`)
	out := map[string]bool{}
	for _, line := range strings.Split(makefile, "\n") {
		if m := rule.FindStringSubmatch(line); m != nil {
			for _, name := range strings.Fields(m[1]) {
				out[name] = true
			}
		}
	}
	return out
}

// makeVariable returns the words of a Makefile variable set with =, :=, ::= or ?= (the last
// setting wins) and extended with +=, following backslash continuations.
func makeVariable(makefile, name string) []string {
	assign := regexp.MustCompile(`^` + regexp.QuoteMeta(name) + `\s*(\+|::|:|\?)?=(.*)$`)
	var out []string
	lines := strings.Split(makefile, "\n")
	for i := 0; i < len(lines); i++ {
		m := assign.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		value := m[2]
		for strings.HasSuffix(value, "\\") && i+1 < len(lines) {
			i++
			value = strings.TrimSuffix(value, "\\") + " " + lines[i]
		}
		if m[1] != "+" {
			out = nil
		}
		out = append(out, strings.Fields(value)...)
	}
	return out
}

// tableShape is the comparable part of a table definition: what must agree between
// infra.TableDefinition, template.yaml and localstack/table.json.
type tableShape struct {
	BillingMode string
	Attributes  map[string]string // attribute name -> type (order is irrelevant)
	KeySchema   []string          // "NAME HASH", "NAME RANGE" (order matters)
	Indexes     map[string]indexShape
}

type indexShape struct {
	KeySchema  []string
	Projection string
}

// shapeOfInput returns the shape of a CreateTable request.
func shapeOfInput(in *dynamodb.CreateTableInput) tableShape {
	keys := func(ks []types.KeySchemaElement) []string {
		var out []string
		for _, k := range ks {
			out = append(out, aws.ToString(k.AttributeName)+" "+string(k.KeyType))
		}
		return out
	}
	s := tableShape{
		BillingMode: string(in.BillingMode),
		Attributes:  map[string]string{},
		KeySchema:   keys(in.KeySchema),
		Indexes:     map[string]indexShape{},
	}
	for _, a := range in.AttributeDefinitions {
		s.Attributes[aws.ToString(a.AttributeName)] = string(a.AttributeType)
	}
	for _, g := range in.GlobalSecondaryIndexes {
		s.Indexes[aws.ToString(g.IndexName)] = indexShape{
			KeySchema:  keys(g.KeySchema),
			Projection: string(g.Projection.ProjectionType),
		}
	}
	return s
}

// shapeOfJSON returns the shape of a table declared with the field names that CloudFormation's
// AWS::DynamoDB::Table and the CreateTable JSON of the AWS CLI share.
func shapeOfJSON(t *testing.T, def map[string]any) tableShape {
	t.Helper()
	keys := func(v any) []string {
		var out []string
		list, _ := v.([]any)
		for _, k := range list {
			km, _ := k.(map[string]any)
			out = append(out, fmt.Sprintf("%v %v", km["AttributeName"], km["KeyType"]))
		}
		return out
	}
	s := tableShape{
		BillingMode: fmt.Sprint(def["BillingMode"]),
		Attributes:  map[string]string{},
		KeySchema:   keys(def["KeySchema"]),
		Indexes:     map[string]indexShape{},
	}
	attrs, _ := def["AttributeDefinitions"].([]any)
	for _, a := range attrs {
		am, _ := a.(map[string]any)
		name := fmt.Sprint(am["AttributeName"])
		assert.NotContains(t, s.Attributes, name, "attribute %s defined twice", name)
		s.Attributes[name] = fmt.Sprint(am["AttributeType"])
	}
	gsis, _ := def["GlobalSecondaryIndexes"].([]any)
	for _, g := range gsis {
		gm, _ := g.(map[string]any)
		s.Indexes[fmt.Sprint(gm["IndexName"])] = indexShape{
			KeySchema:  keys(gm["KeySchema"]),
			Projection: fmt.Sprint(mapAt(gm, "Projection")["ProjectionType"]),
		}
	}
	return s
}

// stackRoutes returns the route keys of the function of internal/stack named id (nil when the
// stack has no such function).
func stackRoutes(id string) []string {
	for _, fn := range stack.Functions {
		if fn.Name == id {
			return fn.Routes
		}
	}
	return nil
}

// TestStackFunctionsAreDeployed: every function plume-local serves or runs is a function of the
// template, and every worker of the template is one of the stack's workers.
func TestStackFunctionsAreDeployed(t *testing.T) {
	ids := functionIDs(loadTemplate(t))
	for _, fn := range stack.Functions {
		assert.Contains(t, ids, fn.Name, "internal/stack serves %s, which template.yaml does not deploy", fn.Name)
	}
	var workers []string
	for _, w := range stack.Workers {
		workers = append(workers, w.Name)
		assert.Contains(t, ids, w.Name, "internal/stack runs %s, which template.yaml does not deploy", w.Name)
	}
	for id, fc := range functionCases {
		if fc.worker {
			assert.Contains(t, workers, id, "%s is a worker of template.yaml that internal/stack.Workers does not list", id)
		}
	}
}
