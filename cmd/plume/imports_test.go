package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// surfaces are the Go client and the CLI, each with the module packages every file of it may
// import: the client the wire contract only; the CLI the contract, the client, its own
// packages and the error model it prints. The operator commands of cmd/plume/internal/admin
// work on the table and the bucket themselves and are not walked.
var surfaces = []struct {
	dir, name string
	imports   []string
}{
	{dir: "../../client", name: "client", imports: []string{"api"}},
	{dir: ".", name: "cmd/plume", imports: []string{"api", "client", "cmd/plume/", "shared/errs"}},
}

// importDoors are the other module packages a file may import, each with why.
var importDoors = map[string][]string{
	// The operator commands' AWS clients, built from the CLI's configuration.
	"cmd/plume/internal/cmdutil/factory.go": {"shared/config", "shared/ddb"},
}

// TestClientsReadThroughTheAPI: the Go client imports the contract only, and the CLI's
// commands read and write through the client: neither imports a domain service or store, but
// for importDoors. A door no file uses any more is reported too, so that the list shrinks.
func TestClientsReadThroughTheAPI(t *testing.T) {
	const module = "github.com/plumehq/plume/"
	used := map[string]bool{}
	for _, s := range surfaces {
		err := filepath.WalkDir(s.dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(s.dir, path)
			if err != nil {
				return err
			}
			name := filepath.ToSlash(filepath.Join(s.name, rel))
			switch {
			case d.IsDir() && (name == "cmd/plume/internal/admin" || name == "client/sdkcompat" || d.Name() == "testdata"):
				return filepath.SkipDir
			case d.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go"):
				return nil
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
			require.NoError(t, err)
			for _, imp := range f.Imports {
				p, err := strconv.Unquote(imp.Path.Value)
				require.NoError(t, err)
				pkg, ok := strings.CutPrefix(p, module)
				if !ok || slices.ContainsFunc(s.imports, func(a string) bool { return a == pkg || strings.HasSuffix(a, "/") && strings.HasPrefix(pkg, a) }) {
					continue
				}
				assert.True(t, slices.Contains(importDoors[name], pkg), "%s imports %s: read it through client/ (a route whose answer type is in api/)", name, p)
				used[name+" "+pkg] = true
			}
			return nil
		})
		require.NoError(t, err)
	}
	for name, pkgs := range importDoors {
		for _, pkg := range pkgs {
			assert.True(t, used[name+" "+pkg], "%s no longer imports %s: take it off importDoors", name, pkg)
		}
	}
}
