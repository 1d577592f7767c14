package dashboard

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEveryTemplateParses parses every page and fragment, as the first render of each does
// (pages are parsed on first use, not at start), and checks the bundles they link.
func TestEveryTemplateParses(t *testing.T) {
	pages := pageTemplates()
	require.Greater(t, len(pages), 10)
	for name := range pages {
		t.Run(name, func(t *testing.T) {
			assert.NotPanics(t, func() { require.NotNil(t, pageTemplate(name)) })
		})
	}
	assert.Nil(t, pageTemplate("layout"), "the layout is no page")
	assert.Nil(t, pageTemplate("no-such-page"))

	assets, urls := bundles()
	for _, ext := range []string{".css", ".js", ".svg"} {
		require.Contains(t, urls, "app"+ext)
	}
	for name, a := range assets {
		if a.gzipped != nil {
			assert.NotEmpty(t, a.gzipped(), name)
		}
	}
}
