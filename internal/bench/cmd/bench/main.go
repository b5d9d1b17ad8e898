// Command bench is `make bench`: it builds the provider, a do-nothing
// provider and an RSS-measuring wrapper, runs terraform against the in-repo
// coordinator and prints the figures as Markdown tables.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/bench"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		sizes      = flag.String("sizes", "200,1000,5000", "comma-separated workspace sizes N (groups, each with a shard count)")
		plans      = flag.Int("plans", 3, "rounds of plans and refreshes per size below -large (the median is reported)")
		large      = flag.Int("large", 1000, "sizes from this N up get -large-plans rounds")
		largePlans = flag.Int("large-plans", 1, "rounds of plans and refreshes for sizes from -large up")
		applyN     = flag.Int("apply", 50, "groups (each with a shard count) the apply scenario creates and scales (0 skips)")
		latency    = flag.Int("latency-runs", 5, "applies for the scale completion latency (0 skips)")
		liveScale  = flag.Int("live-scale", 50, "prefixes, each with a live consumer, the shared-wait scenario scales out in one apply (0 skips)")
		rateLimit  = flag.Bool("rate-limit", true, "run the rate-limit workloads")
		keep       = flag.Bool("keep", false, "keep the working directories")
		sdkLogsOff = flag.Bool("logs-off", false, "set TF_LOG_SDK, TF_LOG_SDK_FRAMEWORK, TF_LOG_SDK_PROTO and TF_LOG_PROVIDER to OFF for every provider "+
			"(without them, plugin SDKs encode every TRACE line, which Terraform then drops)")
		providerEnv = flag.String("provider-env", "", "one VAR=value added to every provider's environment only, e.g. GOMEMLIMIT=64MiB")
		literalFrom = flag.Int("literal-from", bench.LiteralShapeFrom, "sizes from this N up name each shard count's group literally instead of through g[count.index] (see bench.LiteralShapeFrom)")
		terraformF  = flag.String("terraform", "", "terraform binary (default: $TF_ACC_TERRAFORM_PATH or terraform on PATH)")
		querySizes  = flag.String("query-sizes", "200,1000,5000", "coordinator sizes N for `terraform query` (Terraform 1.14+ only; empty skips)")
		queryImport = flag.Int("query-import", 1000, "of -query-sizes, the N also imported through generated configuration (0 skips)")
	)
	flag.Parse()
	bench.LiteralShapeFrom = *literalFrom
	ns, err := parseSizes(*sizes)
	if err != nil {
		return err
	}
	qs, err := parseSizes(*querySizes)
	if err != nil {
		return fmt.Errorf("-query-sizes: %w", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	started := time.Now()

	tfPath, err := findTerraform(*terraformF)
	if err != nil {
		return err
	}
	root, err := bench.RepoRoot(ctx)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "provider-bench-")
	if err != nil {
		return err
	}
	if *keep {
		fmt.Fprintln(os.Stderr, "working directories kept in", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	progress("building the provider, the do-nothing provider and the RSS wrapper")
	bins, err := bench.Build(ctx, root, tmp)
	if err != nil {
		return err
	}
	tf, err := bench.NewTerraform(tfPath, tmp, bins)
	if err != nil {
		return err
	}
	if *sdkLogsOff {
		tf.Env = []string{"TF_LOG_SDK=OFF", "TF_LOG_SDK_FRAMEWORK=OFF", "TF_LOG_SDK_PROTO=OFF", "TF_LOG_PROVIDER=OFF"}
		progress("plugin SDK and provider logs are OFF for this run")
	}
	if *providerEnv != "" {
		tf.Env = append(tf.Env, "BENCH_PROVIDER_ENV="+*providerEnv)
	}
	tfVersion := "unknown"
	if out, err := tf.CLI(tmp).Output(ctx, "version"); err == nil {
		tfVersion, _, _ = strings.Cut(string(out), "\n")
	}
	report := bench.Report{Machine: bench.DescribeMachine(tfVersion)}
	if *sdkLogsOff {
		report.Notes = append(report.Notes, "plugin SDK and provider logs OFF for every provider (TF_LOG_SDK, TF_LOG_SDK_FRAMEWORK, TF_LOG_SDK_PROTO, TF_LOG_PROVIDER)")
	}

	if *providerEnv != "" {
		report.Notes = append(report.Notes, "every provider ran with "+*providerEnv)
	}
	for _, n := range ns {
		rounds := *plans
		if n >= *large {
			rounds = *largePlans
		}
		progress(fmt.Sprintf("N=%d: seed, %d rounds of plans and refreshes, a no-op apply", n, rounds))
		res, err := bench.MeasureSize(ctx, tf, n, rounds)
		if err != nil {
			return fmt.Errorf("size %d: %w", n, err)
		}
		report.Sizes = append(report.Sizes, res)
	}
	if *applyN > 0 {
		progress(fmt.Sprintf("apply: create %d groups + %d shard counts, then scale them 4→2", *applyN, *applyN))
		a, err := bench.MeasureApply(ctx, tf, *applyN)
		if err != nil {
			return fmt.Errorf("apply: %w", err)
		}
		report.Apply = &a
	}
	if *latency > 0 {
		progress(fmt.Sprintf("scale completion latency: %d applies", *latency))
		l, err := bench.MeasureScaleLatency(ctx, tf, *latency)
		if err != nil {
			return fmt.Errorf("latency: %w", err)
		}
		report.Latency = &l
	}
	if *liveScale > 0 {
		progress(fmt.Sprintf("live scale: %d prefixes with a live consumer each, scaled out in one apply", *liveScale))
		l, err := bench.MeasureLiveScale(ctx, tf, *liveScale)
		if err != nil {
			return fmt.Errorf("live scale: %w", err)
		}
		report.LiveScale = &l
	}
	if *rateLimit {
		// The server default is 60 per 60 s window; both workloads shorten
		// the window (and the client one scales the limit with it) so the
		// run stays under a minute.
		progress("rate limit: 30 mutations in one bucket, 6 per 6 s window, 10 workers")
		rl, err := bench.MeasureBucketRateLimit(ctx, 30, 6, 6*time.Second, 10)
		if err != nil {
			return fmt.Errorf("rate limit: %w", err)
		}
		report.RateLimit = append(report.RateLimit, rl)
		progress("rate limit: terraform apply -replace of 10 groups, 1 mutation per 5 s window")
		rl, err = bench.MeasureReplaceRateLimit(ctx, tf, 10, 5*time.Second)
		if err != nil {
			return fmt.Errorf("rate limit (replace): %w", err)
		}
		report.RateLimit = append(report.RateLimit, rl)
	}
	if len(qs) > 0 {
		if err := measureQueries(ctx, tf, qs, *queryImport, &report); err != nil {
			return err
		}
	}
	report.Elapsed, report.LoadAtEnd = time.Since(started), bench.LoadAverage()
	fmt.Println()
	report.Write(os.Stdout)
	return nil
}

func parseSizes(s string) ([]int, error) {
	var ns []int
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("-sizes: %q is not a positive number", f)
		}
		ns = append(ns, n)
	}
	return ns, nil
}

