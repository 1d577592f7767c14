package docs_test

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/plumehq/plume/api/openapi"
)

// TestLinks: every relative link of README.md and docs/*.md names a file or directory of the
// repository and, with a #fragment, a heading of that file.
func TestLinks(t *testing.T) {
	repo := os.DirFS("..")
	broken, err := brokenLinks(repo, pages(t, repo))
	require.NoError(t, err)
	assert.Empty(t, broken, "broken relative links")
}

// TestEveryRouteDocumented: every operation of the document served at /openapi.json appears
// on a page of docs/ as "METHOD /path", with the document's parameter names.
func TestEveryRouteDocumented(t *testing.T) {
	rec := httptest.NewRecorder()
	openapi.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, openapi.Path, nil))
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())

	repo := os.DirFS("..")
	var docs []string
	for _, name := range pages(t, repo) {
		if strings.HasPrefix(name, "docs/") {
			docs = append(docs, name)
		}
	}
	missing, err := undocumentedRoutes(rec.Body.Bytes(), repo, docs)
	require.NoError(t, err)
	assert.Empty(t, missing, "routes of /openapi.json that no page of docs/ names as METHOD /path")
}

// TestChecksFail: both checks report a breach: a link to a missing file, to a missing
// heading, out of the repository, and a route no page names (a longer path that starts with
// it does not count).
func TestChecksFail(t *testing.T) {
	repo := fstest.MapFS{
		"README.md": {Data: []byte("# Plume\n\n[ok](docs/a.md#the-spans-page) [gone](docs/gone.md) " +
			"[no heading](docs/a.md#nowhere) [out](../elsewhere.md) [web](https://example.com/x.md)\n" +
			"```\n[in a fence](docs/fenced.md)\n```\n`[in code](docs/code.md)`\n")},
		"docs/a.md": {Data: []byte("# A\n\n## The `/spans` page\n\n`GET /spans/{span_id}/attachments` and [up](../README.md#plume)\n")},
	}
	broken, err := brokenLinks(repo, []string{"README.md", "docs/a.md"})
	require.NoError(t, err)
	assert.Equal(t, []string{
		"README.md: docs/gone.md: no such file",
		"README.md: docs/a.md#nowhere: no such heading",
		"README.md: ../elsewhere.md: outside the repository",
	}, broken)

	doc := []byte(`{"paths": {"/spans": {"get": {}, "parameters": []}, "/spans/{span_id}/attachments": {"get": {}}}}`)
	missing, err := undocumentedRoutes(doc, repo, []string{"docs/a.md"})
	require.NoError(t, err)
	assert.Equal(t, []string{"GET /spans"}, missing)
}

// pages are README.md and every page of docs/, as paths of repo.
func pages(t *testing.T, repo fs.FS) []string {
	t.Helper()
	docs, err := fs.Glob(repo, "docs/*.md")
	require.NoError(t, err)
	require.NotEmpty(t, docs)
	return append([]string{"README.md"}, docs...)
}

var (
	// fence opens or closes a fenced code block; links and headings inside one are text.
	fence = regexp.MustCompile("^\\s*(```|~~~)")
	// codeSpan is inline code, whose brackets are not links.
	codeSpan = regexp.MustCompile("`+[^`]*`+")
	// link is an inline link or image: [text](target "title").
	link    = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	heading = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
)

// prose returns the lines of a Markdown file outside fenced code blocks.
func prose(text string) []string {
	var out []string
	inFence := false
	for line := range strings.Lines(text) {
		if fence.MatchString(line) {
			inFence = !inFence
			continue
		}
		if !inFence {
			out = append(out, strings.TrimRight(line, "\n"))
		}
	}
	return out
}

// anchors returns the fragment ids GitHub gives the headings of a Markdown file: the heading's
// text lowercased, every character but letters, digits, '-', '_' and spaces dropped, spaces
// made '-'; a repeated id gets -1, -2 ... in order.
func anchors(text string) map[string]bool {
	ids := map[string]bool{}
	seen := map[string]int{}
	for _, line := range prose(text) {
		m := heading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteByte('-')
			}
		}
		id := b.String()
		if n := seen[id]; n > 0 {
			seen[id]++
			id = fmt.Sprintf("%s-%d", id, n)
		} else {
			seen[id] = 1
		}
		ids[id] = true
	}
	return ids
}

// brokenLinks checks the relative links of files (paths of repo): each names a file or
// directory of repo, and a #fragment names a heading of the Markdown file it points to (or of
// the file itself for a bare #fragment). It returns one line per broken link.
func brokenLinks(repo fs.FS, files []string) ([]string, error) {
	var broken []string
	for _, name := range files {
		text, err := fs.ReadFile(repo, name)
		if err != nil {
			return nil, err
		}
		for _, line := range prose(string(text)) {
			for _, m := range link.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, ""), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				if problem := resolve(repo, name, target); problem != "" {
					broken = append(broken, name+": "+target+": "+problem)
				}
			}
		}
	}
	return broken, nil
}

// resolve says what is wrong with target, a link of the file from, or "" when it resolves.
func resolve(repo fs.FS, from, target string) string {
	file, fragment, _ := strings.Cut(target, "#")
	dest := from
	if file != "" {
		dest = path.Join(path.Dir(from), file)
		if dest == ".." || strings.HasPrefix(dest, "../") {
			return "outside the repository"
		}
		if _, err := fs.Stat(repo, dest); err != nil {
			return "no such file"
		}
	}
	if fragment == "" || !strings.HasSuffix(dest, ".md") {
		return ""
	}
	text, err := fs.ReadFile(repo, dest)
	if err != nil {
		return err.Error()
	}
	if !anchors(string(text))[fragment] {
		return "no such heading"
	}
	return ""
}

// undocumentedRoutes returns the operations of an OpenAPI document (doc) that no file of docs
// (paths of repo) names as "METHOD /path", sorted. A path must end there: "GET /spans" inside
// "GET /spans/{span_id}/attachments" documents only the longer route.
func undocumentedRoutes(doc []byte, repo fs.FS, docs []string) ([]string, error) {
	var d struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, err
	}
	var text strings.Builder
	for _, name := range docs {
		b, err := fs.ReadFile(repo, name)
		if err != nil {
			return nil, err
		}
		text.Write(b)
		text.WriteByte('\n')
	}
	var missing []string
	for p, item := range d.Paths {
		for method := range item {
			if !slices.Contains([]string{"get", "put", "post", "delete", "patch", "head", "options"}, method) {
				continue
			}
			route := strings.ToUpper(method) + " " + p
			named := regexp.MustCompile(regexp.QuoteMeta(route) + `([^A-Za-z0-9_{}/:.\-]|$)`)
			if !named.MatchString(text.String()) {
				missing = append(missing, route)
			}
		}
	}
	slices.Sort(missing)
	return missing, nil
}
