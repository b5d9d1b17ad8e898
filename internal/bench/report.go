package bench

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strings"
	"time"
)

// Machine describes where the figures were taken.
type Machine struct {
	Date      time.Time
	CPUs      int
	CPUModel  string
	MemoryGiB float64
	Kernel    string
	Go        string
	Terraform string
	// LoadAverage is /proc/loadavg's 1-minute figure when the run started:
	// other work on the machine skews every figure.
	LoadAverage string
}

// DescribeMachine reads /proc for the CPU model, memory and kernel.
func DescribeMachine(terraformVersion string) Machine {
	m := Machine{Date: time.Now().UTC(), CPUs: runtime.NumCPU(), Go: runtime.Version(), Terraform: terraformVersion,
		CPUModel: "unknown", Kernel: "unknown"}
	if v := procField("/proc/cpuinfo", "model name"); v != "" {
		m.CPUModel = v
	}
	if v := procField("/proc/meminfo", "MemTotal"); v != "" {
		var kb float64
		if _, err := fmt.Sscanf(v, "%f kB", &kb); err == nil {
			m.MemoryGiB = kb / (1 << 20)
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = "Linux " + strings.TrimSpace(string(b))
	}
	m.LoadAverage = LoadAverage()
	return m
}

// LoadAverage is the 1-minute load average, or "unknown".
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "unknown"
}

