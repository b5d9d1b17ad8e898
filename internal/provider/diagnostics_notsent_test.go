package provider

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// TestNotRetriedDiagnosticNamesTheLastAttempt: a mutation whose retry was
// refused because the operation ended during the backoff says so, and quotes
// what the attempt before it answered.
func TestNotRetriedDiagnosticNamesTheLastAttempt(t *testing.T) {
	err := &client.NotSentError{Method: "POST", Path: "/coord/v1/streams/orders/groups/billing/scale", RequestID: "terraform-run1-scale-1",
		Err: context.Canceled, Last: errors.New("503 SERVICE_UNAVAILABLE COORDINATOR_STATE_MUTEX_UNAVAILABLE: busy")}
	got := apiErrorDetail(err, "")
	for _, want := range []string{"Not retried: POST /coord/v1/streams/orders/groups/billing/scale (request id terraform-run1-scale-1)",
		"while the provider waited to retry it", "COORDINATOR_STATE_MUTEX_UNAVAILABLE: busy", "The next plan reads the coordinator again"} {
		if !strings.Contains(got, want) {
			t.Errorf("detail lacks %q:\n%s", want, got)
		}
	}
}
