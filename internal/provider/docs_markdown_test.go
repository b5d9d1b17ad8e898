package provider

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docsWordBudget bounds the generated registry docs (docs/**/*.md, counted
// as `wc -w` counts them). A reader should get through a page in one sitting:
// a resource page is what it does, an example, its arguments, timeouts and
// import; the mechanics live once, in the "How it works" guide. Raising the
// budget is a decision, not a fix for a failing test: shorten first.
const docsWordBudget = 14000

// contributingWordBudget bounds CONTRIBUTING.md, a contributor's first hour:
// details belong next to the code they explain (package doc comments, the
// internal/ folders' READMEs).
const contributingWordBudget = 2000

var repoRoot = filepath.Join("..", "..")

// markdownPages returns docs/'s Markdown files, path -> content.
func markdownPages(t *testing.T) map[string]string {
	t.Helper()
	pages := map[string]string{}
	err := filepath.WalkDir(filepath.Join(repoRoot, "docs"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".md") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		pages[path] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) < 20 {
		t.Fatalf("found only %d pages under docs/: the walk is broken", len(pages))
	}
	return pages
}

func TestDocsWordBudget(t *testing.T) {
	total := 0
	for _, src := range markdownPages(t) {
		total += len(strings.Fields(src))
	}
	if total > docsWordBudget {
		t.Errorf("docs/ has %d words, more than the budget of %d: shorten the templates/ or the schema descriptions (say a rule once, in the How it works guide, and link to it), then make docs", total, docsWordBudget)
	}
	b, err := os.ReadFile(filepath.Join(repoRoot, "CONTRIBUTING.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(strings.Fields(string(b))); n > contributingWordBudget {
		t.Errorf("CONTRIBUTING.md has %d words, more than the budget of %d: move detail next to the code it explains", n, contributingWordBudget)
	}
}

// tableCells counts a table row's cells as GitHub Flavored Markdown does:
// split at every pipe not escaped with a backslash (a pipe inside a code
// span splits too), leading and trailing pipes not counted.
func tableCells(row string) int {
	row = strings.TrimSpace(row)
	n := 1
	for i := 0; i < len(row); i++ {
		switch row[i] {
		case '\\':
			i++
		case '|':
			n++
		}
	}
	if strings.HasPrefix(row, "|") {
		n--
	}
	if strings.HasSuffix(row, "|") && !strings.HasSuffix(row, `\|`) {
		n--
	}
	return n
}

var tableDelimiterRE = regexp.MustCompile(`^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?$`)

// markdownTableProblems reports, for one page, every table row whose cell
// count differs from its header's, and every blank line inside a table (rows
// after a blank line with no header of their own render as text). Fenced
// code blocks are skipped.
func markdownTableProblems(src string) []string {
	lines := strings.Split(src, "\n")
	var problems []string
	report := func(i int, format string, args ...any) {
		problems = append(problems, fmt.Sprintf("line %d: ", i+1)+fmt.Sprintf(format, args...))
	}
	fenced := false
	cols := 0     // the header's cell count of the table being read; 0 outside one
	prevCols := 0 // that of a table that ended at the line before (a blank one)
	for i := 0; i < len(lines); i++ {
		line := strings.TrimSpace(lines[i])
		if strings.HasPrefix(line, "```") {
			fenced, cols, prevCols = !fenced, 0, 0
			continue
		}
		if fenced {
			continue
		}
		isRow := strings.HasPrefix(line, "|")
		switch {
		case isRow && cols == 0 && i+1 < len(lines) && tableDelimiterRE.MatchString(strings.TrimSpace(lines[i+1])):
			cols, prevCols = tableCells(line), 0
			if d := tableCells(strings.TrimSpace(lines[i+1])); d != cols {
				report(i+1, "a delimiter row of %d cells under a header of %d", d, cols)
			}
			i++
			continue
		case isRow && cols == 0 && prevCols > 0:
			report(i-1, "a blank line inside a table: the rows after it render as text")
			cols = prevCols
		}
		if isRow && cols > 0 {
			if n := tableCells(line); n != cols {
				report(i, "a row of %d cells in a table of %d: %s", n, cols, line)
			}
			continue
		}
		prevCols = 0
		if line == "" {
			prevCols = cols
		}
		cols = 0
	}
	return problems
}

func TestDocsMarkdownTables(t *testing.T) {
	for path, src := range markdownPages(t) {
		for _, p := range markdownTableProblems(src) {
			t.Errorf("%s: %s", path, p)
		}
	}
}

// The checker itself: it finds the two faults it exists for.
func TestMarkdownTableProblemsFindsFaults(t *testing.T) {
	good := "| a | b |\n|---|---|\n| `x \\| y` | z |\n| 1 | 2 |\n\nText.\n\n| c |\n|---|\n| 3 |\n"
	if p := markdownTableProblems(good); len(p) != 0 {
		t.Errorf("a well-formed page reported: %v", p)
	}
	threeCells := "| a | b |\n|---|---|\n| 1 | 2 | 3 |\n"
	if p := markdownTableProblems(threeCells); len(p) != 1 {
		t.Errorf("a three-cell row in a two-column table: got %v, want one problem", p)
	}
	blank := "| a | b |\n|---|---|\n| 1 | 2 |\n\n| 3 | 4 |\n"
	if p := markdownTableProblems(blank); len(p) != 1 {
		t.Errorf("a blank line inside a table: got %v, want one problem", p)
	}
	fence := "```\n| a | b |\n|---|---|\n| 1 |\n```\n"
	if p := markdownTableProblems(fence); len(p) != 0 {
		t.Errorf("a table in a code block reported: %v", p)
	}
}

// placeholderDescriptionRE matches tfplugindocs' default front-matter
// description ("The redisstreamcoordinator_group resource.").
var placeholderDescriptionRE = regexp.MustCompile(`(?m)^description: \|-\n\s+The \S+ (resource|data source|ephemeral resource|list resource|action|function)\.\s*$`)

// Every page's front matter has a real one-line description and no empty
// subcategory placeholder.
func TestDocsFrontMatter(t *testing.T) {
	for path, src := range markdownPages(t) {
		fm, ok := frontMatter(src)
		if !ok {
			t.Errorf("%s: no front matter", path)
			continue
		}
		if placeholderDescriptionRE.MatchString(fm) {
			t.Errorf("%s: the front matter keeps the generator's placeholder description: give the page's template a one-line description", path)
		}
		if strings.Contains(fm, `subcategory: ""`) {
			t.Errorf(`%s: the front matter has the placeholder subcategory: "": remove it from the page's template`, path)
		}
		desc := regexp.MustCompile(`(?ms)^description: \|-\n((?:  .*\n)+)`).FindStringSubmatch(fm + "\n")
		if desc == nil {
			t.Errorf("%s: the front matter has no description", path)
			continue
		}
		if n := strings.Count(strings.TrimSpace(desc[1]), "\n"); n > 0 {
			t.Errorf("%s: the front-matter description has %d lines, want one:\n%s", path, n+1, desc[1])
		}
	}
}

func frontMatter(src string) (string, bool) {
	if !strings.HasPrefix(src, "---\n") {
		return "", false
	}
	fm, _, ok := strings.Cut(src[4:], "\n---\n")
	return fm, ok
}
