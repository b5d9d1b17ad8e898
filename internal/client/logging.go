package client

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// LogSubsystem is the tflog subsystem the client logs to. Its level can be
// set separately with TF_LOG_PROVIDER_REDISSTREAMCOORDINATOR_COORDINATOR.
const LogSubsystem = "coordinator"

// redactedKeys are JSON keys and log field keys whose values are secrets.
var redactedKeys = []string{"authorization", "password", "token", "accessToken"}

type subsystemKey struct{}

// logContext makes sure the subsystem exists and masks every credential the
// client knows about, both as field values and inside messages.
func (c *Client) logContext(ctx context.Context) context.Context {
	// tflog offers no lookup, so "absent" means: not created by us on this
	// context chain and not emitting even errors.
	if ctx.Value(subsystemKey{}) == nil && !tflog.SubsystemIsError(ctx, LogSubsystem) {
		ctx = tflog.NewSubsystem(ctx, LogSubsystem,
			tflog.WithLevelFromEnv("TF_LOG_PROVIDER_REDISSTREAMCOORDINATOR", LogSubsystem))
		ctx = context.WithValue(ctx, subsystemKey{}, true)
	}
	ctx = tflog.SubsystemMaskFieldValuesWithFieldKeys(ctx, LogSubsystem, redactedKeys...)
	return maskSecrets(ctx, c.auth.secrets()...)
}

// maskSecrets adds literal masks; empty strings are skipped because masking
// "" would splice "***" between every character.
func maskSecrets(ctx context.Context, secrets ...string) context.Context {
	var nonEmpty []string
	for _, s := range secrets {
		if s != "" {
			nonEmpty = append(nonEmpty, s)
		}
	}
	if len(nonEmpty) == 0 {
		return ctx
	}
	ctx = tflog.SubsystemMaskAllFieldValuesStrings(ctx, LogSubsystem, nonEmpty...)
	return tflog.SubsystemMaskMessageStrings(ctx, LogSubsystem, nonEmpty...)
}

func logDebug(ctx context.Context, msg string, fields map[string]any) {
	tflog.SubsystemDebug(ctx, LogSubsystem, msg, fields)
}

// traceBody logs a redacted body at TRACE; the redaction work is skipped
// unless TRACE is enabled.
func traceBody(ctx context.Context, msg string, fields map[string]any, body []byte) {
	if !tflog.SubsystemIsTrace(ctx, LogSubsystem) {
		return
	}
	fields["body"] = redactBody(body)
	tflog.SubsystemTrace(ctx, LogSubsystem, msg, fields)
}

// redactBody renders a JSON body for TRACE logs with the values of secret
// keys replaced. The login request and response carry the password and the
// access token, and a literal mask only covers secrets known in advance.
// Non-JSON bodies are cut to an excerpt (the log's masks cover the literal
// secrets).
func redactBody(body []byte) string {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return redactor{}.excerpt(body)
	}
	out, err := json.Marshal(redactValue(v))
	if err != nil {
		return redactor{}.excerpt(body)
	}
	return string(out)
}

func redactValue(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, val := range t {
			if isRedactedKey(k) {
				t[k] = "***"
				continue
			}
			t[k] = redactValue(val)
		}
	case []any:
		for i := range t {
			t[i] = redactValue(t[i])
		}
	}
	return v
}

func isRedactedKey(k string) bool {
	for _, r := range redactedKeys {
		if strings.EqualFold(k, r) {
			return true
		}
	}
	return false
}
