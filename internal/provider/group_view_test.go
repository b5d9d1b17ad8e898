package provider

import (
	"context"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/ephemeral"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// Every attribute is documented (the registry docs are generated from these
// descriptions) and every schema is valid for the framework.
func TestSchemasAreDocumented(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// Read the lists from the provider itself, so a new component cannot
	// escape the check.
	p := &coordinatorProvider{}
	for _, newDS := range p.DataSources(ctx) {
		ds := newDS()
		var meta datasource.MetadataResponse
		ds.Metadata(ctx, datasource.MetadataRequest{ProviderTypeName: TypeName}, &meta)
		var resp datasource.SchemaResponse
		ds.Schema(ctx, datasource.SchemaRequest{}, &resp)
		if diags := resp.Schema.ValidateImplementation(ctx); diags.HasError() {
			t.Errorf("%s: invalid schema: %v", meta.TypeName, diags)
		}
		if resp.Schema.MarkdownDescription == "" {
			t.Errorf("%s has no description", meta.TypeName)
		}
		checkDescribed(t, meta.TypeName, resp.Schema.Attributes)
	}

	for _, newRes := range p.Resources(ctx) {
		r := newRes()
		var meta resource.MetadataResponse
		r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: TypeName}, &meta)
		var resp resource.SchemaResponse
		r.Schema(ctx, resource.SchemaRequest{}, &resp)
		if diags := resp.Schema.ValidateImplementation(ctx); diags.HasError() {
			t.Errorf("%s: invalid schema: %v", meta.TypeName, diags)
		}
		if resp.Schema.MarkdownDescription == "" {
			t.Errorf("%s has no description", meta.TypeName)
		}
		for name, a := range resp.Schema.Attributes {
			if a.GetMarkdownDescription() == "" {
				t.Errorf("%s.%s has no description", meta.TypeName, name)
			}
		}
	}

	for _, newEph := range p.EphemeralResources(ctx) {
		var meta ephemeral.MetadataResponse
		e := newEph()
		e.Metadata(ctx, ephemeral.MetadataRequest{ProviderTypeName: TypeName}, &meta)
		var eph ephemeral.SchemaResponse
		e.Schema(ctx, ephemeral.SchemaRequest{}, &eph)
		if eph.Schema.MarkdownDescription == "" {
			t.Errorf("%s has no description", meta.TypeName)
		}
		for name, a := range eph.Schema.Attributes {
			if a.GetMarkdownDescription() == "" {
				t.Errorf("%s.%s has no description", meta.TypeName, name)
			}
		}
	}

	for _, newFn := range p.Functions(ctx) {
		fn := newFn()
		var meta function.MetadataResponse
		fn.Metadata(ctx, function.MetadataRequest{}, &meta)
		var def function.DefinitionResponse
		fn.Definition(ctx, function.DefinitionRequest{}, &def)
		if def.Definition.Summary == "" || def.Definition.MarkdownDescription == "" {
			t.Errorf("function %s lacks a summary or description", meta.Name)
		}
		for _, p := range def.Definition.Parameters {
			if p.GetName() == "" || p.GetMarkdownDescription() == "" {
				t.Errorf("function %s: parameter %q lacks a name or description", meta.Name, p.GetName())
			}
		}
	}
}

func checkDescribed(t *testing.T, at string, attrs map[string]schema.Attribute) {
	t.Helper()
	for name, a := range attrs {
		if a.GetMarkdownDescription() == "" {
			t.Errorf("%s.%s has no description", at, name)
		}
		switch nested := a.(type) {
		case schema.SingleNestedAttribute:
			checkDescribed(t, at+"."+name, nested.Attributes)
		case schema.ListNestedAttribute:
			checkDescribed(t, at+"."+name+"[*]", nested.NestedObject.Attributes)
		}
	}
}

func TestTimeValue(t *testing.T) {
	t.Parallel()
	if v := timeValue(client.Time{}); !v.IsNull() {
		t.Errorf("zero time = %v, want null", v)
	}
	at := time.Date(2026, 3, 4, 5, 6, 7, 890000000, time.FixedZone("KST", 9*3600))
	if got := timeValue(client.Time{Time: at}).ValueString(); got != "2026-03-03T20:06:07.89Z" {
		t.Errorf("timeValue = %q, want RFC 3339 in UTC", got)
	}
}

func TestShardIndexMap(t *testing.T) {
	t.Parallel()
	got := shardIndexMap(map[string][]client.ShardID{"m-1": {{ShardIndex: 3}, {ShardIndex: 1}}, "m-2": nil})
	if len(got) != 2 || len(got["m-1"]) != 2 || got["m-1"][0] != 1 || got["m-1"][1] != 3 {
		t.Errorf("shardIndexMap = %v, want m-1: [1 3] (ascending)", got)
	}
	if got["m-2"] == nil {
		t.Error("a member without shards must map to an empty list, not null")
	}
	if shardIndexMap(nil) == nil {
		t.Error("no members must give an empty map, not null")
	}
}

func TestNewGroupViewModel(t *testing.T) {
	t.Parallel()
	m := newGroupViewModel(&client.Group{
		StreamPrefix: "orders", ConsumerGroup: "svc", State: client.GroupReconciling, ShardCount: 4,
		GroupEpoch: 7, AssignmentEpoch: 6, MetadataVersion: 2,
		ActiveMigration:         &client.Migration{ReshardingID: "reshard-1", FromShardCount: 2, ToShardCount: 4, State: client.MigrationActive},
		TargetAssignmentSummary: map[string]int32{"m-1": 4},
	})
	if m.ID != "orders/svc" || m.State != "RECONCILING" || m.ShardCount != 4 || m.GroupEpoch != 7 || m.AssignmentEpoch != 6 || m.MetadataVersion != 2 {
		t.Errorf("unexpected model %+v", m)
	}
	if m.ActiveMigration == nil || m.ActiveMigration.ToShardCount != 4 || !m.ActiveMigration.CreatedAt.IsNull() {
		t.Errorf("active migration = %+v, want to_shard_count 4 and a null created_at", m.ActiveMigration)
	}
	if m.TargetAssignmentSummary["m-1"] != 4 || m.CurrentAssignmentSummary == nil {
		t.Errorf("summaries = %v / %v, want m-1: 4 and an empty (not null) current summary", m.TargetAssignmentSummary, m.CurrentAssignmentSummary)
	}
	if newGroupViewModel(&client.Group{}).ActiveMigration != nil {
		t.Error("no active migration must be null")
	}
}
