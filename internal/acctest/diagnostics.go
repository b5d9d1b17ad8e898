package acctest

import (
	"fmt"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
)

// Diagnostics records every diagnostic the provider returns to Terraform, so
// tests can assert warnings, which terraform-plugin-testing does not expose.
type Diagnostics struct {
	mu    sync.Mutex
	diags []*tfprotov6.Diagnostic
	// progress are the progress messages of action invocations, in order.
	progress []string
}

// Factories serves the provider server built by newServer, recording its
// diagnostics.
func (d *Diagnostics) Factories(typeName string, newServer func() tfprotov6.ProviderServer) map[string]func() (tfprotov6.ProviderServer, error) {
	return map[string]func() (tfprotov6.ProviderServer, error){
		typeName: func() (tfprotov6.ProviderServer, error) {
			return newRecordingServer(newServer(), d)
		},
	}
}

func (d *Diagnostics) add(diags []*tfprotov6.Diagnostic) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.diags = append(d.diags, diags...)
}

// Warnings returns "summary: detail" of every warning recorded so far.
func (d *Diagnostics) Warnings() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for _, diag := range d.diags {
		if diag.Severity == tfprotov6.DiagnosticSeverityWarning {
			out = append(out, diag.Summary+": "+diag.Detail)
		}
	}
	return out
}

// Errors returns "summary: detail" of every error recorded so far.
func (d *Diagnostics) Errors() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for _, diag := range d.diags {
		if diag.Severity == tfprotov6.DiagnosticSeverityError {
			out = append(out, diag.Summary+": "+diag.Detail)
		}
	}
	return out
}

// Progress returns the progress messages of every action invocation so far.
func (d *Diagnostics) Progress() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.progress...)
}

// ExpectProgress is a step check: some progress message of an action
// invocation contains every one of the given fragments.
func (d *Diagnostics) ExpectProgress(fragments ...string) func(*terraform.State) error {
	return func(*terraform.State) error {
		progress := d.Progress()
		for _, p := range progress {
			if containsAll(p, fragments) {
				return nil
			}
		}
		return fmt.Errorf("no action progress message contains %q; messages recorded:\n  %s", fragments, strings.Join(progress, "\n  "))
	}
}

// Reset forgets what was recorded, so a step can assert only its own.
func (d *Diagnostics) Reset() {
	d.mu.Lock()
	d.diags, d.progress = nil, nil
	d.mu.Unlock()
}

// ExpectWarning is a step check: some warning recorded so far contains every
// one of the given fragments.
func (d *Diagnostics) ExpectWarning(fragments ...string) func(*terraform.State) error {
	return func(*terraform.State) error {
		warnings := d.Warnings()
		for _, w := range warnings {
			if containsAll(w, fragments) {
				return nil
			}
		}
		return fmt.Errorf("no warning contains %q; warnings recorded:\n  %s", fragments, strings.Join(warnings, "\n  "))
	}
}

// ExpectNoWarning is a step check: no recorded warning contains all fragments.
func (d *Diagnostics) ExpectNoWarning(fragments ...string) func(*terraform.State) error {
	return func(*terraform.State) error {
		for _, w := range d.Warnings() {
			if containsAll(w, fragments) {
				return fmt.Errorf("unexpected warning: %s", w)
			}
		}
		return nil
	}
}

func containsAll(s string, fragments []string) bool {
	for _, f := range fragments {
		if !strings.Contains(s, f) {
			return false
		}
	}
	return true
}
