package provider

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// Guides that name the tests behind their claims name tests that exist, so a
// renamed or deleted test cannot leave a guide pointing at nothing.
func TestGuidesNameExistingTests(t *testing.T) {
	testFiles, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	defined := map[string]bool{}
	funcRe := regexp.MustCompile(`(?m)^func (Test\w+)\(`)
	for _, f := range testFiles {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range funcRe.FindAllStringSubmatch(string(src), -1) {
			defined[m[1]] = true
		}
	}
	guides, err := filepath.Glob(filepath.Join("..", "..", "templates", "guides", "*.md.tmpl"))
	if err != nil || len(guides) == 0 {
		t.Fatalf("no guide templates found: %v", err)
	}
	named := 0
	for _, g := range guides {
		src, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile("`(TestAcc\\w+)`").FindAllStringSubmatch(string(src), -1) {
			named++
			if !defined[m[1]] {
				t.Errorf("%s names %s, which is not a test of this package", filepath.Base(g), m[1])
			}
		}
	}
	if named == 0 {
		t.Fatal("no guide names a test: the check would pass on nothing")
	}
}
