package provider

import (
	"context"
	"errors"
	"math/big"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
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
			if _, err := codecFor(ctx, tc.model(), empty.Schema, empty.Raw.Type()); err != nil {
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
	for name, dst := range map[string]any{
		"another resource's model": groupShardCountModel{},
		"a field of another type":  missingField{},
	} {
		if _, _, err := newModelCodec(ctx, reflect.TypeOf(dst), plan.Schema); err == nil {
			t.Errorf("%s: newModelCodec accepted %T", name, dst)
		}
	}
	if _, err := codecFor(ctx, groupResourceModel{}, plan.Schema, plan.Raw.Type()); err == nil {
		t.Error("codecFor accepted a model that is not a pointer")
	}
	// A null object cannot be read into a model (the framework refuses too).
	var m groupResourceModel
	if diags := getPlan(ctx, plan, &m); !diags.HasError() {
		t.Error("getPlan read a null plan")
	}
}

// codecTwoSchemasModel fits two test schemas, codecTestSchema's with
// tags a map of strings and with tags a map of numbers: the same field
// types (types.Map) for different Terraform types.
type codecTwoSchemasModel struct {
	Name types.String `tfsdk:"name"`
	Tags types.Map    `tfsdk:"tags"`
}

// codecTestSchema is a resource schema of a name and tags of element type
// elem, and with extra an optional "note" that codecTwoSchemasModel lacks.
func codecTestSchema(elem attr.Type, extra bool) schema.Schema {
	attrs := map[string]schema.Attribute{
		"name": schema.StringAttribute{Required: true},
		"tags": schema.MapAttribute{ElementType: elem, Optional: true},
	}
	if extra {
		attrs["note"] = schema.StringAttribute{Optional: true}
	}
	return schema.Schema{Attributes: attrs}
}

// codecTestState is a state of s with the given tags (a nil tag is null).
func codecTestState(s schema.Schema, tags map[string]any) tfsdk.State {
	obj := s.Type().TerraformType(context.Background()).(tftypes.Object)
	elem := obj.AttributeTypes["tags"].(tftypes.Map).ElementType
	vals := map[string]tftypes.Value{}
	for k, v := range tags {
		if f, ok := v.(float64); ok {
			v = big.NewFloat(f)
		}
		vals[k] = tftypes.NewValue(elem, v)
	}
	attrs := map[string]tftypes.Value{
		"name": tftypes.NewValue(tftypes.String, "orders"),
		"tags": tftypes.NewValue(obj.AttributeTypes["tags"], vals),
	}
	if at, ok := obj.AttributeTypes["note"]; ok {
		attrs["note"] = tftypes.NewValue(at, nil)
	}
	return tfsdk.State{Schema: s, Raw: tftypes.NewValue(obj, attrs)}
}

// TestModelCodecKeysByTheSchemasType: one model type used with two schemas
// is read and written with each schema's own type, whichever came first
// (the cache once kept the first schema's codec for the model type and wrote
// the second schema's data with it), and a model that does not fit the
// schema's type is refused on the attribute's path.
func TestModelCodecKeysByTheSchemasType(t *testing.T) {
	ctx := context.Background()
	strS, numS := codecTestSchema(types.StringType, false), codecTestSchema(types.Int64Type, false)
	strSt := codecTestState(strS, map[string]any{"a": "v", "b": nil})
	numSt := codecTestState(numS, map[string]any{"a": 7.0, "b": nil})
	for i, st := range []tfsdk.State{strSt, numSt, strSt, numSt} {
		c, err := codecFor(ctx, &codecTwoSchemasModel{}, st.Schema, st.Raw.Type())
		if err != nil || !c.tfType.Equal(st.Raw.Type()) {
			t.Fatalf("%d: codec %v, %v: want one of the schema's type %s", i, c, err, st.Raw.Type())
		}
		var want, got codecTwoSchemasModel
		if diags := st.Get(ctx, &want); diags.HasError() {
			t.Fatalf("%d: framework Get: %v", i, diags)
		}
		if diags := getState(ctx, st, &got); diags.HasError() || !reflect.DeepEqual(got, want) {
			t.Fatalf("%d: getState: %v\n%+v\nwant (framework)\n%+v", i, diags, got, want)
		}
		out := tfsdk.State{Schema: st.Schema, Raw: tftypes.NewValue(st.Raw.Type(), nil)}
		if diags := setState(ctx, &out, &got); diags.HasError() || !out.Raw.Equal(st.Raw) {
			t.Fatalf("%d: setState: %v\n%s\nwant\n%s", i, diags, out.Raw, st.Raw)
		}
	}

	// tags of strings written to the state of numbers: refused, on tags, as
	// the framework refuses it; the state is left as it was.
	var strModel codecTwoSchemasModel
	if diags := getState(ctx, strSt, &strModel); diags.HasError() {
		t.Fatal(diags)
	}
	fw := tfsdk.State{Schema: numS, Raw: tftypes.NewValue(numSt.Raw.Type(), nil)}
	if diags := fw.Set(ctx, &strModel); !diags.HasError() {
		t.Fatal("the framework wrote tags of strings as numbers")
	}
	out := fw
	diags := setState(ctx, &out, &strModel)
	wantErrorAt(t, "setState", diags, path.Root("tags"))
	if !out.Raw.Equal(fw.Raw) {
		t.Errorf("setState changed the state on an error: %s", out.Raw)
	}

	// A number that is no Int64 in the data: refused on tags, as the
	// framework does (its Get fails on the same path), model untouched.
	frac := codecTestState(numS, map[string]any{"a": 1.5})
	var fwModel codecTwoSchemasModel
	fwDiags := frac.Get(ctx, &fwModel)
	wantErrorAt(t, "framework Get", fwDiags, path.Root("tags"))
	got := strModel
	diags = getState(ctx, frac, &got)
	wantErrorAt(t, "getState", diags, path.Root("tags"))
	if !reflect.DeepEqual(got, strModel) {
		t.Errorf("getState changed the model on an error: %+v", got)
	}
}

// wantErrorAt fails t unless diags is one error, a "Value Conversion
// Error" on p, saying it is a bug in the provider if it is the provider's.
func wantErrorAt(t *testing.T, what string, diags diag.Diagnostics, p path.Path) {
	t.Helper()
	if len(diags) != 1 || !diags.HasError() {
		t.Errorf("%s: want one error on %s, got %v", what, p, diags)
		return
	}
	d, ok := diags[0].(diag.DiagnosticWithPath)
	if !ok || !d.Path().Equal(p) || d.Summary() != "Value Conversion Error" {
		t.Errorf("%s: want a Value Conversion Error on %s, got %T %v", what, p, diags[0], diags[0])
	}
}

// TestModelCodecFallsBackOnAMismatch: wherever the codec cannot vouch for
// the data's type, the helpers are the framework's own Get and Set, with
// its result and its diagnostics.
func TestModelCodecFallsBackOnAMismatch(t *testing.T) {
	ctx := context.Background()
	strS := codecTestSchema(types.StringType, false)
	strSt := codecTestState(strS, map[string]any{"a": "v"})

	t.Run("data without a type", func(t *testing.T) {
		// As a tfsdk.State built without its Raw: the framework's Set
		// writes it from the schema.
		var m codecTwoSchemasModel
		if diags := getState(ctx, strSt, &m); diags.HasError() {
			t.Fatal(diags)
		}
		fw, ours := tfsdk.State{Schema: strS}, tfsdk.State{Schema: strS}
		if diags := fw.Set(ctx, &m); diags.HasError() {
			t.Fatal(diags)
		}
		if diags := setState(ctx, &ours, &m); diags.HasError() || !ours.Raw.Equal(fw.Raw) || !ours.Raw.Equal(strSt.Raw) {
			t.Fatalf("setState: %v\n%s\nwant (framework)\n%s", diags, ours.Raw, fw.Raw)
		}
		var fromZero codecTwoSchemasModel
		want := tfsdk.State{Schema: strS}.Get(ctx, &fromZero)
		if diags := getState(ctx, tfsdk.State{Schema: strS}, &fromZero); !want.HasError() || !diags.Equal(want) {
			t.Fatalf("getState of no data: %v, want the framework's %v", diags, want)
		}
	})

	t.Run("schema the model does not fit", func(t *testing.T) {
		// The schema has an attribute the model lacks: no codec, and the
		// framework's own refusal.
		st := codecTestState(codecTestSchema(types.StringType, true), map[string]any{"a": "v"})
		if _, err := codecFor(ctx, &codecTwoSchemasModel{}, st.Schema, st.Raw.Type()); err == nil {
			t.Fatal("codecFor made a codec for a schema with an attribute the model lacks")
		}
		var fwModel, m codecTwoSchemasModel
		want := st.Get(ctx, &fwModel)
		if diags := getState(ctx, st, &m); !want.HasError() || !diags.Equal(want) {
			t.Fatalf("getState: %v, want the framework's %v", diags, want)
		}
		out, fwOut := st, st
		want = fwOut.Set(ctx, &m)
		if diags := setState(ctx, &out, &m); !want.HasError() || !diags.Equal(want) {
			t.Fatalf("setState: %v, want the framework's %v", diags, want)
		}
	})

	t.Run("data not of the schema's type", func(t *testing.T) {
		// The state's data is of the strings' schema, its schema the
		// numbers': the codec built from the schema is not for the data,
		// and the framework reports the mismatch. (A model type of its
		// own, so that no codec for the data's type is cached yet.)
		type model codecTwoSchemasModel
		numS := codecTestSchema(types.Int64Type, false)
		st := tfsdk.State{Schema: numS, Raw: strSt.Raw}
		if _, err := codecFor(ctx, &model{}, st.Schema, st.Raw.Type()); !errors.Is(err, errCodecTypeMismatch) {
			t.Fatalf("codecFor: %v, want %v", err, errCodecTypeMismatch)
		}
		var fwModel, m model
		want := st.Get(ctx, &fwModel)
		if diags := getState(ctx, st, &m); !want.HasError() || !diags.Equal(want) {
			t.Fatalf("getState: %v, want the framework's %v", diags, want)
		}
		// The numbers' codec was kept for data of their type.
		numSt := codecTestState(numS, map[string]any{"a": 7.0})
		if c, err := codecFor(ctx, &model{}, numS, numSt.Raw.Type()); err != nil || !c.tfType.Equal(numSt.Raw.Type()) {
			t.Fatalf("codecFor of the numbers' data: %v, %v", c, err)
		}
	})
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

// validatingStringType is a custom string type that validates its values,
// as the framework does while converting them (xattr.TypeWithValidate).
type validatingStringType struct{ basetypes.StringType }

func (validatingStringType) Validate(context.Context, tftypes.Value, path.Path) diag.Diagnostics {
	return nil
}

// TestModelCodecLeavesValidatingTypesToTheFramework: a model with an
// attribute of a custom type that validates itself gets no codec, so the
// framework converts it and runs that validation; the framework's own
// types (whose Validate repeats checks the codec's conversion makes) do.
func TestModelCodecLeavesValidatingTypesToTheFramework(t *testing.T) {
	type model struct {
		Name types.String `tfsdk:"name"`
	}
	ctx := context.Background()
	tfType := tftypes.Object{AttributeTypes: map[string]tftypes.Type{"name": tftypes.String}}
	if _, err := newModelCodecOf(ctx, reflect.TypeFor[model](), tfType, map[string]attr.Type{"name": validatingStringType{}}); err == nil {
		t.Error("a codec was built for an attribute whose type validates its values")
	}
	if _, err := newModelCodecOf(ctx, reflect.TypeFor[model](), tfType, map[string]attr.Type{"name": types.StringType}); err != nil {
		t.Errorf("no codec for a framework string: %v", err)
	}
}
