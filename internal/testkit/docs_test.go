package testkit_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var (
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mdHeading = regexp.MustCompile(`(?m)^#{1,6} +(.+)$`)
	outside   = regexp.MustCompile(`\.\./shared|shared/(spec|CONTRACT|ARCHITECTURE)`)
)

// slug is GitHub's anchor for a heading: lower case, spaces to hyphens,
// punctuation other than hyphens and underscores dropped.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestDocsLinksStayInsideTheRepository: a clone has only this repository,
// so every relative link of the README and docs/ must resolve in it (and
// its anchor to a heading), and none may point at files beside it.
func TestDocsLinksStayInsideTheRepository(t *testing.T) {
	t.Parallel()
	root := filepath.Join("..", "..")
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	require.NoError(t, err)
	files := append([]string{filepath.Join(root, "README.md"), filepath.Join(root, "BENCHMARKS.md")}, docs...)
	checked := 0
	for _, f := range files {
		text, err := os.ReadFile(f)
		require.NoError(t, err)
		require.Empty(t, outside.FindString(string(text)), "%s points outside the repository", f)
		for _, m := range mdLink.FindAllStringSubmatch(string(text), -1) {
			target := m[1]
			if strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			dest := f
			if path != "" {
				dest = filepath.Join(filepath.Dir(f), path)
				_, err := os.Stat(dest)
				require.NoError(t, err, "%s links to %s, which is not in the repository", f, target)
			}
			if anchor != "" {
				body, err := os.ReadFile(dest)
				require.NoError(t, err)
				var slugs []string
				for _, h := range mdHeading.FindAllStringSubmatch(string(body), -1) {
					slugs = append(slugs, slug(h[1]))
				}
				require.Contains(t, slugs, anchor, "%s links to %s: no such heading", f, target)
			}
			checked++
		}
	}
	require.Greater(t, checked, 10, "the link pattern found too few links to be checking anything")
}
