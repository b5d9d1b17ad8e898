// Package demo is `make demo`: it builds the provider into a filesystem
// mirror, starts the in-repo coordinator on a free loopback port and applies
// examples/demo against it (the groups, with their initial shard counts);
// once the consumer runs, it plans a shard count change into a saved plan,
// prints the resharding preview read from that plan file, applies the saved
// plan and requires a following plan to be empty. It then prints the
// coordinator's audit trail of the run and stops everything it started. It
// needs only Go and terraform, and no network.
package demo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// Options configure a demo run.
type Options struct {
	// ModuleRoot is the repository root: the provider is built there.
	ModuleRoot string
	// Config is the configuration to apply; default
	// <ModuleRoot>/examples/demo/main.tf.
	Config string
	// KeepWorkDir leaves the temporary directory in place (it is printed).
	KeepWorkDir bool
	// NoColor passes -no-color to terraform.
	NoColor bool
	Out     io.Writer
}

// The demo's principals: Terraform's dedicated WRITE principal and the
// consumer's MEMBER principal, with passwords made up per run.
const (
	writerName   = "terraform-demo"
	consumerName = "order-service-consumer"
)

// The group the demo's fake consumer joins: the one examples/demo scales.
const (
	consumerPrefix = "orders"
	consumerGroup  = "order-service"
)

// Run runs the demo. It returns an error when any step fails, including a
// second plan that is not empty.
func Run(ctx context.Context, o Options) (err error) {
	if o.Config == "" {
		o.Config = filepath.Join(o.ModuleRoot, "examples", "demo", "main.tf")
	}
	started := time.Now()
	p := printer{w: o.Out}

	p.section("Terraform")
	tfBin, err := acctest.FindTerraform()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "redisstreamcoordinator-demo-")
	if err != nil {
		return err
	}
	if o.KeepWorkDir {
		defer p.linef("kept working directory %s", tmp)
	} else {
		defer os.RemoveAll(tmp)
	}
	tf := &Terraform{Bin: tfBin, Dir: filepath.Join(tmp, "work"), CLIConfig: filepath.Join(tmp, "terraform.rc"), Stdout: o.Out, Stderr: o.Out}
	if err := os.MkdirAll(tf.Dir, 0o700); err != nil {
		return err
	}
	version, err := tf.Output(ctx, "version")
	if err != nil {
		return err
	}
	p.linef("%s at %s", firstLine(version), tfBin)

	p.section("Building the provider")
	binDir := filepath.Join(tmp, "bin")
	bin, err := BuildProvider(ctx, o.ModuleRoot, binDir, demoVersion)
	if err != nil {
		return err
	}
	mirror := filepath.Join(tmp, "mirror")
	if err := InstallMirror(mirror, bin, demoVersion); err != nil {
		return err
	}
	p.linef("built %s, installed as version %s in the filesystem mirror %s", bin, demoVersion, mirror)

	p.section("Starting the in-repo coordinator")
	run, err := startCoordinator()
	if err != nil {
		return err
	}
	defer run.stop(p)
	p.linef("coordinator listening on %s (in-memory store, users %s [WRITE] and %s [MEMBER])", run.coord.URL(), writerName, consumerName)
	consumer, err := acctest.NewConsumer(run.coord.URL(), run.member, consumerPrefix, consumerGroup)
	if err != nil {
		return err
	}
	run.consumer = consumer
	p.linef("a consumer of %s/%s heartbeats as %s; it joins as soon as terraform creates the group", consumerPrefix, consumerGroup, consumer.MemberID)

	p.section("Working directory")
	if err := prepareWorkDir(tf, o.Config, mirror); err != nil {
		return err
	}
	runID := "demo-" + time.Now().UTC().Format("20060102T150405")
	tf.Env = []string{
		"REDIS_STREAM_COORDINATOR_ENDPOINT=" + run.coord.URL(),
		"REDIS_STREAM_COORDINATOR_USERNAME=" + run.writer.Username,
		"REDIS_STREAM_COORDINATOR_PASSWORD=" + run.writer.Password,
		"REDIS_STREAM_COORDINATOR_RUN_ID=" + runID,
	}
	p.linef("%s: %s, and a CLI configuration that installs %s from the mirror", tf.Dir, filepath.Base(o.Config), acctest.ProviderSource)
	p.linef("REDIS_STREAM_COORDINATOR_ENDPOINT, _USERNAME, _PASSWORD and _RUN_ID=%s configure the provider", runID)

	color := []string{}
	if o.NoColor {
		color = []string{"-no-color"}
	}
	if err := os.WriteFile(filepath.Join(tf.Dir, scaleVarFile), []byte(scaleVars), 0o600); err != nil {
		return err
	}
	step := func(title string, args ...string) (int, error) {
		p.section(title)
		code, err := tf.Run(ctx, append(args, color...)...)
		if err != nil {
			return code, fmt.Errorf("%s: %w", title, err)
		}
		return code, nil
	}
	mustSucceed := func(title string, args ...string) error {
		code, err := step(title, args...)
		if err == nil && code != 0 {
			err = fmt.Errorf("%s exited with %d", title, code)
		}
		return err
	}

	if err := mustSucceed("terraform init (the provider from the filesystem mirror, as after make install)",
		"init", "-input=false"); err != nil {
		return err
	}

	// Day one: the groups, each with its initial shard count. A new group
	// has no consumer, so the configuration does not scale it yet.
	if err := mustSucceed("terraform apply -auto-approve (the groups; the shard count stays at its initial value)",
		"apply", "-input=false", "-auto-approve"); err != nil {
		return err
	}

	p.section(fmt.Sprintf("Waiting for the consumer of %s/%s to join", consumerPrefix, consumerGroup))
	api, err := run.terraformClient()
	if err != nil {
		return err
	}
	switch _, err := api.GetGroup(ctx, consumerPrefix, consumerGroup); {
	case client.IsNotFound(err):
		p.linef("the configuration created no group %s/%s: nothing to wait for", consumerPrefix, consumerGroup)
	case err != nil:
		return err
	default:
		if err := waitJoined(ctx, consumer); err != nil {
			return err
		}
		p.linef("%s is a live member: a scale-out of %s can complete", consumer.MemberID, consumerPrefix)
	}

	// The change, reviewed from the saved plan before it is applied.
	if err := mustSucceed("terraform plan -out=tfplan -var-file="+scaleVarFile+" (the change under review)",
		"plan", "-input=false", "-out="+planFile, "-var-file="+scaleVarFile); err != nil {
		return err
	}
	p.section("Resharding preview read from the saved plan (terraform show -json " + planFile + ")")
	planJSON, err := tf.Output(ctx, "show", "-json", planFile)
	if err != nil {
		return err
	}
	if _, err := printReshardingPreview(o.Out, planJSON); err != nil {
		return fmt.Errorf("resharding preview: %w", err)
	}
	if err := mustSucceed("terraform apply "+planFile+" (exactly the reviewed plan)", "apply", "-input=false", planFile); err != nil {
		return err
	}
	const last = "terraform plan -detailed-exitcode (the plan after the apply must be empty)"
	code, err := step(last, "plan", "-input=false", "-detailed-exitcode", "-var-file="+scaleVarFile)
	switch {
	case err != nil:
		return err
	case code == 2: // -detailed-exitcode: the plan has changes
		return errors.New("the plan after the apply is not empty: the apply did not converge")
	case code != 0:
		return fmt.Errorf("%s exited with %d", last, code)
	}
	p.linef("no changes: the configuration and the coordinator agree")

	p.section("Coordinator state")
	if err := printGroups(ctx, o.Out, api); err != nil {
		return err
	}

	p.section("Audit trail of the run (the coordinator's audit events)")
	printAuditTrail(o.Out, run.coord.AuditEvents())

	p.section("Done")
	p.linef("demo finished in %s: apply, saved plan with its resharding preview, apply of the saved plan, empty plan, %d audited mutations", time.Since(started).Round(100*time.Millisecond), len(run.coord.AuditEvents()))
	return nil
}

