package bench

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
)

func TestStatsOf(t *testing.T) {
	s := statsOf([]time.Duration{3 * time.Second, time.Second, 2 * time.Second})
	if s.N != 3 || s.Min != time.Second || s.Median != 2*time.Second || s.Max != 3*time.Second {
		t.Errorf("odd count: %+v", s)
	}
	if s := statsOf([]time.Duration{4 * time.Second, time.Second, 2 * time.Second, 3 * time.Second}); s.Median != 2500*time.Millisecond {
		t.Errorf("even count: median %v, want 2.5s", s.Median)
	}
	if s := statsOf(nil); s != (Stats{}) {
		t.Errorf("empty: %+v", s)
	}
}

func TestReadRSSTakesThePeakOfAllInstancesAndSumsTheirCPU(t *testing.T) {
	dir := t.TempDir()
	for name, kb := range map[string]string{"p.1.kb": "1000 250000\n", "p.2.kb": "52000 1500000\n", "p.3.kb": "700 0\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(kb), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	peak, n, cpu, err := readRSS(dir)
	if err != nil || peak != 52000 || n != 3 || cpu != 1750*time.Millisecond {
		t.Fatalf("readRSS = %d, %d, %v, %v; want 52000, 3, 1.75s, nil", peak, n, cpu, err)
	}
	if err := os.WriteFile(filepath.Join(dir, "p.4.kb"), []byte("lots"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := readRSS(dir); err == nil {
		t.Error("a malformed report must be an error, not a silent zero")
	}
}

func TestReportRendersEveryMeasurement(t *testing.T) {
	r := Report{
		Machine: Machine{CPUs: 2, CPUModel: "Test CPU", MemoryGiB: 4, Kernel: "Linux 6", Go: "go1.26", Terraform: "Terraform v1.11.4",
			Date: time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)},
		Sizes: []SizeResult{{N: 50, Plan: Stats{Median: 800 * time.Millisecond}, NoopPlan: Stats{Median: 640 * time.Millisecond},
			OnePlan: Stats{Median: 400 * time.Millisecond}, Refresh: Stats{Median: 700 * time.Millisecond}, NoopRefresh: Stats{Median: 600 * time.Millisecond},
			NoopApply: Run{Wall: 900 * time.Millisecond}, NoopApplyRequests: 3,
			PlanRequests: 3, PlanGroupReads: 2, PlanListings: 1, PlanRSSKiB: 40 << 10, NoopPlanRSSKiB: 38 << 10, OnePlanRSSKiB: 30 << 10, Seeded: 48,
			PlanCPU: CPUSplit{Terraform: 900 * time.Millisecond, Provider: 300 * time.Millisecond}, NoopPlanCPU: CPUSplit{Terraform: time.Second, Provider: 400 * time.Millisecond},
			OnePlanCPU: CPUSplit{Terraform: 500 * time.Millisecond, Provider: 100 * time.Millisecond}}},
		Apply: &ApplyResult{N: 50, Create: Run{Wall: 1500 * time.Millisecond}, NoopCreate: Run{Wall: time.Second},
			CreateCounts: map[string]int{"POST /coord/v1/streams/{streamPrefix}/groups/{consumerGroup}": 50, "GET /coord/v1/monitoring/groups": 2},
			Update:       Run{Wall: 12 * time.Second}, UpdateCounts: map[string]int{"POST /coord/v1/streams/{streamPrefix}/scale": 50}, UpdateLastLatency: 300 * time.Millisecond},
		LiveScale: &LiveScaleResult{N: 50, Apply: Run{Wall: 30 * time.Second}, Window: 29 * time.Second, LastLatency: 190 * time.Millisecond,
			WindowCounts: map[string]int{"POST /coord/v1/streams/{streamPrefix}/scale": 50, "GET /coord/v1/monitoring/groups": 30},
			ApplyCounts:  map[string]int{"POST /coord/v1/streams/{streamPrefix}/scale": 50, "GET /coord/v1/monitoring/groups": 31}},
		Latency: &LatencyResult{Runs: 5, Latency: Stats{Min: 100 * time.Millisecond, Median: 200 * time.Millisecond, Max: 500 * time.Millisecond}},
		RateLimit: []RateLimitResult{{Name: "one bucket", Mutations: 30, Limit: 6, Window: 6 * time.Second, Workers: 10,
			Total: 24100 * time.Millisecond, Minimum: 24 * time.Second, Refused: 36}},
	}
	var out bytes.Buffer
	r.Write(&out)
	for _, want := range []string{
		"2 CPUs (Test CPU), 4.0 GiB RAM", "2026-01-02 03:04 UTC",
		"| 50 | 100 | 0.80 s | 0.64 s | 0.40 s | 2.00× | 1.25× | 0.70 s | 0.60 s | 0.90 s |",
		"| 50 | 3 | 2 | 1 | 3 | 40 MiB | 38 MiB | 30 MiB | 48 |",
		"| 50 | 0.90 s | 0.30 s | 1.00 s | 0.40 s | 0.50 s | 0.10 s |",
		"| create | 1.50 s | 1.00 s | 52 | POST /streams/{streamPrefix}/groups/{consumerGroup} 50; GET /monitoring/groups 2 | | |",
		"| scale every group 4→2 | 12.0 s | | 50 | POST /streams/{streamPrefix}/scale 50 | 0 | 0.30 s |",
		"| 30.0 s | 29.0 s | 80 | POST /streams/{streamPrefix}/scale 50; GET /monitoring/groups 30 | 81 | 0.19 s |",
		"| migration DEPRECATED → terraform apply returned | 0.10 s | 0.20 s | 0.50 s |",
		"| one bucket | 30 | 6 / 6s | 10 | 24.1 s | 24.0 s | 36 | 0 |",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

// smokeTerraform is the setup of the smoke tests: the terraform the tests
// run, with this test binary as the providers and the wrapper, and a context
// bounding the test.
func smokeTerraform(t *testing.T) (context.Context, *Terraform) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	tfPath, err := acctest.FindTerraform()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	tf, err := NewTerraform(tfPath, tmp, selfBinaries(t, tmp))
	if err != nil {
		t.Fatal(err)
	}
	// Under -race the binary would sleep 1 s at every exit (the race
	// runtime's default), and every terraform command waits for its plugins.
	tf.Env = []string{selfTestEnv + "=1", "GORACE=atexit_sleep_ms=0"}
	return ctx, tf
}

// TestAccBenchSmoke runs every measurement at a tiny size, so `make bench`
// cannot rot unnoticed. It checks what the figures must be (a refresh in at
// most three requests, no 429 without a limit to hit, RSS reported), never
// how fast.
// The providers and the wrapper are this test binary (see TestMain); Build
// itself runs with every `make bench`.
func TestAccBenchSmoke(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("builds binaries and runs terraform; set TF_ACC=1")
	}
	t.Parallel()
	ctx, tf := smokeTerraform(t)
	// Three groups: two applied as the template, one seeded (seed.go).
	size, err := MeasureSize(ctx, tf, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	// The provider reads its first groups one by one and lists once past
	// them (group_snapshot.go): never more than three requests.
	if size.Seeded != 1 || size.PlanRequests < 1 || size.PlanRequests > 3 || size.PlanRequests != size.PlanGroupReads+size.PlanListings {
		t.Errorf("a refresh of 6 resources made %d requests (%d group reads, %d listings; %d seeded), want at most 3 reads and listings",
			size.PlanRequests, size.PlanGroupReads, size.PlanListings, size.Seeded)
	}
	if size.PlanRSSKiB <= 0 || size.NoopPlanRSSKiB <= 0 || size.OnePlanRSSKiB <= 0 || size.PlanInstances < 1 {
		t.Errorf("no RSS reported by the wrapper: %+v", size)
	}
	apply, err := MeasureApply(ctx, tf, 2)
	if err != nil {
		t.Fatal(err)
	}
	if apply.Update429s != 0 {
		t.Errorf("%d mutations refused at the default rate limit", apply.Update429s)
	}
	if _, err := MeasureScaleLatency(ctx, tf, 1); err != nil {
		t.Fatal(err)
	}
	rl, err := MeasureBucketRateLimit(ctx, 3, 2, time.Second, 3)
	if err != nil || rl.Failures != 0 || rl.Refused == 0 {
		t.Errorf("3 mutations at 2 per window: %+v, %v; want some 429s and no failure", rl, err)
	}
	rl, err = MeasureReplaceRateLimit(ctx, tf, 2, 2*time.Second)
	if err != nil || rl.Failures != 0 || rl.Refused == 0 {
		t.Errorf("replace of 2 groups at 1 per window: %+v, %v; want a refused create and no failure", rl, err)
	}
}

func TestExpandStateCopiesTheFirstInstancePerIndex(t *testing.T) {
	dir := t.TempDir()
	state := `{"version":4,"serial":3,"resources":[{"type":"x_group","name":"g","instances":[
{"index_key":0,"attributes":{"id":"bench-0000/svc","stream_prefix":"bench-0000","shard_count":4}},
{"index_key":1,"attributes":{"id":"bench-0001/svc","stream_prefix":"bench-0001","shard_count":4}}]}]}`
	if err := os.WriteFile(filepath.Join(dir, "terraform.tfstate"), []byte(state), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := expandState(dir, 3); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "terraform.tfstate"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"serial":4`, `"id":"bench-0002/svc"`, `"stream_prefix":"bench-0002"`, `"index_key":2`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("expanded state lacks %s:\n%s", want, b)
		}
	}
	if strings.Contains(string(b), `"index_key":3`) {
		t.Errorf("expanded beyond 3 instances:\n%s", b)
	}
}

func TestLiteralShapeDropsThePerInstanceReferences(t *testing.T) {
	for _, noop := range []bool{false, true} {
		got := literalShape(groupsConfig("http://127.0.0.1:1", 3, 4, 4, noop))
		if strings.Contains(got, "g[count.index]") || !strings.Contains(got, `depends_on     = [`) {
			t.Errorf("noop=%v: literal shape still references instances or lacks depends_on:\n%s", noop, got)
		}
	}
}
