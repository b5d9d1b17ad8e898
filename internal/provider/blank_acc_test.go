package provider

import (
	"fmt"
	"net/http"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// TestAccBlank_followsTheCoordinatorsRules (issue 42 §7): "blank" is the
// coordinator's, not Go's strings.TrimSpace. A reason of U+001C (blank for
// Java's trim(), kept by TrimSpace) and a consumer group of U+001C (blank for
// Kotlin's isBlank()) are refused at plan time with nothing sent; a reason of
// no-break spaces (not blank for Java's trim(), stripped by TrimSpace) is
// accepted and reaches the audit log as written.
func TestAccBlank_followsTheCoordinatorsRules(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "counts the creates sent and reads the audit log")
	p := acctest.RandomName("blank")
	const nbsp = "\u00a0\u00a0"
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{
				Config:      a.env.ProviderConfig() + groupHCL("test", p, "svc", `reason = "\u001c"`),
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`(?s)` + words("Attribute reason must not be blank") + `.*` + words(`got: "\x1c"`)),
			},
			{
				// HCL's own escape: Go's %q would write \x1c, which HCL lacks.
				Config: a.env.ProviderConfig() + `
resource "redisstreamcoordinator_group" "test" {
  stream_prefix  = "` + p + `"
  consumer_group = "\u001c"
}
`,
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(words(`consumer group "\x1c" is blank`)),
			},
			{
				PreConfig: func() {
					if n := c.RequestCount(http.MethodPost, coordinator.RouteGroup); n != 0 {
						t.Fatalf("a refused plan sent %d creates", n)
					}
				},
				Config: a.env.ProviderConfig() + groupHCL("test", p, "svc", `reason = "\u00a0\u00a0"`),
				Check: func(*terraform.State) error {
					events := terraformMutations(c, p, "CREATE_GROUP")
					if len(events) != 1 || events[0].Outcome != "SUCCESS" || deref(events[0].Reason) != nbsp {
						return fmt.Errorf("want one successful create whose reason is two no-break spaces, got %d events: %+v", len(events), events)
					}
					return nil
				},
			},
		},
	})
}
