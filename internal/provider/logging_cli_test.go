package provider

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/demo"
)

// Logging is tested through the terraform CLI and the built provider binary
// (dev overrides), because what the user sees depends on both processes:
// main.go's quiet default, the SDK's levels, and Terraform's own filter of
// provider lines. ProtoV6ProviderFactories serve the provider in-process and
// would test neither main.go nor Terraform's filter.

const loggingGuide = "../../templates/guides/logging.md.tmpl"

// Markers of provider lines in Terraform's log (text format): every tflog
// line carries its logger's @module.
const (
	moduleCoordinator = "@module=redisstreamcoordinator.coordinator"
	moduleProvider    = "@module=redisstreamcoordinator " // the root logger; the space ends the field
	moduleSDK         = "@module=sdk."
)

// Terraform core's own lines about the graph walk, absent when only
// provider logs pass Terraform's filter.
var coreLine = regexp.MustCompile(`\[(DEBUG|INFO|TRACE)\] (backend/local|terraform|command|building|Building|ReferenceTransformer)`)

// loggingRun is one terraform plan of the logging test's configuration.
type loggingRun struct {
	stderr string
	file   string // the TF_LOG_PATH file's content, "" when absent
	exists bool   // whether the TF_LOG_PATH file exists
}

// loggingFixture runs terraform plan against a coordinator whose group
// listing fails once with a proxy's 503, so each plan logs a request, a retry and a
// success; secrets are recorded on the wire.
type loggingFixture struct {
	t       *testing.T
	tf      *demo.Terraform
	coord   *coordinator.Coordinator
	secrets func() []string
}

func newLoggingFixture(t *testing.T, providerDir string) *loggingFixture {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "injects a 503 to log a retry and records the credentials on the wire")
	rec := &authRecorder{next: c.Handler(), seen: map[string]bool{}}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	env := a.withEndpoint(srv.URL)
	basic := base64.StdEncoding.EncodeToString([]byte(env.Writer.Username + ":" + env.Writer.Password))

	tfBin, err := acctest.FindTerraform()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	tf := &demo.Terraform{Bin: tfBin, Dir: filepath.Join(root, "work"), CLIConfig: filepath.Join(root, "terraform.rc")}
	if err := demo.WriteCLIConfig(tf.CLIConfig, providerDir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(tf.Dir, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := env.ProviderConfig() + `
data "redisstreamcoordinator_groups" "all" {}
`
	if err := os.WriteFile(filepath.Join(tf.Dir, "main.tf"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return &loggingFixture{
		t: t, tf: tf, coord: c,
		secrets: func() []string {
			return append(rec.secrets("Basic"), env.Writer.Password, basic)
		},
	}
}

// plan runs terraform with env (and no inherited TF_LOG* settings) and
// args; the TF_LOG_PATH file, if env names one, is read back.
func (f *loggingFixture) plan(env []string, args ...string) loggingRun {
	t := f.t
	t.Helper()
	f.coord.InjectFault(coordinator.Fault{Method: "GET", Route: coordinator.RouteMonitoringGroups, Kind: coordinator.FaultRespond,
		Status: 503, Body: "upstream unavailable (injected by the logging test)"})
	var logPath string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "TF_LOG_PATH="); ok {
			logPath = filepath.Join(f.tf.Dir, v)
			_ = os.Remove(logPath)
		}
	}
	var stderr, stdout strings.Builder
	tf := *f.tf
	tf.WithoutLogging, tf.Env, tf.Stdout, tf.Stderr = true, env, &stdout, &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	code, err := tf.Run(ctx, append(args, "-no-color")...)
	if err != nil || code != 0 {
		t.Fatalf("%s terraform %s: exit %d, %v\nstdout:\n%s\nstderr:\n%s", strings.Join(env, " "), strings.Join(args, " "), code, err, stdout.String(), stderr.String())
	}
	run := loggingRun{stderr: stderr.String()}
	if logPath != "" {
		b, err := os.ReadFile(logPath)
		run.exists = err == nil
		run.file = string(b)
	}
	return run
}

// expectHTTPExchange: log shows the listing's 503 with its retry and the
// 200 that followed, at DEBUG, with request ids, and no secret.
func (f *loggingFixture) expectHTTPExchange(what, log string) {
	t := f.t
	t.Helper()
	var retry, success bool
	for _, line := range strings.Split(log, "\n") {
		if !strings.Contains(line, moduleCoordinator) || !strings.Contains(line, "request_id=terraform-") {
			continue
		}
		retry = retry || strings.Contains(line, "GET /coord/v1/monitoring/groups -> 503; retrying in ")
		success = success || strings.Contains(line, "GET /coord/v1/monitoring/groups -> 200")
	}
	if !retry || !success {
		t.Errorf("%s: the log lacks the client's retry line (%v) or its request line (%v); log:\n%s", what, retry, success, log)
	}
	f.expectNoSecret(what, log)
}

func (f *loggingFixture) expectNoSecret(what, log string) {
	t := f.t
	t.Helper()
	list := f.secrets()
	if len(list) < 3 {
		t.Fatalf("no credentials were recorded on the wire, so the check would prove nothing")
	}
	for _, s := range list {
		if strings.Contains(log, s) {
			t.Errorf("%s: the log contains a secret (%d characters, starting %q)", what, len(s), s[:4])
		}
	}
}

// guideCommand is one command of the logging guide: environment
// assignments and terraform's arguments.
type guideCommand struct {
	line string
	env  []string
	args []string
}

// guideCommands reads every terraform command in the guide's shell blocks.
func guideCommands(t *testing.T) []guideCommand {
	t.Helper()
	b, err := os.ReadFile(loggingGuide)
	if err != nil {
		t.Fatal(err)
	}
	var out []guideCommand
	inShell := false
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "```shell":
			inShell = true
			continue
		case line == "```":
			inShell = false
			continue
		case !inShell || line == "":
			continue
		}
		c := guideCommand{line: line}
		fields := strings.Fields(line)
		for len(fields) > 0 && strings.Contains(fields[0], "=") {
			c.env, fields = append(c.env, fields[0]), fields[1:]
		}
		if len(fields) == 0 || fields[0] != "terraform" {
			t.Fatalf("%s: shell line %q is not a terraform command; the test runs only those", loggingGuide, line)
		}
		c.args = fields[1:]
		out = append(out, c)
	}
	return out
}

