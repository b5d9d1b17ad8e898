package provider

import (
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// apiErrorDetail includes the request id so the call can be found in the audit log.
func apiErrorDetail(err error, next string) string {
	var b strings.Builder
	var deadlineErr *client.DeadlineError
	var waitErr *client.InterruptedWaitError
	var notSent *client.NotSentError
	if errors.As(err, &notSent) {
		if err != error(notSent) {
			fmt.Fprintf(&b, "%s.\n", strings.TrimSuffix(err.Error(), "."))
		}
		if notSent.Last != nil {
			fmt.Fprintf(&b, "Not retried: %s %s (request id %s). The operation ended (%v) while the provider waited to retry it; the last "+
				"attempt, which changed nothing, failed: %v.\n", notSent.Method, notSent.Path, notSent.RequestID, notSent.Err, notSent.Last)
		}
		fmt.Fprintf(&b, "Not sent: %s %s (request id %s). The operation ended (%v) before this request started, and the provider sends "+
			"nothing new once Terraform has interrupted or timed out an operation: requests already sent were finished or read back "+
			"(any warning above says what they did).\n", notSent.Method, notSent.Path, notSent.RequestID, notSent.Err)
		next = joinHints(next, "The next plan reads the coordinator again and plans what is still missing: review it, then apply.")
	}
	// The 429 hint would be false if the retries did not run.
	notRetried := false
	switch {
	case errors.As(err, &deadlineErr) && deadlineErr.Ceiling > 0:
		fmt.Fprintf(&b, "Not retried: %s.\n", deadlineErr.Reason())
		next = joinHints("Run terraform again once the server accepts requests again. If waits this long are expected, raise retry_wait_max.", next)
		notRetried = true
	case deadlineErr != nil:
		fmt.Fprintf(&b, "Not retried: %s.\n", deadlineErr.Reason())
		next = joinHints("Raise the resource's timeouts, or read_timeout for refreshes and data sources (or retry later, when the "+
			"coordinator's rate-limit window has reset).", next)
		notRetried = true
	case errors.As(err, &waitErr):
		fmt.Fprintf(&b, "Stopped: %s.\n", waitErr.Reason())
		notRetried = true
	}
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
		// A 429 that was not retried is not "still exceeded after retrying".
		if !notRetried || apiErr.HTTPStatus != 429 {
			next = joinHints(statusHint(apiErr), next)
		}
	} else if notSent == nil {
		fmt.Fprintf(&b, "%s\n", err)
		next = joinHints(transportHint(err), next)
	}
	if next != "" {
		fmt.Fprintf(&b, "\n%s", next)
	}
	return strings.TrimRight(b.String(), "\n")
}

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
	case e.ErrorCode == "" && (e.HTTPStatus == 502 || e.HTTPStatus == 503 || e.HTTPStatus == 504):
		return "This answer carries no coordinator error code, so it came from a proxy or load balancer in front of the coordinator: " +
			"the coordinator is probably restarting or unreachable behind it. Check the coordinator's health (GET /coord/v1/monitoring/health) " +
			"and run terraform again."
	case e.ErrorCode == "" && e.HTTPStatus == 500:
		return "A 500 without a coordinator error code is Spring Boot's generic error: the coordinator answers that way when its Redis " +
			"store or its state mutex fails. Check the coordinator's health (GET /coord/v1/monitoring/health reports its Redis connection) " +
			"and its log for the request id above, then run terraform again: the provider reads back any change this answer left in doubt " +
			"before making it again."
	case e.ErrorCode == client.CodeRedisNotConfigured:
		return "The coordinator has stream provisioning enabled but no Redis connection: its operators must fix its configuration."
	}
	return ""
}

func addAPIError(diags *diag.Diagnostics, summary string, err error, next string) {
	diags.AddError(summary, apiErrorDetail(err, next))
}

// addAPIWarning is for a failed call whose operation still stands.
func addAPIWarning(diags *diag.Diagnostics, summary string, err error, next string) {
	diags.AddWarning(summary, apiErrorDetail(err, next))
}

func transportHint(err error) string {
	var syntaxErr *json.SyntaxError
	var typeErr *json.UnmarshalTypeError
	var unknownAuthority x509.UnknownAuthorityError
	var hostnameErr x509.HostnameError
	var opErr *net.OpError
	switch {
	case errors.As(err, &syntaxErr), errors.As(err, &typeErr):
		return "The response was not the JSON the coordinator sends. Check that endpoint points at the coordinator itself, not at a proxy, " +
			"a login page or another service; if it does, the response was cut short on the way: run terraform again."
	case errors.As(err, &unknownAuthority):
		return "The coordinator's TLS certificate is not signed by a CA this machine trusts. If it is issued by a private CA, set ca_cert_pem " +
			"(or REDIS_STREAM_COORDINATOR_CA_CERT_PEM) to that CA's PEM certificate."
	case errors.As(err, &hostnameErr):
		return "The coordinator's TLS certificate is not valid for the host in endpoint: use the host name the certificate names."
	// net/http marks a per-attempt timeout only in the message.
	case strings.Contains(err.Error(), "Client.Timeout exceeded"):
		return "The coordinator did not answer within request_timeout (the limit for one attempt, 30s unless set) on any attempt. " +
			"Check the coordinator's health and the network path; if answers are legitimately this slow, raise request_timeout."
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return "Could not connect to the coordinator. Check that endpoint is right and that the coordinator is running and reachable " +
			"from where Terraform runs (HTTPS_PROXY and NO_PROXY apply)."
	}
	return ""
}

// joinHints puts each non-empty hint on its own line.
func joinHints(first, rest string) string {
	if first == "" || rest == "" {
		return first + rest
	}
	return first + "\n" + rest
}
