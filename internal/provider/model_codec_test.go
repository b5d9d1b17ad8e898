package provider

import (
	"context"
	"math/big"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// codecCase is one resource whose model goes through the codec.
type codecCase struct {
	name  string
	res   resource.Resource
	model func() any // a new zero model
}

func codecCases() []codecCase {
	return []codecCase{
		{"group", NewGroupResource(), func() any { return &groupResourceModel{} }},
		{"group_shard_count", NewGroupShardCountResource(), func() any { return &groupShardCountModel{} }},
	}
}

func resourceSchemaOf(t testing.TB, r resource.Resource) tfsdk.Plan {
	t.Helper()
	var resp resource.SchemaResponse
	r.Schema(context.Background(), resource.SchemaRequest{}, &resp)
	if resp.Diagnostics.HasError() {
		t.Fatal(resp.Diagnostics)
	}
	typ := resp.Schema.Type().TerraformType(context.Background())
	return tfsdk.Plan{Schema: resp.Schema, Raw: tftypes.NewValue(typ, nil)}
}

// randomValue is a value of typ: null, unknown (unless top) or known with
// random contents; numbers are integers, as the schemas' Int64s need.
func randomValue(rng *rand.Rand, typ tftypes.Type, top bool) tftypes.Value {
	if !top {
		switch rng.IntN(5) {
		case 0:
			return tftypes.NewValue(typ, nil)
		case 1:
			return tftypes.NewValue(typ, tftypes.UnknownValue)
		}
	}
	switch {
	case typ.Is(tftypes.String):
		return tftypes.NewValue(typ, []string{"", "orders", "a/b", "ü"}[rng.IntN(4)])
	case typ.Is(tftypes.Number):
		return tftypes.NewValue(typ, big.NewFloat(float64(rng.Int64N(1<<40)-1<<39)))
	case typ.Is(tftypes.Bool):
		return tftypes.NewValue(typ, rng.IntN(2) == 0)
	case typ.Is(tftypes.Map{}):
		elems := map[string]tftypes.Value{}
		for i := range rng.IntN(4) {
			elems[string(rune('a'+i))] = randomValue(rng, typ.(tftypes.Map).ElementType, false)
		}
		return tftypes.NewValue(typ, elems)
	case typ.Is(tftypes.List{}):
		var elems []tftypes.Value
		for range rng.IntN(4) {
			elems = append(elems, randomValue(rng, typ.(tftypes.List).ElementType, false))
		}
		return tftypes.NewValue(typ, elems)
	case typ.Is(tftypes.Object{}):
		obj := typ.(tftypes.Object)
		vals := map[string]tftypes.Value{}
		for name, at := range obj.AttributeTypes {
			vals[name] = randomValue(rng, at, false)
		}
		return tftypes.NewValue(typ, vals)
	}
	panic("randomValue: no case for " + typ.String())
}

// TestModelCodecMatchesFramework: for random plans of each resource's
// schema, the codec reads the same model as the framework's Get, and writes
// the same value as the framework's Set.
func TestModelCodecMatchesFramework(t *testing.T) {
	ctx := context.Background()
	for _, tc := range codecCases() {
		t.Run(tc.name, func(t *testing.T) {
			empty := resourceSchemaOf(t, tc.res)
			if _, err := codecFor(ctx, tc.model(), empty.Schema); err != nil {
				t.Fatalf("no codec, so the provider falls back to the framework's reflection: %v", err)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			for i := range 500 {
				raw := randomValue(rng, empty.Raw.Type(), true)
				in := tfsdk.Plan{Schema: empty.Schema, Raw: raw}

				want, got := tc.model(), tc.model()
				if diags := in.Get(ctx, want); diags.HasError() {
					t.Fatalf("case %d: framework Get: %v", i, diags)
				}
				if diags := getPlan(ctx, in, got); diags.HasError() {
					t.Fatalf("case %d: getPlan: %v", i, diags)
				}
				if !reflect.DeepEqual(want, got) {
					t.Fatalf("case %d: read\n%+v\nwant (framework)\n%+v", i, got, want)
				}

				fw, ours := empty, empty
				if diags := fw.Set(ctx, want); diags.HasError() {
					t.Fatalf("case %d: framework Set: %v", i, diags)
				}
				if diags := setPlan(ctx, &ours, want); diags.HasError() {
					t.Fatalf("case %d: setPlan: %v", i, diags)
				}
				if !ours.Raw.Equal(fw.Raw) || !ours.Raw.Equal(raw) {
					t.Fatalf("case %d: wrote\n%s\nwant (framework)\n%s", i, ours.Raw, fw.Raw)
				}

				// The state helpers are the same conversions.
				st := tfsdk.State{Schema: empty.Schema, Raw: raw}
				fromState := tc.model()
				if diags := getState(ctx, st, fromState); diags.HasError() || !reflect.DeepEqual(fromState, want) {
					t.Fatalf("case %d: getState: %v\n%+v", i, diags, fromState)
				}
				st.Raw = tftypes.NewValue(raw.Type(), nil)
				if diags := setState(ctx, &st, want); diags.HasError() || !st.Raw.Equal(raw) {
					t.Fatalf("case %d: setState: %v\n%s", i, diags, st.Raw)
				}
			}
		})
	}
}

func TestModelCodecRefusesWhatItCannotConvert(t *testing.T) {
	ctx := context.Background()
	plan := resourceSchemaOf(t, NewGroupResource())
	type missingField struct {
		ID any `tfsdk:"id"`
	}
	// (newModelCodec, not codecFor: the cache would keep the refusal of a
	// model used with another resource's schema.)
	for name, dst := range map[string]any{
		"another resource's model": groupShardCountModel{},
		"a field of another type":  missingField{},
	} {
		if _, err := newModelCodec(ctx, reflect.TypeOf(dst), plan.Schema); err == nil {
			t.Errorf("%s: newModelCodec accepted %T", name, dst)
		}
	}
	if _, err := codecFor(ctx, groupResourceModel{}, plan.Schema); err == nil {
		t.Error("codecFor accepted a model that is not a pointer")
	}
	// A null object cannot be read into a model (the framework refuses too).
	var m groupResourceModel
	if diags := getPlan(ctx, plan, &m); !diags.HasError() {
		t.Error("getPlan read a null plan")
	}
}

// BenchmarkModelCodec compares one read and one write of a group's state
// through the codec and through the framework's reflection.
func BenchmarkModelCodec(b *testing.B) {
	ctx := context.Background()
	empty := resourceSchemaOf(b, NewGroupResource())
	raw := randomValue(rand.New(rand.NewPCG(3, 4)), empty.Raw.Type(), true)
	b.Run("codec", func(b *testing.B) {
		for b.Loop() {
			var m groupResourceModel
			st := tfsdk.State{Schema: empty.Schema, Raw: raw}
			_ = getState(ctx, st, &m)
			_ = setState(ctx, &st, &m)
		}
	})
	b.Run("framework", func(b *testing.B) {
		for b.Loop() {
			var m groupResourceModel
			st := tfsdk.State{Schema: empty.Schema, Raw: raw}
			_ = st.Get(ctx, &m)
			_ = st.Set(ctx, &m)
		}
	})
}