// TestAccLogging runs every command of the logging guide with the built
// provider and checks what it claims; then the quiet default.
func TestAccLogging(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1")
	}
	t.Parallel()
	providerDir := builtProvider(t)

	// What each command on the page must show. A command on the page with no
	// entry here fails, and so does an entry the page no longer has.
	checks := map[string]func(f *loggingFixture, r loggingRun){
		"TF_LOG=DEBUG terraform plan": func(f *loggingFixture, r loggingRun) {
			f.expectHTTPExchange("TF_LOG=DEBUG", r.stderr)
			if !coreLine.MatchString(r.stderr) {
				t.Errorf("TF_LOG=DEBUG: no Terraform core line in the log:\n%s", r.stderr)
			}
		},
		"TF_LOG_PROVIDER=DEBUG terraform plan": func(f *loggingFixture, r loggingRun) {
			f.expectHTTPExchange("TF_LOG_PROVIDER=DEBUG", r.stderr)
			if m := coreLine.FindString(r.stderr); m != "" {
				t.Errorf("TF_LOG_PROVIDER=DEBUG: Terraform core line %q in the log", m)
			}
		},
		"TF_LOG_PROVIDER=DEBUG TF_LOG_SDK=OFF TF_LOG_PROVIDER_REDISSTREAMCOORDINATOR=OFF TF_LOG_PROVIDER_REDISSTREAMCOORDINATOR_COORDINATOR=DEBUG terraform plan": func(f *loggingFixture, r loggingRun) {
			f.expectHTTPExchange("the HTTP exchange only", r.stderr)
			for _, other := range []string{moduleSDK, moduleProvider} {
				if strings.Contains(r.stderr, other) {
					t.Errorf("the HTTP exchange only: the log has %q lines:\n%s", other, r.stderr)
				}
			}
		},
		"TF_LOG_PROVIDER_REDISSTREAMCOORDINATOR_COORDINATOR=DEBUG terraform plan": func(f *loggingFixture, r loggingRun) {
			if strings.Contains(r.stderr, "@module=") || strings.Contains(r.stderr, "[DEBUG]") {
				t.Errorf("the subsystem variable alone: Terraform printed log lines:\n%s", r.stderr)
			}
		},
		"TF_LOG=DEBUG TF_LOG_PATH=terraform-debug.log terraform plan -input=false": func(f *loggingFixture, r loggingRun) {
			if !r.exists {
				t.Fatal("TF_LOG_PATH: no log file written")
			}
			f.expectHTTPExchange("the TF_LOG_PATH file", r.file)
			if strings.Contains(r.stderr, "@module=") {
				t.Errorf("TF_LOG_PATH: log lines on standard error too:\n%s", r.stderr)
			}
		},
	}
	seen := map[string]bool{}
	for _, c := range guideCommands(t) {
		check, ok := checks[c.line]
		if !ok {
			t.Errorf("%s: command %q has no check in TestAccLogging: add what it must show", loggingGuide, c.line)
			continue
		}
		seen[c.line] = true
		t.Run(strings.Join(c.env, " "), func(t *testing.T) {
			f := newLoggingFixture(t, providerDir)
			check(f, f.plan(c.env, c.args...))
		})
	}
	for line := range checks {
		if !seen[line] {
			t.Errorf("%s no longer has the command %q", loggingGuide, line)
		}
	}

	// TF_LOG_PATH alone logs nothing (the guide says so): Terraform creates
	// the file but writes nothing to it.
	t.Run("TF_LOG_PATH alone", func(t *testing.T) {
		f := newLoggingFixture(t, providerDir)
		if r := f.plan([]string{"TF_LOG_PATH=terraform-debug.log"}, "plan"); r.file != "" || strings.Contains(r.stderr, "@module=") {
			t.Errorf("TF_LOG_PATH alone: %d bytes written to the file, stderr:\n%s", len(r.file), r.stderr)
		}
	})

	// Quiet by default: Terraform logs at TRACE, but a wrapper starts the
	// provider without any TF_LOG* variable, as if the user had set none: not
	// one line of the SDK's or the provider's loggers reaches Terraform's
	// log. The same wrapper passing only the provider's level shows that the
	// wrapped provider's lines would reach it, and that any logging variable
	// restores the SDK's default.
	t.Run("quiet by default", func(t *testing.T) {
		wrapped := wrapProviderWithoutLogEnv(t, filepath.Join(providerDir, demo.ProviderBinary))
		f := newLoggingFixture(t, wrapped)
		quiet := f.plan([]string{"TF_LOG=TRACE", "TF_LOG_PATH=terraform.log"}, "plan")
		if !quiet.exists || !strings.Contains(quiet.file, "terraform-provider-redisstreamcoordinator") {
			t.Fatalf("Terraform's TRACE log does not mention the provider at all, so the check would prove nothing:\n%s", quiet.file)
		}
		if strings.Contains(quiet.file, "@module=") {
			t.Errorf("with no TF_LOG* variable the provider still logged:\n%s", grepLines(quiet.file, "@module="))
		}
		control := f.plan([]string{"TF_LOG=TRACE", "TF_LOG_PATH=terraform.log", "WRAPPED_PROVIDER_ENV=TF_LOG_PROVIDER_REDISSTREAMCOORDINATOR=DEBUG"}, "plan")
		f.expectHTTPExchange("the wrapped provider with its level set", control.file)
		// Any logging variable set keeps today's behaviour: the SDK logs at
		// its default TRACE again.
		if !strings.Contains(control.file, moduleSDK) {
			t.Errorf("with the provider's level set, the SDK's TRACE lines are gone from Terraform's log")
		}
	})
}

// wrapProviderWithoutLogEnv writes a dev-override directory whose provider
// is a script that starts bin with every TF_LOG* variable removed from its
// environment and the assignments in WRAPPED_PROVIDER_ENV added.
func wrapProviderWithoutLogEnv(t *testing.T, bin string) string {
	t.Helper()
	dir := t.TempDir()
	script := fmt.Sprintf(`#!/bin/sh
for v in $(env | sed -n 's/^\(TF_LOG[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
exec env $WRAPPED_PROVIDER_ENV %q "$@"
`, bin)
	if err := os.WriteFile(filepath.Join(dir, demo.ProviderBinary), []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

func grepLines(text, substr string) string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, substr) {
			out = append(out, line)
		}
	}
	if len(out) > 20 {
		out = append(out[:20], fmt.Sprintf("… and %d more", len(out)-20))
	}
	return strings.Join(out, "\n")
}