// prepareWorkDir copies the configuration into the working directory and
// writes the CLI configuration that installs the provider from the mirror.
func prepareWorkDir(tf *Terraform, config, mirror string) error {
	src, err := os.ReadFile(config)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(tf.Dir, "main.tf"), src, 0o600); err != nil {
		return err
	}
	return WriteMirrorCLIConfig(tf.CLIConfig, mirror)
}

// demoVersion is the version the demo builds and installs the provider as:
// a plain semver, which any constraint of the configuration's accepts
// unless it pins a release.
const demoVersion = "0.0.1"

// demoRun is what the demo started and must stop.
type demoRun struct {
	coord          *coordinator.Coordinator
	writer, member acctest.Credentials
	consumer       *acctest.Consumer
}

func startCoordinator() (*demoRun, error) {
	r := &demoRun{
		writer: acctest.Credentials{Username: writerName, Password: randomSecret()},
		member: acctest.Credentials{Username: consumerName, Password: randomSecret()},
	}
	r.coord = coordinator.New(coordinator.Options{
		Users: []coordinator.User{
			{Username: r.writer.Username, Password: r.writer.Password, Roles: []coordinator.Role{"WRITE"}},
			{Username: r.member.Username, Password: r.member.Password, Roles: []coordinator.Role{"MEMBER"}},
		},
		TokenSecret:           randomSecret(),
		AuthenticateMemberAPI: true,
		CoordinatorID:         "demo-coordinator",
		// Fast heartbeats and ticks, so a migration completes in about a
		// second instead of the real defaults' 5 to 20.
		TickInterval:      100 * time.Millisecond,
		HeartbeatInterval: 200 * time.Millisecond,
		MemberLeaseTTL:    5 * time.Second,
		RebalanceTimeout:  10 * time.Second,
	})
	if err := r.coord.Start("127.0.0.1:0"); err != nil {
		return nil, err
	}
	return r, nil
}

// The shard count change the demo plans after the first apply, and the
// plan file it is saved to. A variable file, not -var: a configuration
// without the variable (Options.Config) then only gets a warning.
const (
	scaleVarFile = "scale.tfvars"
	scaleVars    = "orders_shard_count = 8\n"
	planFile     = "tfplan"
)

// waitJoined waits until the coordinator has accepted c as a member. In
// production consumers run before anyone scales; here the group only exists
// after the first apply, so the change is planned once the consumer is live
// (a scale-out planned with no live consumer could not complete by itself).
func waitJoined(ctx context.Context, c *acctest.Consumer) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !c.Joined() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("the consumer %s did not join: %w", c.MemberID, ctx.Err())
		case <-tick.C:
		}
	}
	return nil
}

func (r *demoRun) stop(p printer) {
	if r.consumer != nil {
		r.consumer.Stop()
	}
	if err := r.coord.Close(); err != nil {
		p.linef("stopping the coordinator: %v", err)
	}
}

func randomSecret() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

type printer struct{ w io.Writer }

func (p printer) section(title string) { fmt.Fprintf(p.w, "\n==> %s\n", title) }

func (p printer) linef(format string, args ...any) { fmt.Fprintf(p.w, "    "+format+"\n", args...) }

func firstLine(b []byte) string {
	for i, c := range b {
		if c == '\n' {
			return string(b[:i])
		}
	}
	return string(b)
}
