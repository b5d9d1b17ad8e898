package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	tfjson "github.com/hashicorp/terraform-json"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// QueryMinimumTerraform is the first Terraform (major, minor) with
// `terraform query` and list resources; OpenTofu has neither.
var QueryMinimumTerraform = [2]int{1, 14}

// QueryResult is `terraform query` of a coordinator holding N groups (each
// on its own stream prefix, so N group results and N shard count results)
// and, when Imported, the import of all of them through the configuration
// `terraform query -generate-config-out` writes, beside a refresh of the
// same 2N resources.
type QueryResult struct {
	N int
	// Query lists both list blocks (no configuration generated).
	Query       Run
	QueryCounts map[string]int
	Results     int

	Imported bool
	// Generate is the query with -generate-config-out; ImportPlan the plan
	// of the generated configuration (2N imports), ImportApply its apply,
	// Refresh a `terraform plan -refresh-only` of the imported workspace.
	Generate, ImportPlan, ImportApply, Refresh Run
	ImportPlanCounts, RefreshCounts            map[string]int
	// ImportMutations are the audited mutations of the import (want 0).
	ImportMutations int
}

// queryFile lists every group and every prefix's shard count, limit above N.
func queryFile(n int) string {
	return fmt.Sprintf(`list "redisstreamcoordinator_group" "all" {
  provider = redisstreamcoordinator
  limit    = %[1]d
}

list "redisstreamcoordinator_group_shard_count" "all" {
  provider = redisstreamcoordinator
  limit    = %[1]d
}
`, n+10)
}

// SupportsQuery reports whether the terraform binary has `terraform query`
// (Terraform 1.14 or later, not OpenTofu), and its version.
func SupportsQuery(ctx context.Context, tf *Terraform) (bool, string, error) {
	out, err := tf.CLI(tf.tmp).Output(ctx, "version", "-json")
	if err != nil {
		return false, "", err
	}
	var v tfjson.VersionOutput
	if err := json.Unmarshal(out, &v); err != nil {
		return false, "", fmt.Errorf("terraform version -json: %w", err)
	}
	var major, minor int
	if _, err := fmt.Sscanf(v.Version, "%d.%d", &major, &minor); err != nil {
		return false, v.Version, fmt.Errorf("terraform version %q: %w", v.Version, err)
	}
	tofu, err := acctest.IsOpenTofu(tf.Path)
	if err != nil {
		return false, v.Version, err
	}
	atLeast := major > QueryMinimumTerraform[0] || major == QueryMinimumTerraform[0] && minor >= QueryMinimumTerraform[1]
	return !tofu && atLeast, v.Version, nil
}

