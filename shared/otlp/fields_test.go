package otlp

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fieldNames returns the attribute names fieldOf matches, read from its switch in attrs.go.
func fieldNames(t *testing.T) []string {
	t.Helper()
	file, err := parser.ParseFile(token.NewFileSet(), "attrs.go", nil, 0)
	require.NoError(t, err)
	var names []string
	ast.Inspect(file, func(n ast.Node) bool {
		fn, ok := n.(*ast.FuncDecl)
		if !ok || fn.Name.Name != "fieldOf" {
			return true
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if cc, ok := n.(*ast.CaseClause); ok {
				for _, e := range cc.List {
					lit, ok := e.(*ast.BasicLit)
					require.True(t, ok, "a case of fieldOf is not a string literal")
					name, err := strconv.Unquote(lit.Value)
					require.NoError(t, err)
					names = append(names, name)
				}
			}
			return true
		})
		return false
	})
	require.Len(t, names, int(numFields)-1, "one name for each field")
	return names
}

// TestFieldNamesNeedNoEscaping: the attributes object writes a field's name as it is (Map's
// mapper.attributes), which is its JSON string only when nothing in it is escaped.
func TestFieldNamesNeedNoEscaping(t *testing.T) {
	for _, name := range fieldNames(t) {
		assert.Equal(t, `"`+name+`"`, string(appendString(nil, name)), name)
		assert.NotEqual(t, fNone, fieldOf(name), name)
	}
}

// TestMapKeysThatAreFields: mapper.first looks up, rather than takes from the span's reading,
// the fields whose name is one of the keys Map writes itself; it names them, so a key added to
// reservedBit that is also a field must be added there.
func TestMapKeysThatAreFields(t *testing.T) {
	looked := map[field]bool{fProvider: true, fModel: true, fPlainInputTokens: true, fPlainOutputTokens: true, fZeroeval: true}
	for _, key := range []string{keyProvider, keyModel, keyInputTokens, keyOutputTokens, keyZeroeval, keyResource, keyScope, keyTruncated} {
		require.NotZero(t, reservedBit(key), key)
		if f := fieldOf(key); f != fNone {
			assert.True(t, looked[f], "%s is a field that mapper.first must look up", key)
			delete(looked, f)
		}
	}
	assert.Empty(t, looked, "fields looked up that are not Map's keys")
}
