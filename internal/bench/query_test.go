package bench

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestAccBenchQuerySmoke runs the query measurement at a tiny size, with the
// import through generated configuration, under a Terraform with `terraform
// query` (1.14+): one listing per query, an import without mutations, and
// RSS reported. It says nothing about speed.
func TestAccBenchQuerySmoke(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("builds binaries and runs terraform; set TF_ACC=1")
	}
	t.Parallel()
	ctx, tf := smokeTerraform(t)
	ok, v, err := SupportsQuery(ctx, tf)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		t.Skipf("%s %s has no terraform query (Terraform 1.14 or later; OpenTofu has none)", tf.Path, v)
	}
	q, err := MeasureQuery(ctx, tf, 3, true)
	if err != nil {
		t.Fatal(err)
	}
	if total := totalRequests(q.QueryCounts); total != 1 || listings(q.QueryCounts) != 1 {
		t.Errorf("a query of 3 groups sent %v, want one GET /monitoring/groups", q.QueryCounts)
	}
	if q.Results != 6 || q.ImportMutations != 0 || q.Query.PeakRSSKiB <= 0 {
		t.Errorf("results %d (want 6), import mutations %d (want 0), query RSS %d KiB", q.Results, q.ImportMutations, q.Query.PeakRSSKiB)
	}
	var out bytes.Buffer
	Report{Query: []QueryResult{q}}.Write(&out)
	for _, want := range []string{"| 3 | 6 |", "| plan (6 imports) |", "| refresh-only, same size |"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}
