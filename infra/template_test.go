package infra_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/plumehq/plume/functions/feedback"
	"github.com/plumehq/plume/functions/judges"
	"github.com/plumehq/plume/functions/otlp"
	"github.com/plumehq/plume/functions/prompts"
	"github.com/plumehq/plume/functions/settings"
	"github.com/plumehq/plume/functions/tracing"
	"github.com/plumehq/plume/infra"
)

// Paths relative to this package's directory, where `go test` runs.
const (
	repoRoot          = ".."
	templatePath      = "../template.yaml"
	makefilePath      = "../Makefile"
	localTablePath    = "../localstack/table.json"
	localInitHookPath = "../localstack/init/ready.d/10-plume.sh"
)

// healthzRoute is the public health check; PromptsFunction serves it besides its own routes.
const healthzRoute = "GET /healthz"

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

func TestTemplateRoutes(t *testing.T) {
	tpl := loadTemplate(t)
	tests := []struct {
		logicalID string
		routes    []string // the area's route keys, e.g. prompts.Routes
		extra     []string // public routes served by the same function
	}{
		{logicalID: "PromptsFunction", routes: prompts.Routes},
		{logicalID: "TracingIngestFunction", routes: tracing.IngestRoutes},
		{logicalID: "TracingQueryFunction", routes: tracing.QueryRoutes},
		{logicalID: "SettingsFunction", routes: settings.Routes},
		{logicalID: "OTLPFunction", routes: otlp.Routes},
		{logicalID: "JudgesFunction", routes: judges.Routes},
		{logicalID: "FeedbackFunction", routes: feedback.Routes},
	}
	for _, tt := range tests {
		t.Run(tt.logicalID, func(t *testing.T) {
			fn := templateResource(t, tpl, tt.logicalID, "AWS::Serverless::Function")
			events := httpAPIEvents(fn)
			require.NotEmpty(t, events, "%s has no HttpApi events", tt.logicalID)

			var got []string
			for name, props := range events {
				got = append(got, routeKey(props))
				assert.Equal(t, "2.0", props["PayloadFormatVersion"],
					"event %s.%s: PayloadFormatVersion must be \"2.0\"", tt.logicalID, name)
				assert.Equal(t, map[string]any{"Ref": "HttpApi"}, props["ApiId"],
					"event %s.%s: ApiId must be !Ref HttpApi (not SAM's implicit API)", tt.logicalID, name)
			}
			want := slices.Concat(tt.routes, tt.extra)
			assert.ElementsMatch(t, want, got, "HttpApi events of %s", tt.logicalID)
		})
	}
}

func TestTemplateRoutesAreUnique(t *testing.T) {
	owner := map[string]string{}
	for id, fn := range resourcesOfType(loadTemplate(t), "AWS::Serverless::Function") {
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
	functions := resourcesOfType(loadTemplate(t), "AWS::Serverless::Function")
	var targets []string
	for id, fn := range functions {
		if mapAt(fn, "Metadata")["BuildMethod"] == "makefile" {
			targets = append(targets, "build-"+id)
		}
	}
	sort.Strings(targets)
	require.NotEmpty(t, targets, "no function uses BuildMethod: makefile")

	raw, err := os.ReadFile(makefilePath)
	if errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s is missing; sam build (BuildMethod: makefile) needs these targets in it: %s",
			makefilePath, strings.Join(targets, ", "))
	}
	require.NoError(t, err)
	have := makeTargets(string(raw))
	for _, target := range targets {
		assert.True(t, have[target], "%s has no %q target (sam build runs `make %s`)", makefilePath, target+":", target)
	}
}

