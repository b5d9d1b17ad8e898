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
//     not name: its own half, and whatever the first pass skipped (list
//     resources, actions and `query` need Terraform >= 1.14, which OpenTofu
//     does not offer) or never reached.
//
// A test that skips in a subtest under a parent that called New is recorded
// as run: put the version checks of such subtests where New is called. A
// missing record makes the second pass run everything. With EnvSplit unset
// (a bare go test, make testacc-tofu, make testacc-latest) nothing is split.
const (
	// EnvSplit is "first" or "second": which pass of the split this is.
	EnvSplit = "TF_ACC_NEWER_CLI_SPLIT"
	// EnvSplitRecord names the file the first pass appends to and the
	// second pass reads.
	EnvSplitRecord = "TF_ACC_NEWER_CLI_RECORD"
)

// SplitNewerCLIs skips t when the newer-CLI split gives it to the other pass,
// and, in the first pass, records it when it runs to the end. New calls it;
// a test that runs terraform without New calls it after its own skips.
func SplitNewerCLIs(t testing.TB) {
	t.Helper()
	splitNewerCLIs(t, splitKey(t.Name()))
}

// splitNewerCLIs is SplitNewerCLIs with the test's key given.
func splitNewerCLIs(t testing.TB, key string) {
	t.Helper()
	mode := os.Getenv(EnvSplit)
	if mode == "" {
		return
	}
	record := os.Getenv(EnvSplitRecord)
	if record == "" {
		t.Fatalf("%s=%s needs %s, the file that records what the first pass ran", EnvSplit, mode, EnvSplitRecord)
	}
	switch mode {
	case "first":
		if !inFirstHalf(key) {
			t.Skipf("runs in the second pass of the newer-CLI split (%s)", EnvSplit)
		}
		t.Cleanup(func() {
			if t.Skipped() || t.Failed() {
				return
			}
			if err := appendLine(record, key); err != nil {
				// Unrecorded, the second pass runs the test again: slower, not wrong.
				t.Logf("newer-CLI split: cannot record %s in %s: %v", key, record, err)
			}
		})
	case "second":
		ran, err := firstPassRan(record)
		if err != nil {
			t.Fatalf("newer-CLI split: %v", err)
		}
		if ran[key] {
			t.Skipf("ran in the first pass of the newer-CLI split (%s)", EnvSplit)
		}
	default:
		t.Fatalf("%s=%q: want \"first\", \"second\" or unset", EnvSplit, mode)
	}
}

// splitKey names a test across the packages a pass runs: the test binary's
// name (provider.test) and the test's full name, subtests included.
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
