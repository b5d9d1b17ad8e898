package provider

import (
	"net/http"
	"regexp"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// TestAccGroupDataSource_answerCheckedForWhatItClaims (issue 42 §4): a 200
// whose body is JSON null is not an empty group (it read as id "/",
// shard_count 0, no error), and a body about another group is not the group
// asked for. Both fail the read, naming what came back. The in-repo
// coordinator answers as a hostile server on loopback would, once each.
func TestAccGroupDataSource_answerCheckedForWhatItClaims(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	c := a.env.RequireInRepo(t, "answers the group read with a hostile body")
	p := acctest.RandomName("strict")
	dsCreateGroup(t, a.env, p, "svc", 2)
	hostile := func(body string) func() {
		return func() {
			c.InjectFault(coordinator.Fault{Method: http.MethodGet, Route: coordinator.RouteGroup, Kind: coordinator.FaultRespond,
				Status: http.StatusOK, Body: body, ContentType: "application/json"})
		}
	}
	config := a.env.ProviderConfig() + groupDataSourceConfig(p, "svc")
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		Steps: []resource.TestStep{
			{
				PreConfig: hostile("null"),
				Config:    config,
				ExpectError: regexp.MustCompile(`(?s)Failed to read the metadata of group "svc".*` +
					words("the 200 answer") + `.*` + words("the body is JSON null, not a group; body: null")),
			},
			{
				PreConfig: hostile(`{"streamPrefix":"` + p + `","consumerGroup":"other","shardCount":7,"metadataVersion":3}`),
				Config:    config,
				ExpectError: regexp.MustCompile(`(?s)` + words(`it is about another group: consumerGroup "other" where "svc" was asked for`) +
					`.*` + words(`"shardCount":7`)),
			},
			{
				PreConfig:   hostile(`{"streamPrefix":"` + p + `","consumerGroup":"svc"}`),
				Config:      config,
				ExpectError: regexp.MustCompile(`(?s)` + words("the group lacks shardCount, metadataVersion (absent or null)")),
			},
			{
				// The coordinator's own answer reads as before.
				Config: config,
			},
		},
	})
}
