package acctest

import (
	"bufio"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The newer-CLI split of make test. The whole suite runs under the oldest
// supported Terraform (with the race detector) and against a separately
// started coordinator; the two newer CLIs, OpenTofu and the newest Terraform,
// share the acceptance tests between them instead of each running all of
// them, so make test stays inside CI's time limit. The rule keeps every
// acceptance test under at least one newer CLI:
//
//   - the first pass (OpenTofu) runs the tests whose name hashes to it, and
//     records each one that ran to the end, neither skipped nor failed, in
//     the file EnvSplitRecord names;
//   - the second pass (the newest Terraform) runs every test the record does
//     not name: its own half, and the tests of the first half that the first
//     pass skipped (list resources, actions and `query` need Terraform >=
//     1.14, which OpenTofu does not offer).
//
// Numbering: a test runs with the alternative numbering in the pass its hash
// gives it. Whatever else the second pass runs, the tests the first pass
// skipped and the tests both passes run (Options.EveryNewerCLI), it runs with
// the default numbering, as it did before the split: so the tests Terraform
// 1.11 skips (identity, Terraform 1.14 features) still meet the real
// server's numbering when they can. A Terraform 1.14 test whose hash gives it
// the second pass meets only the alternative numbering.
//
// The gate is New (Options.EveryNewerCLI opts out: both passes run the test).
// A subtest that skips under a gated parent is seen when it calls New itself:
// the parent is then left out of the record, so the second pass runs it
// whole. A subtest that skips without calling New is not seen. A missing
// record makes the second pass run everything; make test stops before the
// second pass when the first fails. With EnvSplit unset (a bare go test,
// make testacc-tofu, make testacc-latest) nothing is split.
const (
	// EnvSplit is "first" or "second": which pass of the split this is.
	EnvSplit = "TF_ACC_NEWER_CLI_SPLIT"
	// EnvSplitRecord names the file the first pass appends to and the
	// second pass reads.
	EnvSplitRecord = "TF_ACC_NEWER_CLI_RECORD"
)

// SplitNewerCLIs skips t when the newer-CLI split gives it to the other pass,
// and, in the first pass, records it when it runs to the end. It reports
// whether the test runs in this pass because its hash gives it this pass (a
// subtest as its gated parent). New calls it; a test that runs terraform
// without New runs in both passes.
func SplitNewerCLIs(t testing.TB) (byHash bool) {
	t.Helper()
	return splitNewerCLIs(t, t.Name())
}

// splitGate is one gated test of this process.
type splitGate struct {
	mu sync.Mutex
	// incomplete: a subtest skipped, so the test did not run to the end.
	incomplete bool
	// byHash: the test runs in this pass because its hash gives it this pass.
	byHash bool
}

var (
	splitGatesMu sync.Mutex
	splitGates   = map[string]*splitGate{} // by test name
)

// gatedAncestor is the nearest ancestor of name that passed the gate.
func gatedAncestor(name string) *splitGate {
	splitGatesMu.Lock()
	defer splitGatesMu.Unlock()
	for i := strings.LastIndex(name, "/"); i > 0; i = strings.LastIndex(name[:i], "/") {
		if g := splitGates[name[:i]]; g != nil {
			return g
		}
	}
	return nil
}

// splitNewerCLIs is SplitNewerCLIs with the test's name given.
func splitNewerCLIs(t testing.TB, name string) bool {
	t.Helper()
	mode := os.Getenv(EnvSplit)
	if mode == "" {
		return false
	}
	record := os.Getenv(EnvSplitRecord)
	if record == "" {
		t.Fatalf("%s=%s needs %s, the file that records what the first pass ran", EnvSplit, mode, EnvSplitRecord)
	}
	if mode != "first" && mode != "second" {
		t.Fatalf("%s=%q: want \"first\", \"second\" or unset", EnvSplit, mode)
	}
	// A parent already decided for its subtests; in the first pass, a
	// subtest that skips keeps the parent out of the record.
	if parent := gatedAncestor(name); parent != nil {
		parent.mu.Lock()
		byHash := parent.byHash
		parent.mu.Unlock()
		if mode == "first" {
			t.Cleanup(func() {
				if t.Skipped() {
					parent.mu.Lock()
					parent.incomplete = true
					parent.mu.Unlock()
				}
			})
		}
		return byHash
	}
	key := splitKey(name)
	// The first pass's half, and the second pass's.
	byHash := inFirstHalf(key) == (mode == "first")
	gate := &splitGate{byHash: byHash}
	splitGatesMu.Lock()
	splitGates[name] = gate
	splitGatesMu.Unlock()
	if mode == "first" {
		if !byHash {
			t.Skipf("runs in the second pass of the newer-CLI split (%s)", EnvSplit)
		}
		t.Cleanup(func() {
			gate.mu.Lock()
			incomplete := gate.incomplete
			gate.mu.Unlock()
			if t.Skipped() || t.Failed() || incomplete {
				return
			}
			if err := appendLine(record, key); err != nil {
				// Unrecorded, the second pass runs the test again: slower, not wrong.
				t.Logf("newer-CLI split: cannot record %s in %s: %v", key, record, err)
			}
		})
		return true
	}
	ran, err := firstPassRan(record)
	if err != nil {
		t.Fatalf("newer-CLI split: %v", err)
	}
	if ran[key] {
		t.Skipf("ran in the first pass of the newer-CLI split (%s)", EnvSplit)
	}
	return byHash
}

// splitDefaultNumbering reports whether New starts a test's in-repo
// coordinator with the default numbering whatever EnvNumbering says: in the
// second pass, a test that is there other than by its hash.
func splitDefaultNumbering(byHash bool) bool {
	return os.Getenv(EnvSplit) == "second" && !byHash
}

// splitKey names a test across the packages a pass runs: the test binary's
// base name (provider.test, the same in both passes) and the test's full
// name, subtests included.
func splitKey(name string) string {
	return strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe") + " " + name
}

// inFirstHalf is the stable hash that shares the tests between the passes.
func inFirstHalf(key string) bool {
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	return h.Sum32()%2 == 0
}

var splitRecordMu sync.Mutex

// appendLine appends one line in one write, so the packages' test binaries,
// which run at once, never interleave their lines.
func appendLine(path, line string) error {
	splitRecordMu.Lock()
	defer splitRecordMu.Unlock()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(line + "\n"); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

var (
	firstPassMu   sync.Mutex
	firstPassSets = map[string]map[string]bool{}
)

// firstPassRan reads the record once per test binary (and path).
func firstPassRan(path string) (map[string]bool, error) {
	firstPassMu.Lock()
	defer firstPassMu.Unlock()
	if ran, ok := firstPassSets[path]; ok {
		return ran, nil
	}
	ran, err := readRecord(path)
	if err != nil {
		return nil, err
	}
	firstPassSets[path] = ran
	return ran, nil
}

func readRecord(path string) (map[string]bool, error) {
	ran := map[string]bool{}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return ran, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read the first pass's record: %w", err)
	}
	defer func() { _ = f.Close() }()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := sc.Text(); line != "" {
			ran[line] = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read the first pass's record %s: %w", path, err)
	}
	return ran, nil
}
