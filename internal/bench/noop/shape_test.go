package noop

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/provider"
)

// TestRealShapeMirrorsTheProviderSchema: the same-shape floor has the
// provider's attributes and blocks, with the same types and flags, and none
// of its validators, plan modifiers or defaults.
func TestRealShapeMirrorsTheProviderSchema(t *testing.T) {
	ctx := context.Background()
	provided := map[string]schema.Schema{}
	for _, factory := range provider.New("test")().Resources(ctx) {
		r := factory()
		var meta resource.MetadataResponse
		r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: provider.TypeName}, &meta)
		var resp resource.SchemaResponse
		r.Schema(ctx, resource.SchemaRequest{}, &resp)
		provided[meta.TypeName] = resp.Schema
	}
	for _, suffix := range []string{"_group", "_group_shard_count"} {
		want, ok := provided[provider.TypeName+suffix]
		if !ok {
			t.Fatalf("the provider has no %s%s", provider.TypeName, suffix)
		}
		got, err := RealShape(ctx, suffix)
		if err != nil {
			t.Fatal(err)
		}
		// The Terraform type, not the framework's: the floor's timeouts
		// block has no custom type.
		wantType, gotType := want.Type().TerraformType(ctx), got.Type().TerraformType(ctx)
		if !gotType.Equal(wantType) {
			t.Errorf("%s: floor's Terraform type differs:\n got %s\nwant %s", suffix, gotType, wantType)
		}
		for name, w := range want.Attributes {
			g := got.Attributes[name]
			if g.IsRequired() != w.IsRequired() || g.IsOptional() != w.IsOptional() || g.IsComputed() != w.IsComputed() || g.IsSensitive() != w.IsSensitive() {
				t.Errorf("%s.%s: flags differ", suffix, name)
			}
		}
		for name, a := range got.Attributes {
			if hasChecks(a) {
				t.Errorf("%s.%s: the floor must not validate or modify plans", suffix, name)
			}
		}
	}
}

func hasChecks(a schema.Attribute) bool {
	switch a := a.(type) {
	case schema.StringAttribute:
		return len(a.Validators)+len(a.PlanModifiers) > 0 || a.Default != nil
	case schema.Int64Attribute:
		return len(a.Validators)+len(a.PlanModifiers) > 0 || a.Default != nil
	case schema.BoolAttribute:
		return len(a.Validators)+len(a.PlanModifiers) > 0 || a.Default != nil
	case schema.MapAttribute:
		return len(a.Validators)+len(a.PlanModifiers) > 0 || a.Default != nil
	case schema.SingleNestedAttribute:
		for _, n := range a.Attributes {
			if hasChecks(n) {
				return true
			}
		}
		return len(a.Validators)+len(a.PlanModifiers) > 0 || a.Default != nil
	}
	return false
}
