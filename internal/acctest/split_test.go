package acctest

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// The two passes of the newer-CLI split, run over the same subtests: the
// first runs its half and records what ran to the end; the second runs
// everything else, so every test ran in exactly one pass, and a test the
// first pass skipped on its own (a feature OpenTofu lacks) runs in the second,
// there other than by its hash.
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

	var handedOver []string
	pass := func(mode string) map[string]bool {
		t.Setenv(EnvSplit, mode)
		var mu sync.Mutex
		ran := map[string]bool{}
		t.Run(mode, func(t *testing.T) {
			for _, name := range names {
				t.Run(name, func(t *testing.T) {
					// One name in both passes, as in make test.
					byHash := splitNewerCLIs(t, name)
					if mode == "first" && !byHash {
						t.Errorf("%s ran in the first pass, not by its hash", name)
					}
					if mode == "second" && !byHash {
						handedOver = append(handedOver, name)
					}
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
	var wantHandedOver []string
	for _, name := range names {
		switch {
		case first[name] && second[name]:
			t.Errorf("%s ran in both passes", name)
		case !first[name] && !second[name]:
			t.Errorf("%s ran in neither pass", name)
		}
		if selfSkips(name) && inFirstHalf(splitKey(name)) {
			wantHandedOver = append(wantHandedOver, name)
		}
	}
	if len(wantHandedOver) == 0 {
		t.Fatal("no self-skipping case hashes to the first pass: pick other names")
	}
	if fmt.Sprint(handedOver) != fmt.Sprint(wantHandedOver) {
		t.Errorf("the second pass ran %v other than by their hash, want %v (the first half's tests the first pass skipped)", handedOver, wantHandedOver)
	}
	data, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(string(data)), "\n"); len(lines) != len(first) {
		t.Errorf("the record names %d tests, the first pass ran %d to the end:\n%s", len(lines), len(first), data)
	}
}

// A test that failed, skipped, or had a subtest skip is not recorded: the
// second pass runs it again.
func TestSplitNewerCLIsRecordsOnlyWhatRanToTheEnd(t *testing.T) {
	record := filepath.Join(t.TempDir(), "record")
	t.Setenv(EnvSplitRecord, record)
	t.Setenv(EnvSplit, "first")
	// A subtest that calls the gate, at a depth, with its own outcome.
	sub := func(path string, skipped bool) func(*fakeTB) {
		return func(f *fakeTB) {
			s := &fakeTB{TB: t, name: f.name + path}
			if !splitNewerCLIs(s, s.name) {
				t.Errorf("%s: not by its hash, as its parent is", s.name)
			}
			s.skipped = skipped
			s.cleanup()
		}
	}
	outcomes := map[string]func(f *fakeTB){
		"passes":        func(*fakeTB) {},
		"fails":         func(f *fakeTB) { f.failed = true },
		"skips":         func(f *fakeTB) { f.skipped = true },
		"subskips":      sub("/sub", true),
		"grandsubskips": sub("/sub/grand", true),
		"subpasses":     sub("/sub", false),
	}
	recorded := map[string]bool{}
	for name, outcome := range outcomes {
		key := firstHalfName(t, name)
		f := &fakeTB{TB: t, name: key}
		if !splitNewerCLIs(f, key) {
			t.Fatalf("%s: not by its hash in the first pass", key)
		}
		if f.skipped {
			t.Fatalf("%s: skipped, though it hashes to the first pass", key)
		}
		outcome(f)
		f.cleanup()
		if name == "passes" || name == "subpasses" {
			recorded[splitKey(key)] = true
		}
	}
	got, err := readRecord(record)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(recorded) {
		t.Errorf("record %v, want only %v", keys(got), keys(recorded))
	}
}

// The key is the test binary's base name and the test's name: the same in
// both passes, though go test builds each pass's binary in its own temporary
// directory.
func TestSplitKeyIsTheSameInEveryPass(t *testing.T) {
	key := splitKey("TestX/sub")
	if key != "acctest.test TestX/sub" {
		t.Fatalf("key %q, want %q", key, "acctest.test TestX/sub")
	}
}

// New is the gate: it skips the other pass's tests, runs an EveryNewerCLI
// test in both, and starts a handed-over test's coordinator with the default
// numbering, the others with the numbering asked for.
func TestNewIsTheGate(t *testing.T) {
	t.Setenv(EnvEndpoint, "") // the in-repo coordinator, whose numbering the test reads
	record := filepath.Join(t.TempDir(), "record")
	t.Setenv(EnvSplitRecord, record)
	t.Setenv(EnvNumbering, "alternative")
	n := 0
	// pick is a fresh subtest name the hash gives the first half or not.
	pick := func(firstHalf bool) string {
		for ; ; n++ {
			name := fmt.Sprintf("c%d", n)
			if inFirstHalf(splitKey(t.Name()+"/"+name)) == firstHalf {
				n++
				return name
			}
		}
	}
	run := func(name string, opts Options) (ran bool, numbering coordinator.Numbering) {
		t.Run(name, func(t *testing.T) {
			env := New(t, opts)
			ran, numbering = true, env.Coordinator.Numbering()
		})
		return ran, numbering
	}
	t.Setenv(EnvSplit, "first")
	name := pick(false)
	if ran, _ := run(name, Options{}); ran {
		t.Errorf("first pass: %s (second half) ran", name)
	}
	name = pick(false)
	if ran, _ := run(name, Options{EveryNewerCLI: true}); !ran {
		t.Errorf("first pass: %s (second half) with EveryNewerCLI skipped", name)
	}
	name = pick(true)
	if ran, n := run(name, Options{}); !ran || n != coordinator.AlternativeNumbering {
		t.Errorf("first pass, %s (first half): ran %v with numbering %+v, want the alternative", name, ran, n)
	}
	t.Setenv(EnvSplit, "second") // nothing recorded: a first-half test is handed over
	name = pick(true)
	if ran, n := run(name, Options{}); !ran || n != (coordinator.Numbering{}) {
		t.Errorf("second pass, %s handed over: ran %v with numbering %+v, want the default", name, ran, n)
	}
	name = pick(false)
	if ran, n := run(name, Options{EveryNewerCLI: true}); !ran || n != (coordinator.Numbering{}) {
		t.Errorf("second pass, %s with EveryNewerCLI: ran %v with numbering %+v, want the default", name, ran, n)
	}
	name = pick(false)
	if ran, n := run(name, Options{}); !ran || n != coordinator.AlternativeNumbering {
		t.Errorf("second pass, %s: ran %v with numbering %+v, want the alternative", name, ran, n)
	}
	// A subtest follows its gated parent.
	name = pick(false)
	t.Run(name, func(t *testing.T) {
		New(t, Options{})
		t.Run("sub", func(t *testing.T) {
			if n := New(t, Options{}).Coordinator.Numbering(); n != coordinator.AlternativeNumbering {
				t.Errorf("second pass, a subtest of %s: numbering %+v, want its parent's, the alternative", name, n)
			}
		})
	})
	name = pick(true)
	t.Run(name, func(t *testing.T) {
		New(t, Options{})
		t.Run("sub", func(t *testing.T) {
			if n := New(t, Options{}).Coordinator.Numbering(); n != (coordinator.Numbering{}) {
				t.Errorf("second pass, a subtest of %s (handed over): numbering %+v, want its parent's, the default", name, n)
			}
		})
	})
}

// With real parallel subtests, a parent whose subtest skips is not recorded
// and one whose subtests all pass is: Go runs a parent's cleanups after its
// parallel subtests end.
func TestSplitNewerCLIsParallelSubtests(t *testing.T) {
	record := filepath.Join(t.TempDir(), "record")
	t.Setenv(EnvSplitRecord, record)
	t.Setenv(EnvSplit, "first")
	passes, skips := firstHalfName(t, "passes"), firstHalfName(t, "skips")
	t.Run("group", func(t *testing.T) {
		for _, name := range []string{passes, skips} {
			t.Run(name[strings.LastIndex(name, "/")+1:], func(t *testing.T) {
				splitNewerCLIs(t, name)
				for i := range 8 {
					t.Run(fmt.Sprint(i), func(t *testing.T) {
						t.Parallel()
						splitNewerCLIs(t, fmt.Sprintf("%s/%d", name, i))
						if name == skips && i == 5 {
							t.Skip("the CLI lacks the feature")
						}
					})
				}
			})
		}
	})
	got, err := readRecord(record)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]bool{splitKey(passes): true}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("record %v, want %v", keys(got), keys(want))
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

// firstHalfName is a test name with prefix that the hash gives the first pass.
func firstHalfName(t *testing.T, prefix string) string {
	for i := 0; ; i++ {
		name := fmt.Sprintf("%s/%s-%d", t.Name(), prefix, i)
		if inFirstHalf(splitKey(name)) {
			return name
		}
	}
}

// fakeTB is a test whose outcome the test sets, with cleanups run on demand.
type fakeTB struct {
	testing.TB
	name            string
	failed, skipped bool
	cleanups        []func()
}

func (f *fakeTB) Helper()               {}
func (f *fakeTB) Name() string          { return f.name }
func (f *fakeTB) Failed() bool          { return f.failed }
func (f *fakeTB) Skipped() bool         { return f.skipped }
func (f *fakeTB) Cleanup(fn func())     { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) Skipf(string, ...any)  { f.skipped = true }
func (f *fakeTB) Fatalf(string, ...any) { f.failed = true }
func (f *fakeTB) cleanup() {
	for i := len(f.cleanups) - 1; i >= 0; i-- {
		f.cleanups[i]()
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
