package client

import (
	"context"
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

// traceBody logs a body at TRACE through the call's redactor, the one that
// cleans diagnostics, so an echoed secret in any escaped form is removed
// (tflog's masks match literal strings only). Nothing is done unless TRACE
// is enabled.
func (c *Client) traceBody(ctx context.Context, cl *call, msg string, fields map[string]any, body []byte) {
	if !tflog.SubsystemIsTrace(ctx, LogSubsystem) {
		return
	}
	fields["body"] = c.redactFor(cl).text(strings.ToValidUTF8(string(body), "?"))
	tflog.SubsystemTrace(ctx, LogSubsystem, msg, fields)
}
