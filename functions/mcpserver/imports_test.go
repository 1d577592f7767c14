package mcpserver_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const module = "github.com/plumehq/plume/"

// doors are the module packages the tool server's files may import, beside api and client,
// which every file may: the tools read and write through the REST API only. A path ending in
// "/" allows the packages under it.
var doors = map[string][]string{
	// The composition: the areas whose routes the tools call, mounted in-process.
	"function.go":    {"internal/app", "functions/"},
	"lambda/main.go": {"internal/app", "functions/mcpserver"},
	// The edge: every request's key is checked before the MCP layer, by an auth.Router as every
	// area's routes are (the tenancy walk of internal/stack covers it).
	"routes.go": {"shared/auth"},
	// The client's in-process transport to the mounted areas.
	"server.go": {"shared/web"},
}

// TestToolsReadThroughTheAPI: the tool server computes nothing from the stores; what it
// needs is a route, read with the Go client. A door no file uses any more is reported too,
// so that the list shrinks as the exceptions go.
func TestToolsReadThroughTheAPI(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	files = append(files, "lambda/main.go")
	used := map[string]bool{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
		require.NoError(t, err)
		for _, imp := range f.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			require.NoError(t, err)
			pkg, ok := strings.CutPrefix(path, module)
			if !ok || pkg == "api" || pkg == "client" {
				continue
			}
			door := doorOf(name, pkg)
			assert.NotEmpty(t, door, "%s imports %s: read it through client/ (a route whose answer type is in api/)", name, path)
			used[name+" "+door] = true
		}
	}
	for name, ds := range doors {
		for _, d := range ds {
			assert.True(t, used[name+" "+d], "%s no longer imports %s: remove the door", name, d)
		}
	}
}

// doorOf is the door of doors that lets file name import module package pkg, "" for none.
func doorOf(name, pkg string) string {
	for _, d := range doors[name] {
		if pkg == d || strings.HasSuffix(d, "/") && strings.HasPrefix(pkg, d) {
			return d
		}
	}
	return ""
}
