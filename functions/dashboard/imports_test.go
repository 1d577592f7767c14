package dashboard_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// module is the prefix of the module's own packages.
const module = "github.com/plumehq/plume/"

// pageImports are the module packages every page may import: the wire contract, the Go client
// the pages read the REST API through, and presentation helpers (the error model the error
// pages show, the request id, cutting long text, the sign-in's keys and roles), and the pages'
// renderer.
var pageImports = []string{"api", "client", "shared/errs", "shared/web", "shared/textcut", "shared/auth",
	"functions/dashboard/internal/view"}

// importsOwed are the other module packages a file still imports, each with why; a file
// importing any package outside pageImports and its line here fails the test, as does a line
// naming a package its file no longer imports, so the list only shrinks.
var importsOwed = map[string][]string{
	// The composition root side: mounts the API's areas in-process, builds the sign-in store.
	"function.go": {"functions/datasets", "functions/feedback", "functions/judges", "functions/monitors", "functions/optimizer", "functions/prompts", "functions/settings", "functions/signals", "functions/tracing", "functions/webhooks", "internal/app", "shared/ddb"},
	// The lists' filter checks tag lengths and reads times as spans' times are read; a session
	// id of an SDK's form is canonicalised by trace.SessionIDOf.
	"filter.go":   {"shared/trace"},
	"sessions.go": {"shared/trace"},
	// judges.go previews the criteria of an unsaved template (judge.InferCriteria), for which
	// no route exists.
	"judges.go": {"shared/judge"},
}

// TestPagesImportOnlyTheContract: the pages read through the REST API (the Go client over the
// in-process API) and import no domain service or store, but for the files and packages
// importsOwed names.
func TestPagesImportOnlyTheContract(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	imported := map[string][]string{}
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
			if !ok {
				continue
			}
			imported[name] = append(imported[name], pkg)
			assert.True(t, slices.Contains(pageImports, pkg) || slices.Contains(importsOwed[name], pkg),
				"%s imports %s: read it through the REST API (client) instead", name, path)
		}
	}
	for name, owed := range importsOwed {
		for _, pkg := range owed {
			assert.Contains(t, imported[name], pkg, "%s no longer imports %s: take it off importsOwed", name, pkg)
		}
	}
}
