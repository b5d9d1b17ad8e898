package acctest

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
)

// The two passes of the newer-CLI split, run over the same subtests: the
// first runs its half and records what ran to the end; the second runs
// everything else, so every test ran in exactly one pass, and a test the
// first pass skipped on its own (a feature OpenTofu lacks) runs in the second.
func TestSplitNewerCLIsRunsEveryTestInOnePass(t *testing.T) {
	record := filepath.Join(t.TempDir(), "record")
	t.Setenv(EnvSplitRecord, record)
	names := make([]string, 40)
	for i := range names {
		names[i] = fmt.Sprintf("case%02d", i)
	}
	// In the first pass, case00 to case04 skip after the gate, as a test of a
	// feature the CLI lacks does.
	selfSkips := func(name string) bool { return name < "case05" }

	pass := func(mode string) map[string]bool {
		t.Setenv(EnvSplit, mode)
		var mu sync.Mutex
		ran := map[string]bool{}
		t.Run(mode, func(t *testing.T) {
			for _, name := range names {
				t.Run(name, func(t *testing.T) {
					splitNewerCLIs(t, name) // one name in both passes, as in make test
					if mode == "first" && selfSkips(name) {
						t.Skip("the CLI lacks the feature")
					}
					mu.Lock()
					ran[name] = true
					mu.Unlock()
				})
			}
		})
		return ran
	}
	first := pass("first")
	second := pass("second")

	if len(first) == 0 || len(second) == 0 {
		t.Fatalf("one pass ran nothing: first %v, second %v", keys(first), keys(second))
	}
	for _, name := range names {
		switch {
		case first[name] && second[name]:
			t.Errorf("%s ran in both passes", name)
		case !first[name] && !second[name]:
			t.Errorf("%s ran in neither pass", name)
		}
	}
	data, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(data))
	if len(lines) != len(first) {
		t.Errorf("the record names %d tests, the first pass ran %d to the end:\n%s", len(lines), len(first), data)
	}
	for _, name := range names {
		if selfSkips(name) && inFirstHalf(name) && !second[name] {
			t.Errorf("%s skipped itself in the first pass and did not run in the second", name)
		}
	}
}

// Without a record (the first pass did not run) the second pass runs
// everything; with the split unset nothing is skipped.
func TestSplitNewerCLIsWithoutARecordRunsEverything(t *testing.T) {
	for _, mode := range []string{"second", ""} {
		t.Run("mode="+mode, func(t *testing.T) {
			t.Setenv(EnvSplit, mode)
			t.Setenv(EnvSplitRecord, filepath.Join(t.TempDir(), "never-written"))
			for i := range 20 {
				ran := false
				t.Run(fmt.Sprint(i), func(t *testing.T) {
					SplitNewerCLIs(t)
					ran = true
				})
				if !ran {
					t.Errorf("subtest %d skipped", i)
				}
			}
		})
	}
}

// The hash shares real test names about evenly.
func TestInFirstHalfSharesNamesEvenly(t *testing.T) {
	first := 0
	const n = 400
	for i := range n {
		if inFirstHalf(splitKey(fmt.Sprintf("TestAccGroup_case%d", i))) {
			first++
		}
	}
	if first < n*2/5 || first > n*3/5 {
		t.Fatalf("%d of %d names in the first half", first, n)
	}
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