// procField returns the value of the first "key: value" line for key.
func procField(file, key string) string {
	f, err := os.Open(file)
	if err != nil {
		return ""
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// Report is everything one `make bench` run measured.
type Report struct {
	Machine   Machine
	Sizes     []SizeResult
	Apply     *ApplyResult
	Latency   *LatencyResult
	LiveScale *LiveScaleResult
	RateLimit []RateLimitResult
	// Query is `terraform query` and the import through generated
	// configuration (query.go); empty under Terraform < 1.14 and OpenTofu.
	Query   []QueryResult
	Elapsed time.Duration
	// Notes are printed under the machine line (e.g. non-default settings).
	Notes []string
	// LoadAtEnd is the 1-minute load average when the run finished.
	LoadAtEnd string
}

// Write renders the report as Markdown tables, readable in a terminal too.
func (r Report) Write(w io.Writer) {
	m := r.Machine
	fmt.Fprintf(w, "Machine: %d CPUs (%s), %.1f GiB RAM, %s; %s, %s. Date: %s.\n\n",
		m.CPUs, m.CPUModel, m.MemoryGiB, m.Kernel, m.Go, m.Terraform, m.Date.Format("2006-01-02 15:04 UTC"))
	for _, n := range r.Notes {
		fmt.Fprintf(w, "Note: %s.\n\n", n)
	}

	if len(r.Sizes) > 0 {
		fmt.Fprintln(w, "Plan and refresh of an unchanged workspace (N groups + N shard counts = 2N resources; median of runs).")
		fmt.Fprintln(w, "Floors: the same-shape do-nothing provider (2N resources of the same schemas) and the one-attribute")
		fmt.Fprintln(w, "do-nothing provider (2N resources with one attribute each):")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| N | resources | plan | plan, same-shape floor | plan, one-attribute floor | ratio to one-attribute | ratio to same-shape | refresh-only | refresh-only, same-shape floor | no-op apply |")
		fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
		for _, s := range r.Sizes {
			fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %.2f× | %.2f× | %s | %s | %s |\n",
				sizeLabel(s), s.Resources(), secs(s.Plan.Median), secs(s.NoopPlan.Median), secs(s.OnePlan.Median),
				ratio(s.Plan.Median, s.OnePlan.Median), ratio(s.Plan.Median, s.NoopPlan.Median),
				secs(s.Refresh.Median), secs(s.NoopRefresh.Median), secs(s.NoopApply.Wall))
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Requests and memory of the same workspaces (requests of one refreshing plan; peak RSS over every provider")
		fmt.Fprintln(w, "process of the plans, refreshes and the no-op apply):")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| N | requests per refresh | GET group | GET /monitoring/groups | requests of the no-op apply | peak RSS provider | same-shape floor | one-attribute floor | seeded groups |")
		fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
		for _, s := range r.Sizes {
			fmt.Fprintf(w, "| %d | %d | %d | %d | %d | %s | %s | %s | %d |\n",
				s.N, s.PlanRequests, s.PlanGroupReads, s.PlanListings, s.NoopApplyRequests,
				mib(s.PlanRSSKiB), mib(s.NoopPlanRSSKiB), mib(s.OnePlanRSSKiB), s.Seeded)
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Processor time of one refreshing plan (the median round), terraform's own and the provider processes':")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| N | provider: terraform | provider: provider | same-shape floor: terraform | same-shape floor: provider | one-attribute floor: terraform | one-attribute floor: provider |")
		fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|")
		for _, s := range r.Sizes {
			fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s | %s |\n", s.N,
				secs(s.PlanCPU.Terraform), secs(s.PlanCPU.Provider), secs(s.NoopPlanCPU.Terraform),
				secs(s.NoopPlanCPU.Provider), secs(s.OnePlanCPU.Terraform), secs(s.OnePlanCPU.Provider))
		}
		fmt.Fprintln(w)
	}
	if a := r.Apply; a != nil {
		fmt.Fprintf(w, "Apply at the default parallelism (10), %d groups + %d shard counts:\n\n", a.N, a.N)
		fmt.Fprintln(w, "| apply | wall | same-shape floor | requests | by route | 429s | last DEPRECATED → apply returned |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---|---:|---:|")
		fmt.Fprintf(w, "| create | %s | %s | %d | %s | | |\n", secs(a.Create.Wall), secs(a.NoopCreate.Wall),
			totalRequests(a.CreateCounts), byRoute(a.CreateCounts))
		fmt.Fprintf(w, "| scale every group 4→2 | %s | | %d | %s | %d | %s |\n", secs(a.Update.Wall),
			totalRequests(a.UpdateCounts), byRoute(a.UpdateCounts), a.Update429s, secs(a.UpdateLastLatency))
		fmt.Fprintln(w)
	}
	if l := r.LiveScale; l != nil {
		fmt.Fprintf(w, "Apply scaling %d prefixes out (%d→%d shards), each group with a live consumer, at the default parallelism (10):\n\n", l.N, liveScaleFrom, liveScaleTo)
		fmt.Fprintln(w, "| wall | first scale → last DEPRECATED | requests in that window | by route | requests of the whole apply | last DEPRECATED → apply returned |")
		fmt.Fprintln(w, "|---:|---:|---:|---|---:|---:|")
		fmt.Fprintf(w, "| %s | %s | %d | %s | %d | %s |\n", secs(l.Apply.Wall), secs(l.Window), totalRequests(l.WindowCounts),
			byRoute(l.WindowCounts), totalRequests(l.ApplyCounts), secs(l.LastLatency))
		fmt.Fprintln(w)
	}
	if l := r.Latency; l != nil {
		fmt.Fprintf(w, "Scale completion latency (%d applies, one scale-in each, coordinator loop tick 1 s):\n\n", l.Runs)
		fmt.Fprintln(w, "| measure | min | median | max |")
		fmt.Fprintln(w, "|---|---:|---:|---:|")
		for _, row := range []struct {
			name string
			s    Stats
		}{
			{"migration DEPRECATED → terraform apply returned", l.Latency},
			{"coordinator: scale accepted → DEPRECATED", l.Migration},
			{"whole terraform apply", l.Apply},
		} {
			fmt.Fprintf(w, "| %s | %s | %s | %s |\n", row.name, secs(row.s.Min), secs(row.s.Median), secs(row.s.Max))
		}
		fmt.Fprintln(w)
	}
	if len(r.RateLimit) > 0 {
		fmt.Fprintln(w, "Rate limit (shortened windows):")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| workload | K mutations | limit L / window | concurrency | total | theoretical minimum | 429s | failures |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|")
		for _, rl := range r.RateLimit {
			fmt.Fprintf(w, "| %s | %d | %d / %s | %d | %s | %s | %d | %d |\n",
				rl.Name, rl.Mutations, rl.Limit, rl.Window, rl.Workers, secs(rl.Total), secs(rl.Minimum), rl.Refused, rl.Failures)
			if rl.FirstError != "" {
				fmt.Fprintf(w, "\n  first failure: %s\n\n", rl.FirstError)
			}
		}
		fmt.Fprintln(w)
	}
	r.writeQuery(w)
	fmt.Fprintf(w, "Benchmark run took %s; 1-minute load average %s at the start, %s at the end.\n",
		r.Elapsed.Round(time.Second), m.LoadAverage, r.LoadAtEnd)
}

// byRoute renders request counts as "GET /coord/v1/…: n" sorted by count.
func byRoute(counts map[string]int) string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if counts[keys[i]] != counts[keys[j]] {
			return counts[keys[i]] > counts[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", strings.Replace(k, "/coord/v1", "", 1), counts[k])
	}
	return strings.Join(parts, "; ")
}

// sizeLabel marks sizes measured with the literal shape (LiteralShapeFrom).
func sizeLabel(s SizeResult) string {
	if s.LiteralShape {
		return fmt.Sprintf("%d (literal)", s.N)
	}
	return fmt.Sprint(s.N)
}

func secs(d time.Duration) string {
	if d < 10*time.Second {
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

func mib(kib int64) string { return fmt.Sprintf("%.0f MiB", float64(kib)/1024) }

func ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
