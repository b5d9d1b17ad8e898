package provider

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// The resources' state and plan are read into and written from their model
// structs on every plan (Read, ModifyPlan) of every instance. The
// framework's tfsdk.State.Get/Set do that by reflection that, per struct
// field and per call, compiles a regular expression to check the field's
// tag (terraform-plugin-framework v1.19, internal/reflect/helpers.go,
// isValidFieldName) and rebuilds the schema's object type: 15% of the
// provider's processor time in a plan of 400 resources (BENCHMARKS.md). A
// Get and a Set of a group's state take 607 µs that way and 49 µs here
// (BenchmarkModelCodec).
//
// A modelCodec does the same conversion with what it worked out once per
// model type: the field of each attribute and the attribute's type. It
// supports models whose fields are all framework values (attr.Value
// implementations) tagged `tfsdk:"name"`, one per attribute and block of
// the schema, which is what the framework requires too; for anything else
// codecFor fails and the helpers below fall back to the framework.
// TestModelCodecMatchesFramework checks both resources' models against the
// framework's own conversion.
type modelCodec struct {
	tfType tftypes.Object
	fields []codecField
}

type codecField struct {
	name  string
	index int
	typ   attr.Type
}

// schemaTyper is what tfsdk.State.Schema and tfsdk.Plan.Schema offer.
type schemaTyper interface {
	Type() attr.Type
}

// codecs caches, per model struct type, its codec or why it has none.
var codecs sync.Map // reflect.Type → codecEntry

type codecEntry struct {
	codec *modelCodec
	err   error
}

// codecFor returns the codec of the model type that dst points to, built
// from the schema on first use. A model type belongs to one schema (one
// resource type), so the model type alone keys the cache.
func codecFor(ctx context.Context, dst any, s schemaTyper) (*modelCodec, error) {
	rt := reflect.TypeOf(dst)
	if rt == nil || rt.Kind() != reflect.Pointer || rt.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("model must be a pointer to a struct, got %T", dst)
	}
	rt = rt.Elem()
	if e, ok := codecs.Load(rt); ok {
		if e, ok := e.(codecEntry); ok {
			return e.codec, e.err
		}
	}
	c, err := newModelCodec(ctx, rt, s)
	codecs.Store(rt, codecEntry{codec: c, err: err})
	return c, err
}

func newModelCodec(ctx context.Context, rt reflect.Type, s schemaTyper) (*modelCodec, error) {
	st := s.Type()
	withAttrs, ok := st.(attr.TypeWithAttributeTypes)
	if !ok {
		return nil, fmt.Errorf("schema type %T has no attribute types", st)
	}
	attrTypes := withAttrs.AttributeTypes()
	tfType, ok := st.TerraformType(ctx).(tftypes.Object)
	if !ok {
		return nil, fmt.Errorf("schema's Terraform type is not an object")
	}
	c := &modelCodec{tfType: tfType}
	seen := make(map[string]bool, len(attrTypes))
	for i := range rt.NumField() {
		f := rt.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("tfsdk"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			return nil, fmt.Errorf("field %s of %s has no usable tfsdk tag", f.Name, rt)
		}
		typ, ok := attrTypes[name]
		if !ok {
			return nil, fmt.Errorf("field %s of %s names %q, which the schema does not have", f.Name, rt, name)
		}
		if vt := reflect.TypeOf(typ.ValueType(ctx)); vt != f.Type {
			return nil, fmt.Errorf("field %s of %s is %s, but attribute %q holds %s", f.Name, rt, f.Type, name, vt)
		}
		seen[name] = true
		c.fields = append(c.fields, codecField{name: name, index: i, typ: typ})
	}
	for name := range attrTypes {
		if !seen[name] {
			return nil, fmt.Errorf("%s has no field for attribute %q", rt, name)
		}
	}
	return c, nil
}

// decode sets *dst's fields from raw, an object of the schema.
func (c *modelCodec) decode(ctx context.Context, raw tftypes.Value, dst any) error {
	if raw.IsNull() || !raw.IsKnown() {
		return fmt.Errorf("cannot read a null or unknown object into %T", dst)
	}
	var vals map[string]tftypes.Value
	if err := raw.As(&vals); err != nil {
		return err
	}
	rv := reflect.ValueOf(dst).Elem()
	for _, f := range c.fields {
		v, err := f.typ.ValueFromTerraform(ctx, vals[f.name])
		if err != nil {
			return fmt.Errorf("attribute %q: %w", f.name, err)
		}
		rv.Field(f.index).Set(reflect.ValueOf(v))
	}
	return nil
}

// encode returns the object *src describes.
func (c *modelCodec) encode(ctx context.Context, src any) (tftypes.Value, error) {
	rv := reflect.ValueOf(src).Elem()
	vals := make(map[string]tftypes.Value, len(c.fields))
	for _, f := range c.fields {
		av, ok := rv.Field(f.index).Interface().(attr.Value)
		if !ok { // newModelCodec checked the field's type
			return tftypes.Value{}, fmt.Errorf("attribute %q: field is not a framework value", f.name)
		}
		v, err := av.ToTerraformValue(ctx)
		if err != nil {
			return tftypes.Value{}, fmt.Errorf("attribute %q: %w", f.name, err)
		}
		vals[f.name] = v
	}
	if err := tftypes.ValidateValue(c.tfType, vals); err != nil {
		return tftypes.Value{}, err
	}
	return tftypes.NewValue(c.tfType, vals), nil
}

func codecDiag(verb string, dst any, err error) diag.Diagnostics {
	var diags diag.Diagnostics
	diags.AddError("Provider error: cannot "+verb+" the resource's data",
		fmt.Sprintf("Converting between %T and Terraform's data failed: %s. This is a bug in the provider; please report it.", dst, err))
	return diags
}

// getState, getPlan, setState and setPlan are the framework's
// req.State.Get, req.Plan.Get, resp.State.Set and resp.Plan.Set through the
// model's codec, or the framework's own when the model has none.
func getState(ctx context.Context, st tfsdk.State, dst any) diag.Diagnostics {
	return readModel(ctx, st.Schema, st.Raw, dst, st.Get)
}

func getPlan(ctx context.Context, p tfsdk.Plan, dst any) diag.Diagnostics {
	return readModel(ctx, p.Schema, p.Raw, dst, p.Get)
}

func setState(ctx context.Context, st *tfsdk.State, src any) diag.Diagnostics {
	return writeModel(ctx, st.Schema, &st.Raw, src, st.Set)
}

func setPlan(ctx context.Context, p *tfsdk.Plan, src any) diag.Diagnostics {
	return writeModel(ctx, p.Schema, &p.Raw, src, p.Set)
}

// frameworkConversion is a tfsdk Get or Set method.
type frameworkConversion func(ctx context.Context, model any) diag.Diagnostics

func readModel(ctx context.Context, s schemaTyper, raw tftypes.Value, dst any, fallback frameworkConversion) diag.Diagnostics {
	c, err := codecFor(ctx, dst, s)
	if err != nil {
		return fallback(ctx, dst)
	}
	if err := c.decode(ctx, raw, dst); err != nil {
		return codecDiag("read", dst, err)
	}
	return nil
}

func writeModel(ctx context.Context, s schemaTyper, raw *tftypes.Value, src any, fallback frameworkConversion) diag.Diagnostics {
	c, err := codecFor(ctx, src, s)
	if err != nil {
		return fallback(ctx, src)
	}
	v, err := c.encode(ctx, src)
	if err != nil {
		return codecDiag("write", src, err)
	}
	*raw = v
	return nil
}
