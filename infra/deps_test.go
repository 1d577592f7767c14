package infra_test

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// heavyPackages are packages no function's bootstrap may link, each with why (issue 31: every
// bootstrap at most 15 MB). A prefix ending in "/" stands for every package under it.
var heavyPackages = map[string]string{
	// Template execution looks methods up by name (reflect.Value.MethodByName), so the linker
	// keeps every exported method of every type the binary may convert to an interface: about
	// 8 MB of the dashboard's bootstrap.
	"text/template": "method lookup by reflection keeps every exported method linked (+8 MB in the dashboard)",
	"html/template": "it executes through text/template (+8 MB in the dashboard)",
	// OTLP over HTTP (protobuf and JSON) needs no gRPC; golang.org/x/net/trace, which gRPC
	// links, also brings html/template.
	"google.golang.org/grpc":  "OTLP/HTTP needs no gRPC",
	"google.golang.org/grpc/": "OTLP/HTTP needs no gRPC",
	// Nor the protobuf runtime: the export's varints and the two answers OTLP writes need
	// encoding/binary alone (its internal/detrand has a package init).
	"google.golang.org/protobuf/": "OTLP writes its few varints with encoding/binary",
	// The browser tests' driver.
	"github.com/chromedp/": "a test dependency",
	// The SDK's service clients of EventBridge, SQS and Secrets Manager: their schemas and
	// endpoint tables cost about 0.9 MB of a bootstrap and 1 ms of its init, for four
	// operations that shared/awsjson sends (tests keep the SDK clients as oracles).
	"github.com/aws/aws-sdk-go-v2/service/eventbridge":     "shared/awsjson speaks EventBridge's PutEvents",
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/":    "shared/awsjson speaks EventBridge's PutEvents",
	"github.com/aws/aws-sdk-go-v2/service/sqs":             "shared/awsjson speaks SQS's operations",
	"github.com/aws/aws-sdk-go-v2/service/sqs/":            "shared/awsjson speaks SQS's operations",
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager":  "shared/awsjson speaks Secrets Manager's GetSecretValue",
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager/": "shared/awsjson speaks Secrets Manager's GetSecretValue",
	// The Streams API is read only by plume-local's and the tests' poller (shared/ddb), which
	// every function links: its client's endpoint table was 0.1-0.25 ms of every init.
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams":           "shared/awsjson speaks the Streams API to the poller",
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/internal/": "its client's endpoint table (its types, which attributevalue names, are light)",
}

// heavyOwed are the functions that still link a heavy package, each with why; the list only
// shrinks (a line its function no longer needs fails the test).
// The dashboard's pages are compiled at build time and executed by its own renderer
// (functions/dashboard/internal/view), so none is owed now.
var heavyOwed = map[string][]string{}

// buildPackage is a function's package in its build-<LogicalId> target.
var buildPackage = regexp.MustCompile(`(?m)^build-(\w+):\n\t\$\(LAMBDA_BUILD\) -o \$\(ARTIFACTS_DIR\)/bootstrap (\./\S+)$`)

// TestFunctionsLinkNoHeavyPackage: no function's main package depends on a package of
// heavyPackages, as its Makefile target builds it (arm64, lambda.norpc).
func TestFunctionsLinkNoHeavyPackage(t *testing.T) {
	raw, err := os.ReadFile(makefilePath)
	require.NoError(t, err)
	byPackage := map[string]string{} // "./functions/x/lambda" -> logical id
	var pkgs []string
	for _, m := range buildPackage.FindAllStringSubmatch(string(raw), -1) {
		byPackage[strings.TrimPrefix(m[2], "./")] = m[1]
		pkgs = append(pkgs, "../"+strings.TrimPrefix(m[2], "./"))
	}
	require.NotEmpty(t, pkgs, "no build target in %s", makefilePath)

	args := append([]string{"list", "-tags", "lambda.norpc", "-f", "{{.ImportPath}} {{join .Deps \" \"}}"}, pkgs...)
	cmd := exec.CommandContext(context.Background(), "go", args...)
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	out, err := cmd.Output()
	require.NoError(t, err, "go list: %s", errOutput(err))
	deps := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		path := strings.TrimPrefix(fields[0], "github.com/plumehq/plume/")
		id, ok := byPackage[path]
		require.True(t, ok, "go list answered %s, which no target builds", fields[0])
		deps[id] = fields[1:]
	}
	require.Len(t, deps, len(byPackage))
	checkDeps(t, deps, heavyOwed)
}

// TestDepsCheckFails: the check fails for a function that links a heavy package, and names
// it, and for an owed line that no longer holds.
func TestDepsCheckFails(t *testing.T) {
	failures := record(func(t checkT) {
		checkDeps(t, map[string][]string{
			"DashboardFunction": {"fmt", "html/template", "text/template", "reflect"},
			"OTLPFunction":      {"google.golang.org/grpc/codes", "net/http"},
			"PromptsFunction":   {"net/http", "text/template"},
			"MCPFunction":       {"net/http"},
		}, map[string][]string{"DashboardFunction": {"html/template", "text/template"}, "MCPFunction": {"text/template"}})
	})
	assert.Len(t, failures, 3)
	joined := strings.Join(failures, "\n")
	assert.Contains(t, joined, "OTLPFunction links google.golang.org/grpc/codes")
	assert.Contains(t, joined, "PromptsFunction links text/template")
	assert.Contains(t, joined, "MCPFunction no longer links text/template")
	assert.NotContains(t, joined, "DashboardFunction")
}

// checkDeps fails for every function of deps (logical id -> its packages) that depends on a
// package of heavyPackages that owed does not list for it, and for every owed package its
// function no longer links.
func checkDeps(t checkT, deps map[string][]string, owed map[string][]string) {
	t.Helper()
	for id, pkgs := range deps {
		for _, p := range pkgs {
			if why, ok := heavy(p); ok && !slices.Contains(owed[id], p) {
				t.Errorf("%s links %s: %s", id, p, why)
			}
		}
	}
	for id, pkgs := range owed {
		for _, p := range pkgs {
			if !slices.Contains(deps[id], p) {
				t.Errorf("%s no longer links %s: take it off heavyOwed", id, p)
			}
		}
	}
}

func heavy(pkg string) (why string, ok bool) {
	if why, ok := heavyPackages[pkg]; ok {
		return why, true
	}
	for prefix, why := range heavyPackages {
		if strings.HasSuffix(prefix, "/") && strings.HasPrefix(pkg, prefix) {
			return why, true
		}
	}
	return "", false
}

// errOutput is what a failed command wrote to stderr.
func errOutput(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