func TestFunctionsLeastPrivilege(t *testing.T) {
	tpl := loadTemplate(t)
	tests := []struct {
		logicalID string
		actions   []string // exactly the actions the function is allowed
		forbidden []string // actions ("dynamodb:Scan") or whole services ("s3:") never to grant
		// s3 is exactly the bucket paths (Fn::Sub strings) each S3 action is allowed on.
		s3 map[string][]string
	}{
		{
			logicalID: "PromptsFunction",
			actions: []string{
				"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query",
				"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:ConditionCheckItem",
			},
			// Never Scan on a request path; no prompts request deletes items or touches S3.
			forbidden: []string{"dynamodb:Scan", "dynamodb:DeleteItem", "s3:"},
		},
		{
			logicalID: "TracingIngestFunction",
			actions: []string{
				"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:PutItem", "dynamodb:UpdateItem",
				"s3:PutObject", "s3:GetObject",
			},
			// Ingestion writes and merges; it never deletes spans, scans or lists.
			forbidden: []string{"dynamodb:Scan", "dynamodb:DeleteItem", "s3:DeleteObject", "s3:ListBucket"},
			// Batch objects are read back to merge; attachments are only written (extraction and
			// presigned uploads).
			s3: map[string][]string{
				"s3:PutObject": {"${Bucket.Arn}/spans/*", "${Bucket.Arn}/attachments/*"},
				"s3:GetObject": {"${Bucket.Arn}/spans/*"},
			},
		},
		{
			logicalID: "TracingQueryFunction",
			actions:   []string{"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "s3:GetObject"},
			// The function that reads spans can neither change nor delete them.
			forbidden: []string{"dynamodb:Scan", "dynamodb:DeleteItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "s3:PutObject", "s3:DeleteObject"},
			// Attachments: the permission its presigned GET URLs carry.
			s3: map[string][]string{"s3:GetObject": {"${Bucket.Arn}/spans/*", "${Bucket.Arn}/attachments/*"}},
		},
		{
			logicalID: "OTLPFunction",
			actions: []string{
				"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query", "dynamodb:PutItem", "dynamodb:UpdateItem",
				"s3:PutObject", "s3:GetObject",
			},
			forbidden: []string{"dynamodb:Scan", "dynamodb:DeleteItem", "s3:DeleteObject", "s3:ListBucket"},
			s3: map[string][]string{
				"s3:PutObject": {"${Bucket.Arn}/spans/*", "${Bucket.Arn}/attachments/*"},
				"s3:GetObject": {"${Bucket.Arn}/spans/*"},
			},
		},
		{
			logicalID: "SettingsFunction",
			actions:   []string{"dynamodb:GetItem", "dynamodb:Query", "dynamodb:PutItem", "dynamodb:DeleteItem"},
			// Prices only: no S3, no Scan, no updates of other items.
			forbidden: []string{"dynamodb:Scan", "dynamodb:UpdateItem", "s3:"},
		},
		{
			logicalID: "JudgesFunction",
			actions: []string{
				"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query",
				"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:ConditionCheckItem",
			},
			// Judges are paused, never deleted; evaluations are replaced, never deleted; no S3.
			forbidden: []string{"dynamodb:Scan", "dynamodb:DeleteItem", "s3:"},
		},
		{
			logicalID: "FeedbackFunction",
			actions: []string{
				"dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:Query",
				"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:ConditionCheckItem", "s3:GetObject",
			},
			// Links are revoked, not deleted; the pages only read span batches.
			forbidden: []string{"dynamodb:Scan", "dynamodb:DeleteItem", "s3:PutObject", "s3:DeleteObject", "s3:ListBucket"},
			s3:        map[string][]string{"s3:GetObject": {"${Bucket.Arn}/spans/*"}},
		},
	}

	functions := resourcesOfType(tpl, "AWS::Serverless::Function")
	var covered []string
	for _, tt := range tests {
		covered = append(covered, tt.logicalID)
	}
	for id := range functions {
		assert.Contains(t, covered, id, "function %s has no least-privilege case in this test", id)
	}

	for _, tt := range tests {
		t.Run(tt.logicalID, func(t *testing.T) {
			fn := templateResource(t, tpl, tt.logicalID, "AWS::Serverless::Function")
			props := mapAt(fn, "Properties")
			require.NotContains(t, props, "Role", "a custom Role bypasses the inline policies checked here")

			var granted []string
			s3 := map[string][]string{}
			for i, st := range allowStatements(t, props["Policies"]) {
				actions := stringsOf(st["Action"])
				require.NotEmpty(t, actions, "statement %d: Action must be listed explicitly", i)
				for _, a := range actions {
					assert.NotContains(t, a, "*", "statement %d: wildcard action %q", i, a)
					for _, f := range tt.forbidden {
						assert.False(t, a == f || strings.HasSuffix(f, ":") && strings.HasPrefix(a, f),
							"statement %d: %s must not be granted %q", i, tt.logicalID, a)
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
			assert.ElementsMatch(t, tt.actions, granted, "actions granted to %s", tt.logicalID)
			for a, want := range tt.s3 {
				assert.ElementsMatch(t, want, s3[a], "resources of %s granted to %s", a, tt.logicalID)
			}
			for a := range s3 {
				assert.Contains(t, tt.s3, a, "%s is granted %s: list its resources in this test", tt.logicalID, a)
			}
		})
	}
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
func templateResource(t *testing.T, tpl map[string]any, logicalID, typ string) map[string]any {
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
func allowStatements(t *testing.T, policies any) []map[string]any {
	t.Helper()
	list, ok := policies.([]any)
	require.True(t, ok, "Policies must be a list of inline policy documents, got %T", policies)
	var out []map[string]any
	for i, p := range list {
		doc, ok := p.(map[string]any)
		require.True(t, ok, "policy %d: managed policy %v; use an inline statement instead", i, p)
		stmts, ok := doc["Statement"].([]any)
		require.True(t, ok, "policy %d: not an inline policy document (a SAM policy template?): %v", i, doc)
		for _, s := range stmts {
			st, ok := s.(map[string]any)
			require.True(t, ok, "policy %d: statement is not a mapping: %v", i, s)
			if st["Effect"] == "Allow" {
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
