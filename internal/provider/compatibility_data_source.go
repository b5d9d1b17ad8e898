package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

type compatibilityModel struct {
	CurrentCoordinationVersion    int64                      `tfsdk:"current_coordination_version"`
	SupportedCoordinationVersions versionRangeModel          `tfsdk:"supported_coordination_versions"`
	CoordinationVersions          []coordinationVersionModel `tfsdk:"coordination_versions"`
}

type versionRangeModel struct {
	Min int64 `tfsdk:"min"`
	Max int64 `tfsdk:"max"`
}

type coordinationVersionModel struct {
	Version               int64             `tfsdk:"version"`
	Status                string            `tfsdk:"status"`
	IntroducedIn          types.String      `tfsdk:"introduced_in"`
	DeprecatedIn          types.String      `tfsdk:"deprecated_in"`
	MinimumSupportedUntil types.String      `tfsdk:"minimum_supported_until"`
	RemovedIn             types.String      `tfsdk:"removed_in"`
	TimingDefaults        map[string]string `tfsdk:"timing_defaults"`
}

// NewCompatibilityDataSource is the redisstreamcoordinator_compatibility data source.
func NewCompatibilityDataSource() datasource.DataSource {
	release := func(desc string) schema.StringAttribute {
		return computedString(desc + " Null when the coordinator reports none.")
	}
	return &readDataSource{
		name:        "compatibility",
		description: "Reads which coordination protocol versions the coordinator speaks with consumers, to check consumer libraries before deploying them (`READ` role).",
		read: func(ctx context.Context, api *client.Client, _, _ string, diags *diag.Diagnostics) any {
			c, err := api.Compatibility(ctx)
			if err != nil {
				addAPIError(diags, "Failed to read the coordinator's protocol compatibility", err, "")
				return nil
			}
			return newCompatibilityModel(c)
		},
		attrs: map[string]schema.Attribute{
			"current_coordination_version": computedInt64("Coordination protocol version the coordinator uses by default."),
			"supported_coordination_versions": schema.SingleNestedAttribute{
				MarkdownDescription: "Inclusive range of protocol versions consumers may heartbeat with.",
				Computed:            true,
				Attributes: map[string]schema.Attribute{
					"min": computedInt64("Oldest supported version."),
					"max": computedInt64("Newest supported version."),
				},
			},
			"coordination_versions": schema.ListNestedAttribute{
				MarkdownDescription: "Every protocol version the coordinator knows, with its lifecycle.",
				Computed:            true,
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"version":                 computedInt64("Protocol version."),
					"status":                  computedString("Lifecycle status, e.g. `ACTIVE`."),
					"introduced_in":           release("Coordinator release that introduced the version, e.g. `0.1.0`."),
					"deprecated_in":           release("Coordinator release that deprecated the version."),
					"minimum_supported_until": release("Coordinator release up to which the version stays supported, e.g. `1.0.0`."),
					"removed_in":              release("Coordinator release that removes the version."),
					"timing_defaults": schema.MapAttribute{
						MarkdownDescription: "Default timings of the version (`heartbeatInterval`, `memberLeaseTtl`, `rebalanceTimeout`) " +
							"exactly as the coordinator serializes them (for example ISO-8601 durations such as `PT3S`).",
						Computed:    true,
						ElementType: types.StringType,
					},
				}},
			},
		},
	}
}

func newCompatibilityModel(c *client.Compatibility) compatibilityModel {
	model := compatibilityModel{
		CurrentCoordinationVersion:    int64(c.CurrentCoordinationVersion),
		SupportedCoordinationVersions: versionRangeModel{Min: int64(c.SupportedCoordinationVersions.Min), Max: int64(c.SupportedCoordinationVersions.Max)},
		CoordinationVersions:          make([]coordinationVersionModel, 0, len(c.CoordinationVersions)),
	}
	for _, v := range c.CoordinationVersions {
		model.CoordinationVersions = append(model.CoordinationVersions, coordinationVersionModel{
			Version:               int64(v.Version),
			Status:                v.Status,
			IntroducedIn:          releaseVersion(v.IntroducedIn),
			DeprecatedIn:          releaseVersion(v.DeprecatedIn),
			MinimumSupportedUntil: releaseVersion(v.MinimumSupportedUntil),
			RemovedIn:             releaseVersion(v.RemovedIn),
			TimingDefaults:        opaqueStrings(v.TimingDefaults),
		})
	}
	return model
}

// releaseVersion is lenient because the release object's serialization was
// never pinned down.
func releaseVersion(raw json.RawMessage) types.String {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return types.StringNull()
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return types.StringValue(s)
	}
	var v struct {
		Major, Minor, Patch *int64
		Qualifier, Version  string
	}
	if json.Unmarshal(raw, &v) != nil {
		return types.StringNull()
	}
	switch {
	case v.Version != "":
		return types.StringValue(v.Version)
	case v.Major != nil && v.Minor != nil && v.Patch != nil:
		out := fmt.Sprintf("%d.%d.%d", *v.Major, *v.Minor, *v.Patch)
		if v.Qualifier != "" {
			out += "-" + v.Qualifier
		}
		return types.StringValue(out)
	}
	return types.StringNull()
}

// opaqueStrings converts nothing: the coordinator's Duration serialization is
// not pinned down. Never nil.
func opaqueStrings(raw json.RawMessage) map[string]string {
	out := map[string]string{}
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return out
	}
	for k, v := range fields {
		if bytes.Equal(v, []byte("null")) {
			continue
		}
		var s string
		if json.Unmarshal(v, &s) == nil {
			out[k] = s
			continue
		}
		if f, err := strconv.ParseFloat(string(v), 64); err == nil {
			out[k] = strconv.FormatFloat(f, 'f', -1, 64)
			continue
		}
		out[k] = string(v)
	}
	return out
}
