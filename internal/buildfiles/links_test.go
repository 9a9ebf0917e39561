package buildfiles

import (
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// markdownLink finds the target of [text](target) and ![alt](target).
var markdownLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// Every relative link of README.md and docs/*.md names a file that exists,
// read from the page's own folder (a link in docs/ to docs/x.md would be
// docs/docs/x.md), and every #anchor a heading of the page it points at.
func TestEveryRelativeLinkOfTheDocsResolves(t *testing.T) {
	pages, err := filepath.Glob("../../docs/*.md")
	require.NoError(t, err)
	pages = append(pages, "../../README.md")
	checked := 0
	for _, page := range pages {
		data, err := os.ReadFile(page)
		require.NoError(t, err)
		text := withoutCodeBlocks(string(data))
		for _, m := range markdownLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			resolved := page
			if file != "" {
				resolved = path.Join(path.Dir(page), file)
			}
			checked++
			if _, err := os.Stat(resolved); err != nil {
				t.Errorf("%s links %s, which resolves to %s: no such file", strings.TrimPrefix(page, "../../"), target, strings.TrimPrefix(resolved, "../../"))
				continue
			}
			if anchor != "" && strings.HasSuffix(resolved, ".md") {
				linked, err := os.ReadFile(resolved)
				require.NoError(t, err)
				if !hasAnchor(string(linked), anchor) {
					t.Errorf("%s links %s: %s has no heading with the anchor #%s", strings.TrimPrefix(page, "../../"), target, strings.TrimPrefix(resolved, "../../"), anchor)
				}
			}
		}
	}
	assert.Greater(t, checked, 50, "the links were found")
}

// withoutCodeBlocks drops fenced code, whose brackets are not links.
func withoutCodeBlocks(s string) string {
	var out []string
	in := false
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			in = !in
			continue
		}
		if !in {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// hasAnchor tells whether a heading of page slugs to anchor as GitHub
// makes anchors: lower case, punctuation dropped, spaces to dashes.
func hasAnchor(page, anchor string) bool {
	for _, l := range strings.Split(withoutCodeBlocks(page), "\n") {
		if !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(l, "#")))
		var b strings.Builder
		for _, r := range h {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
				b.WriteRune(r)
			}
		}
		if b.String() == anchor {
			return true
		}
	}
	return false
}

// The page a server team reads first lists every feature file.
func TestTheSuitePageNamesEveryFeatureFile(t *testing.T) {
	page := read(t, "docs/running-the-suite.md")
	files, err := filepath.Glob("../../features/*.feature")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		assert.Contains(t, page, "`"+filepath.Base(f)+"`", "docs/running-the-suite.md does not list %s", filepath.Base(f))
	}
}