// MeasureQuery creates n groups on a fresh coordinator through its API,
// queries them with `terraform query`, and with importAll imports them
// through generated configuration and refreshes them.
func MeasureQuery(ctx context.Context, tf *Terraform, n int, importAll bool) (QueryResult, error) {
	res := QueryResult{N: n, Imported: importAll}
	c, err := startCoordinator(CoordinatorOptions{})
	if err != nil {
		return res, err
	}
	defer c.Close()
	api, err := setupClient(c)
	if err != nil {
		return res, err
	}
	if err := createGroups(ctx, api, 0, n); err != nil {
		return res, err
	}
	ws, err := tf.NewWorkspace(fmt.Sprintf("query-%d", n))
	if err != nil {
		return res, err
	}
	if err := ws.WriteConfig(providerBlock(c.URL())); err != nil {
		return res, err
	}
	if err := os.WriteFile(filepath.Join(ws.Dir, "coordinator.tfquery.hcl"), []byte(queryFile(n)), 0o600); err != nil {
		return res, err
	}

	c.ResetRequestCounts()
	if res.Query, err = ws.Terraform(ctx, "query", "-no-color"); err != nil {
		return res, err
	}
	res.QueryCounts = c.RequestCounts()
	for _, line := range strings.Split(res.Query.Output, "\n") {
		if strings.HasPrefix(line, "list.redisstreamcoordinator_") {
			res.Results++
		}
	}
	if res.Results != 2*n {
		return res, fmt.Errorf("terraform query of %d groups listed %d results, want %d:\n%s", n, res.Results, 2*n, tail(res.Query.Output, 2000))
	}
	if !importAll {
		return res, nil
	}

	if res.Generate, err = ws.Terraform(ctx, "query", "-no-color", "-generate-config-out=generated.tf"); err != nil {
		return res, err
	}
	c.ResetRequestCounts()
	audited := len(c.AuditEvents())
	if res.ImportPlan, err = ws.Terraform(ctx, "plan", "-input=false", "-no-color", "-out=import.tfplan"); err != nil {
		return res, err
	}
	res.ImportPlanCounts = c.RequestCounts()
	if want := fmt.Sprintf("Plan: %d to import, 0 to add, 0 to change, 0 to destroy.", 2*n); !strings.Contains(res.ImportPlan.Output, want) {
		return res, fmt.Errorf("the plan of the generated configuration is not %q:\n%s", want, tail(res.ImportPlan.Output, 4000))
	}
	if res.ImportApply, err = ws.Terraform(ctx, "apply", "-input=false", "-no-color", "import.tfplan"); err != nil {
		return res, err
	}
	if res.ImportMutations = len(c.AuditEvents()) - audited; res.ImportMutations != 0 {
		return res, fmt.Errorf("importing %d groups sent %d audited mutations, want none", n, res.ImportMutations)
	}
	c.ResetRequestCounts()
	if res.Refresh, err = ws.RefreshOnly(ctx); err != nil {
		return res, err
	}
	res.RefreshCounts = c.RequestCounts()
	return res, nil
}

// listings is how many GET /monitoring/groups counts holds.
func listings(counts map[string]int) int {
	return counts["GET "+coordinator.RouteMonitoringGroups]
}

// writeQuery renders the query measurements, if any.
func (r Report) writeQuery(w io.Writer) {
	if len(r.Query) == 0 {
		return
	}
	fmt.Fprintln(w, "`terraform query` of a coordinator with N groups, each on its own stream prefix: both list blocks")
	fmt.Fprintln(w, "(N groups and N shard counts = 2N results). Requests are the coordinator's for the whole query:")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| N | results | query | requests | GET /monitoring/groups | peak RSS provider |")
	fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|")
	for _, q := range r.Query {
		fmt.Fprintf(w, "| %d | %d | %s | %d | %d | %s |\n", q.N, q.Results, secs(q.Query.Wall), totalRequests(q.QueryCounts),
			listings(q.QueryCounts), mib(q.Query.PeakRSSKiB))
	}
	fmt.Fprintln(w)
	for _, q := range r.Query {
		if !q.Imported {
			continue
		}
		fmt.Fprintf(w, "Import of %d groups + %d shard counts through `terraform query -generate-config-out`, beside a refresh of the\n", q.N, q.N)
		fmt.Fprintln(w, "same 2N resources once imported (`terraform plan -refresh-only`):")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| step | wall | requests | by route | audited mutations | peak RSS provider |")
		fmt.Fprintln(w, "|---|---:|---:|---|---:|---:|")
		fmt.Fprintf(w, "| query -generate-config-out | %s | | | | %s |\n", secs(q.Generate.Wall), mib(q.Generate.PeakRSSKiB))
		fmt.Fprintf(w, "| plan (%d imports) | %s | %d | %s | | %s |\n", 2*q.N, secs(q.ImportPlan.Wall), totalRequests(q.ImportPlanCounts),
			byRoute(q.ImportPlanCounts), mib(q.ImportPlan.PeakRSSKiB))
		fmt.Fprintf(w, "| apply of that plan | %s | | | %d | %s |\n", secs(q.ImportApply.Wall), q.ImportMutations, mib(q.ImportApply.PeakRSSKiB))
		fmt.Fprintf(w, "| refresh-only, same size | %s | %d | %s | | %s |\n", secs(q.Refresh.Wall), totalRequests(q.RefreshCounts),
			byRoute(q.RefreshCounts), mib(q.Refresh.PeakRSSKiB))
		fmt.Fprintln(w)
	}
}