// findTerraform takes -terraform, else finds terraform as the acceptance
// tests do (acctest.FindTerraform); it is never downloaded.
func findTerraform(flagValue string) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	return acctest.FindTerraform()
}

func progress(msg string) {
	fmt.Fprintf(os.Stderr, "==> %s %s\n", time.Now().Format("15:04:05"), msg)
}

// measureQueries runs the `terraform query` sizes, when the terraform
// binary has the command (Terraform 1.14+); otherwise it notes why not.
func measureQueries(ctx context.Context, tf *bench.Terraform, sizes []int, importN int, report *bench.Report) error {
	ok, v, err := bench.SupportsQuery(ctx, tf)
	if err != nil {
		return fmt.Errorf("query: %w", err)
	}
	if !ok {
		note := fmt.Sprintf("terraform query not measured: %s %s has no list resources (Terraform 1.14 or later needed)", tf.Path, v)
		progress(note)
		report.Notes = append(report.Notes, note)
		return nil
	}
	for _, n := range sizes {
		progress(fmt.Sprintf("query: %d groups%s", n, map[bool]string{true: ", then their import through generated configuration", false: ""}[n == importN]))
		q, err := bench.MeasureQuery(ctx, tf, n, n == importN)
		if err != nil {
			return fmt.Errorf("query of %d groups: %w", n, err)
		}
		report.Query = append(report.Query, q)
	}
	return nil
}
