package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

type healthModel struct {
	Status        string `tfsdk:"status"`
	CoordinatorID string `tfsdk:"coordinator_id"`
	Redis         string `tfsdk:"redis"`
	Loop          string `tfsdk:"loop"`
}

// NewHealthDataSource is the redisstreamcoordinator_health data source.
func NewHealthDataSource() datasource.DataSource {
	return &readDataSource{
		name:        "health",
		description: "Reads the coordinator's health (`READ` role). Test `status` in a `check` block (to warn) or a `postcondition` (to fail a plan).",
		attrs: map[string]schema.Attribute{
			"status": computedString("`UP`, or `DEGRADED` when Redis is `DOWN`. The coordinator never reports `DOWN` as its status: " +
				"an unreachable coordinator fails the read instead."),
			"coordinator_id": computedString("Id of the coordinator instance that answered (`COORDINATOR_ID`, default `local-coordinator`)."),
			"redis":          computedString("`UP`, `DOWN`, `UNKNOWN` (not checked yet; may read so on the first call) or `NOT_CONFIGURED` (no Redis)."),
			"loop":           computedString("State of the coordinator's background loop (leases, revokes, migrations): `UP`."),
		},
		read: func(ctx context.Context, api *client.Client, _, _ string, diags *diag.Diagnostics) any {
			h, err := api.Health(ctx)
			if err != nil {
				addAPIError(diags, "Failed to read the coordinator's health", err, "")
				return nil
			}
			return healthModel{Status: h.Status, CoordinatorID: h.CoordinatorID, Redis: h.Redis, Loop: h.Loop}
		},
	}
}
