package client

import (
	"regexp"
	"testing"
)

func TestRunIDDetection(t *testing.T) {
	cases := []struct {
		name     string
		explicit string
		env      map[string]string
		want     string
	}{
		{"explicit wins", "my run", map[string]string{"TFC_RUN_ID": "run-abc"}, "my-run"},
		{"terraform cloud first", "", map[string]string{"TFC_RUN_ID": "run-abc", "GITHUB_RUN_ID": "99"}, "run-abc"},
		{"github with attempt", "", map[string]string{"GITHUB_RUN_ID": "99", "GITHUB_RUN_ATTEMPT": "2", "CI_PIPELINE_ID": "7"}, "99-2"},
		{"github without attempt", "", map[string]string{"GITHUB_RUN_ID": "99"}, "99"},
		{"gitlab", "", map[string]string{"CI_PIPELINE_ID": "7", "BUILD_BUILDID": "8"}, "7"},
		{"azure", "", map[string]string{"BUILD_BUILDID": "8", "CIRCLE_WORKFLOW_ID": "c"}, "8"},
		{"circleci", "", map[string]string{"CIRCLE_WORKFLOW_ID": "5f1e-ab", "BUILDKITE_BUILD_ID": "b"}, "5f1e-ab"},
		{"buildkite", "", map[string]string{"BUILDKITE_BUILD_ID": "0190/x y"}, "0190-x-y"},
		{"blank values skipped", "", map[string]string{"TFC_RUN_ID": "  ", "CI_PIPELINE_ID": "7"}, "7"},
	}
	for _, tc := range cases {
		got := detectRunID(tc.explicit, func(k string) string { return tc.env[k] })
		if got != tc.want {
			t.Errorf("%s: run id %q, want %q", tc.name, got, tc.want)
		}
	}
	random := detectRunID("", func(string) string { return "" })
	if !regexp.MustCompile(`^[0-9a-f]{12}$`).MatchString(random) {
		t.Errorf("random run id %q is not 12 hex chars", random)
	}
	if other := detectRunID("", func(string) string { return "" }); other == random {
		t.Error("random run ids repeat")
	}
}

func TestClientUsesDetectedRunID(t *testing.T) {
	c, err := New(Config{Endpoint: "http://h", Getenv: func(k string) string {
		return map[string]string{"GITHUB_RUN_ID": "4242", "GITHUB_RUN_ATTEMPT": "3"}[k]
	}})
	if err != nil {
		t.Fatal(err)
	}
	if c.RunID() != "4242-3" || c.DefaultReason() != "terraform apply 4242-3" {
		t.Errorf("run id %q reason %q", c.RunID(), c.DefaultReason())
	}
	c, err = New(Config{Endpoint: "http://h", DefaultReason: "managed by terraform", RequestedBy: "terraform:prod",
		Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if c.DefaultReason() != "managed by terraform" || c.RequestedBy() != "terraform:prod" {
		t.Errorf("overrides lost: %q %q", c.DefaultReason(), c.RequestedBy())
	}
}

func TestNewRequestID(t *testing.T) {
	c, err := New(Config{Endpoint: "http://h", RunID: "run 7", RequestIDPrefix: "tf/prod", Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	id := c.NewRequestID("scale stream!")
	if !regexp.MustCompile(`^tf-prod-run-7-scale-stream-[0-9a-f]{8}$`).MatchString(id) {
		t.Errorf("request id %q", id)
	}
	if !regexp.MustCompile(`^[A-Za-z0-9._:-]+$`).MatchString(c.NewRequestID("ünïcödé ☃")) {
		t.Error("request id has characters outside [A-Za-z0-9._:-]")
	}
	if first, second := c.NewRequestID("x"), c.NewRequestID("x"); first == second {
		t.Error("request ids repeat")
	}
}

func TestSanitizeID(t *testing.T) {
	cases := map[string]string{
		"abc-DEF_1.2:3": "abc-DEF_1.2:3",
		" a b ":         "a-b",
		"a//b":          "a-b",
		"/lead":         "lead",
		"\r\nX-Evil: 1": "X-Evil:-1",
		"☃":             "",
	}
	for in, want := range cases {
		if got := sanitizeID(in); got != want {
			t.Errorf("sanitizeID(%q) = %q, want %q", in, got, want)
		}
	}
}
