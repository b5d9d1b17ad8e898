package bench

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
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
	Latency   *LatencyResult
	RateLimit []RateLimitResult
	Elapsed   time.Duration
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
		fmt.Fprintln(w, "Plan/refresh of an unchanged workspace (N groups + N shard counts = 2N resources; median of runs):")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| N | resources | plan (provider) | plan (do-nothing) | ratio | requests/resource/refresh | GET group reads | peak RSS provider | peak RSS do-nothing |")
		fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
		for _, s := range r.Sizes {
			fmt.Fprintf(w, "| %d | %d | %s | %s | %.2f× | %.2f | %d | %s | %s |\n",
				s.N, s.Resources(), secs(s.Plan.Median), secs(s.NoopPlan.Median), ratio(s.Plan.Median, s.NoopPlan.Median),
				float64(s.PlanRequests)/float64(s.Resources()), s.PlanGroupReads, mib(s.PlanRSSKiB), mib(s.NoopPlanRSSKiB))
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Apply at the default parallelism (10):")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| N | create 2N resources | requests (group listings) | create (do-nothing) | update N shard counts 4→2 | requests (group listings) | 429s | last DEPRECATED → apply returned |")
		fmt.Fprintln(w, "|---:|---:|---:|---:|---:|---:|---:|---:|")
		for _, s := range r.Sizes {
			fmt.Fprintf(w, "| %d | %s | %d (%d) | %s | %s | %d (%d) | %d | %s |\n",
				s.N, secs(s.Create.Wall), s.CreateRequests, s.CreateListings, secs(s.NoopCreate.Wall), secs(s.Update.Wall),
				s.UpdateRequests, s.UpdateListings, s.Update429s, secs(s.UpdateLastLatency))
		}
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
	fmt.Fprintf(w, "Benchmark run took %s; 1-minute load average %s at the start, %s at the end.\n",
		r.Elapsed.Round(time.Second), m.LoadAverage, r.LoadAtEnd)
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
