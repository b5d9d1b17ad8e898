package client

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// runIDSources lists CI variables in detection order. Each names the run
// (pipeline) rather than the job, so all resources of one apply share it.
var runIDSources = []string{
	"TFC_RUN_ID",         // HCP Terraform / Terraform Enterprise
	"GITHUB_RUN_ID",      // GitHub Actions (attempt appended below)
	"CI_PIPELINE_ID",     // GitLab CI
	"BUILD_BUILDID",      // Azure Pipelines
	"CIRCLE_WORKFLOW_ID", // CircleCI
	"BUILDKITE_BUILD_ID", // Buildkite
}

func detectRunID(explicit string, getenv func(string) string) string {
	if id := sanitizeID(explicit); id != "" {
		return id
	}
	for _, name := range runIDSources {
		v := strings.TrimSpace(getenv(name))
		if v == "" {
			continue
		}
		if name == "GITHUB_RUN_ID" {
			// Re-runs of a workflow keep the run id; the attempt tells them apart.
			if attempt := strings.TrimSpace(getenv("GITHUB_RUN_ATTEMPT")); attempt != "" {
				v += "-" + attempt
			}
		}
		if id := sanitizeID(v); id != "" {
			return id
		}
	}
	return randomHex(6)
}

// NewRequestID returns "<prefix>-<runID>-<operation>-<8 hex chars>", limited
// to [A-Za-z0-9._:-]. Use one id per logical operation and pass the same id
// again when re-sending that operation after an ambiguous failure.
func (c *Client) NewRequestID(operation string) string {
	op := sanitizeID(operation)
	if op == "" {
		op = "call"
	}
	return c.requestIDPrefix + "-" + c.runID + "-" + op + "-" + randomHex(4)
}

// sanitizeID maps s onto [A-Za-z0-9._:-]: every run of other characters
// becomes one "-", and leading/trailing "-" are dropped.
func sanitizeID(s string) string {
	var b strings.Builder
	pendingDash := false
	for _, r := range strings.TrimSpace(s) {
		if isIDChar(r) {
			if pendingDash && b.Len() > 0 {
				b.WriteByte('-')
			}
			pendingDash = false
			b.WriteRune(r)
			continue
		}
		pendingDash = true
	}
	return strings.Trim(b.String(), "-")
}

func isIDChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
		r == '.' || r == '_' || r == ':' || r == '-'
}

func randomHex(n int) string {
	b := make([]byte, n)
	// crypto/rand.Read never returns an error on supported platforms.
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
