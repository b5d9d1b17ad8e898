package acctest

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The compose file runs the published image as the image's own smoke test
// does (COORDINATOR_STORE_TYPE=memory, the server's port 8080), with the
// tag COORDINATOR_IMAGE_TAG selects and env.sh defaults to the release.
func TestDockerComposeMatchesTheImagesSmokeTest(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("docker", "compose.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Services map[string]struct {
			Image       string            `yaml:"image"`
			Ports       []string          `yaml:"ports"`
			Environment map[string]string `yaml:"environment"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(b, &compose); err != nil {
		t.Fatal(err)
	}
	c, ok := compose.Services["coordinator"]
	if !ok {
		t.Fatal("compose.yaml has no coordinator service")
	}
	if want := "ghcr.io/ghkdqhrbals/redis-stream-coordinator/coordinator-server:${COORDINATOR_IMAGE_TAG:?source env.sh first}"; c.Image != want {
		t.Errorf("image = %q, want %q (the tag from COORDINATOR_IMAGE_TAG)", c.Image, want)
	}
	if got := c.Environment["COORDINATOR_STORE_TYPE"]; got != "memory" {
		t.Errorf("COORDINATOR_STORE_TYPE = %q, want memory", got)
	}
	if !slices.Contains(c.Ports, "127.0.0.1:18080:8080") {
		t.Errorf("ports = %q, want the server's 8080 on 127.0.0.1:18080 (env.sh's endpoint)", c.Ports)
	}

	tag := func(env ...string) string {
		t.Helper()
		cmd := exec.Command("bash", "-c", `source docker/env.sh && printf %s "$COORDINATOR_IMAGE_TAG"`)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("sourcing env.sh: %v", err)
		}
		return string(out)
	}
	if got := tag("COORDINATOR_IMAGE_TAG="); got != "0.1.0" {
		t.Errorf("env.sh's default tag = %q, want the release 0.1.0", got)
	}
	if got := tag("COORDINATOR_IMAGE_TAG=latest"); got != "latest" {
		t.Errorf("env.sh with COORDINATOR_IMAGE_TAG=latest gives %q", got)
	}
}

// CI runs make testacc-docker on every pull request and push, and a
// scheduled job runs it against the image's latest tag.
func TestWorkflowRunsTestaccDocker(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", ".github", "workflows", "test.yml"))
	if err != nil {
		t.Fatal(err)
	}
	type job struct {
		If    string            `yaml:"if"`
		Env   map[string]string `yaml:"env"`
		Steps []struct {
			Run string `yaml:"run"`
		} `yaml:"steps"`
	}
	var wf struct {
		On   map[string]yaml.Node `yaml:"on"`
		Jobs map[string]job       `yaml:"jobs"`
	}
	if err := yaml.Unmarshal(b, &wf); err != nil {
		t.Fatal(err)
	}
	for _, event := range []string{"pull_request", "push", "schedule"} {
		if _, ok := wf.On[event]; !ok {
			t.Errorf("test.yml does not run on %s", event)
		}
	}
	runsDocker := func(j job) bool {
		return slices.ContainsFunc(j.Steps, func(s struct {
			Run string `yaml:"run"`
		}) bool {
			return strings.TrimSpace(s.Run) == "make testacc-docker"
		})
	}
	var everyChange, nightly bool
	for name, j := range wf.Jobs {
		if !runsDocker(j) {
			continue
		}
		switch {
		case j.Env["COORDINATOR_IMAGE_TAG"] == "latest":
			nightly = nightly || strings.Contains(j.If, "'schedule'")
			if !strings.Contains(j.If, "'schedule'") {
				t.Errorf("job %s runs the latest image but not on the schedule (if: %q)", name, j.If)
			}
		case !strings.Contains(j.If, "'schedule'") || strings.Contains(j.If, "!= 'schedule'"):
			everyChange = true
		}
	}
	if !everyChange {
		t.Error("no job of test.yml runs make testacc-docker on pull requests and pushes")
	}
	if !nightly {
		t.Error("no scheduled job of test.yml runs make testacc-docker with COORDINATOR_IMAGE_TAG=latest")
	}
}
