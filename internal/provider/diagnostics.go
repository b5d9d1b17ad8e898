package provider

import (
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// apiErrorDetail renders a failed coordinator call for a diagnostic: what the
// coordinator said (status, errorCode, message), the request id to find it in
// the audit log, and what the user can do next.
func apiErrorDetail(err error, next string) string {
	var b strings.Builder
	if apiErr, ok := client.AsAPIError(err); ok {
		fmt.Fprintf(&b, "The coordinator answered %d", apiErr.HTTPStatus)
		if apiErr.Status != "" {
			fmt.Fprintf(&b, " %s", apiErr.Status)
		}
		if apiErr.ErrorCode != "" {
			fmt.Fprintf(&b, " with errorCode %s", apiErr.ErrorCode)
		}
		fmt.Fprintf(&b, " to %s %s", apiErr.Method, apiErr.Path)
		if apiErr.Message != "" {
			fmt.Fprintf(&b, ":\n  %s", apiErr.Message)
		}
		b.WriteString("\n")
		if apiErr.RequestID != "" {
			fmt.Fprintf(&b, "Request id: %s\n", apiErr.RequestID)
		}
		if apiErr.Attempts > 1 {
			fmt.Fprintf(&b, "Attempts: %d\n", apiErr.Attempts)
		}
		if hint := statusHint(apiErr); hint != "" && next == "" {
			next = hint
		} else if hint != "" {
			next = hint + "\n" + next
		}
	} else {
		fmt.Fprintf(&b, "%s\n", err)
	}
	if next != "" {
		fmt.Fprintf(&b, "\n%s", next)
	}
	return strings.TrimRight(b.String(), "\n")
}

// statusHint covers what every call can meet, so individual call sites only
// add advice specific to them.
func statusHint(e *client.APIError) string {
	switch {
	case e.HTTPStatus == 401:
		return "Check username/password or token (REDIS_STREAM_COORDINATOR_USERNAME, _PASSWORD, _TOKEN). Tokens expire after 7 days by default."
	case e.HTTPStatus == 403:
		role := "READ"
		if e.Method != "GET" {
			role = "WRITE"
		}
		return fmt.Sprintf("The principal is authenticated but lacks the %s role this call needs. Ask the coordinator's operators to grant it, or use a dedicated principal with that role.", role)
	case e.HTTPStatus == 429:
		return "The coordinator's admin mutation rate limit was still exceeded after retrying. Lower -parallelism, raise max_retries, or ask for a higher COORDINATOR_API_RATE_LIMIT_ADMIN_MUTATIONS_PER_MINUTE."
	case e.ErrorCode == "REDIS_NOT_CONFIGURED":
		return "The coordinator has stream provisioning enabled but no Redis connection: its operators must fix its configuration."
	}
	return ""
}

// addAPIError adds an error diagnostic for a failed coordinator call.
func addAPIError(diags *diag.Diagnostics, summary string, err error, next string) {
	diags.AddError(summary, apiErrorDetail(err, next))
}
