package noop

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/provider"
)

// RealShape returns the schema of the provider's resource whose type name
// ends in suffix ("_group", "_group_shard_count") with every validator,
// plan modifier, default and custom type left out: the same attributes,
// nested attributes and blocks, so the floor moves the same values through
// the protocol and Terraform as the provider does. It is derived from the
// provider itself, so the floor follows every schema change.
func RealShape(ctx context.Context, suffix string) (schema.Schema, error) {
	p := provider.New("bench")()
	for _, factory := range p.Resources(ctx) {
		r := factory()
		var meta resource.MetadataResponse
		r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: provider.TypeName}, &meta)
		if meta.TypeName != provider.TypeName+suffix {
			continue
		}
		var resp resource.SchemaResponse
		r.Schema(ctx, resource.SchemaRequest{}, &resp)
		if resp.Diagnostics.HasError() {
			return schema.Schema{}, fmt.Errorf("schema of %s: %v", meta.TypeName, resp.Diagnostics)
		}
		attrs, err := plainAttributes(resp.Schema.Attributes)
		if err != nil {
			return schema.Schema{}, fmt.Errorf("%s: %w", meta.TypeName, err)
		}
		blocks, err := plainBlocks(resp.Schema.Blocks)
		if err != nil {
			return schema.Schema{}, fmt.Errorf("%s: %w", meta.TypeName, err)
		}
		return schema.Schema{Attributes: attrs, Blocks: blocks}, nil
	}
	return schema.Schema{}, fmt.Errorf("the provider has no resource %s%s", provider.TypeName, suffix)
}

func plainAttributes(in map[string]schema.Attribute) (map[string]schema.Attribute, error) {
	out := make(map[string]schema.Attribute, len(in))
	for name, a := range in {
		p, err := plainAttribute(a)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", name, err)
		}
		out[name] = p
	}
	return out, nil
}

// plainAttribute keeps an attribute's kind, type and Required / Optional /
// Computed / Sensitive flags. A kind not listed fails, so a new kind in the
// provider's schema is noticed here rather than measured wrongly.
func plainAttribute(a schema.Attribute) (schema.Attribute, error) {
	switch a := a.(type) {
	case schema.StringAttribute:
		return schema.StringAttribute{Required: a.Required, Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive}, nil
	case schema.Int64Attribute:
		return schema.Int64Attribute{Required: a.Required, Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive}, nil
	case schema.Float64Attribute:
		return schema.Float64Attribute{Required: a.Required, Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive}, nil
	case schema.BoolAttribute:
		return schema.BoolAttribute{Required: a.Required, Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive}, nil
	case schema.MapAttribute:
		return schema.MapAttribute{ElementType: a.ElementType, Required: a.Required, Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive}, nil
	case schema.ListAttribute:
		return schema.ListAttribute{ElementType: a.ElementType, Required: a.Required, Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive}, nil
	case schema.SingleNestedAttribute:
		attrs, err := plainAttributes(a.Attributes)
		if err != nil {
			return nil, err
		}
		return schema.SingleNestedAttribute{Attributes: attrs, Required: a.Required, Optional: a.Optional, Computed: a.Computed, Sensitive: a.Sensitive}, nil
	}
	return nil, fmt.Errorf("kind %T is not mirrored by the do-nothing provider (internal/bench/noop/shape.go)", a)
}

func plainBlocks(in map[string]schema.Block) (map[string]schema.Block, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := make(map[string]schema.Block, len(in))
	for name, b := range in {
		sb, ok := b.(schema.SingleNestedBlock)
		if !ok {
			return nil, fmt.Errorf("block %s: kind %T is not mirrored by the do-nothing provider", name, b)
		}
		attrs, err := plainAttributes(sb.Attributes)
		if err != nil {
			return nil, fmt.Errorf("block %s: %w", name, err)
		}
		blocks, err := plainBlocks(sb.Blocks)
		if err != nil {
			return nil, fmt.Errorf("block %s: %w", name, err)
		}
		out[name] = schema.SingleNestedBlock{Attributes: attrs, Blocks: blocks}
	}
	return out, nil
}
