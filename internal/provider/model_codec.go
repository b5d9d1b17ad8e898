package provider

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/attr/xattr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// modelCodec converts state and plan to and from model structs without the
// framework's per-call reflection, which compiles a regexp per field and
// rebuilds the schema type (see BenchmarkModelCodec). Models it cannot handle
// fall back to the framework.
type modelCodec struct {
	tfType tftypes.Object
	fields []codecField
}

type codecField struct {
	name  string
	index int
	typ   attr.Type
}

type schemaTyper interface {
	Type() attr.Type
}

// codecs is keyed by model type, then by schema type: a model used with a
// second schema must not be converted with the first one's type.
var codecs struct {
	sync.Mutex
	m map[reflect.Type][]codecEntry
}

type codecEntry struct {
	tfType tftypes.Type
	codec  *modelCodec
	err    error
}

// errCodecTypeMismatch leaves the check and its report to the framework.
var errCodecTypeMismatch = errors.New("the data is not of the schema's type")

// codecFor picks a cached codec by dataType alone: the framework builds every
// Raw from its schema. Comparing types avoids rebuilding the schema's type on
// every call, which is where the framework spends its time.
func codecFor(ctx context.Context, dst any, s schemaTyper, dataType tftypes.Type) (*modelCodec, error) {
	rt := reflect.TypeOf(dst)
	if rt == nil || rt.Kind() != reflect.Pointer || rt.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("model must be a pointer to a struct, got %T", dst)
	}
	if dataType == nil {
		return nil, errCodecTypeMismatch
	}
	rt = rt.Elem()
	codecs.Lock()
	defer codecs.Unlock()
	for _, e := range codecs.m[rt] {
		if e.tfType.Equal(dataType) {
			return e.codec, e.err
		}
	}
	tfType, c, err := newModelCodec(ctx, rt, s)
	if tfType == nil { // the schema's type is not an object
		return nil, err
	}
	if !tfType.Equal(dataType) {
		// Not cached: a schema's own data always finds its entry above.
		return nil, errCodecTypeMismatch
	}
	if codecs.m == nil {
		codecs.m = map[reflect.Type][]codecEntry{}
	}
	codecs.m[rt] = append(codecs.m[rt], codecEntry{tfType: tfType, codec: c, err: err})
	return c, err
}

func newModelCodec(ctx context.Context, rt reflect.Type, s schemaTyper) (tftypes.Type, *modelCodec, error) {
	st := s.Type()
	withAttrs, ok := st.(attr.TypeWithAttributeTypes)
	if !ok {
		return nil, nil, fmt.Errorf("schema type %T has no attribute types", st)
	}
	attrTypes := withAttrs.AttributeTypes()
	tfType, ok := st.TerraformType(ctx).(tftypes.Object)
	if !ok {
		return nil, nil, fmt.Errorf("schema's Terraform type is not an object")
	}
	c, err := newModelCodecOf(ctx, rt, tfType, attrTypes)
	return tfType, c, err
}

func newModelCodecOf(ctx context.Context, rt reflect.Type, tfType tftypes.Object, attrTypes map[string]attr.Type) (*modelCodec, error) {
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
		if err := validatedWhileConverted(ctx, name, typ); err != nil {
			return nil, err
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

// The framework's own value types re-check in Validate what
// ValueFromTerraform already checked.
const basetypesPkg = "github.com/hashicorp/terraform-plugin-framework/types/basetypes"

// validatedWhileConverted: the codec would skip a custom type's validation,
// so such a model is left to the framework.
func validatedWhileConverted(ctx context.Context, name string, typ attr.Type) error {
	//nolint:staticcheck // deprecated, but the framework still runs it while converting (internal/reflect)
	if _, ok := typ.(xattr.TypeWithValidate); ok && reflect.TypeOf(typ).PkgPath() != basetypesPkg {
		return fmt.Errorf("attribute %q's type %T validates its values", name, typ)
	}
	if v, ok := typ.ValueType(ctx).(xattr.ValidateableAttribute); ok && reflect.TypeOf(v).PkgPath() != basetypesPkg {
		return fmt.Errorf("attribute %q's value %T validates itself", name, v)
	}
	return nil
}

// conversionError matches the framework's own diagnostic.
func conversionError(diags *diag.Diagnostics, name, what string, err error) {
	diags.AddAttributeError(path.Root(name), "Value Conversion Error",
		fmt.Sprintf("An unexpected error was encountered trying to convert %s: %s. This is a bug in the provider; please report it.", what, err))
}

// decode leaves *dst unchanged if it fails.
func (c *modelCodec) decode(ctx context.Context, raw tftypes.Value, dst any) diag.Diagnostics {
	var diags diag.Diagnostics
	var vals map[string]tftypes.Value
	if err := raw.As(&vals); err != nil {
		diags.AddError("Value Conversion Error",
			fmt.Sprintf("An unexpected error was encountered trying to read the object into %T: %s. This is a bug in the provider; please report it.", dst, err))
		return diags
	}
	rv := reflect.ValueOf(dst).Elem()
	m := reflect.New(rv.Type()).Elem()
	for _, f := range c.fields {
		v, err := f.typ.ValueFromTerraform(ctx, vals[f.name])
		if err != nil {
			conversionError(&diags, f.name, fmt.Sprintf("the Terraform value of attribute %q into %s", f.name, m.Field(f.index).Type()), err)
			continue
		}
		m.Field(f.index).Set(reflect.ValueOf(v))
	}
	if diags.HasError() {
		return diags
	}
	rv.Set(m)
	return nil
}

func (c *modelCodec) encode(ctx context.Context, src any) (tftypes.Value, diag.Diagnostics) {
	var diags diag.Diagnostics
	rv := reflect.ValueOf(src).Elem()
	vals := make(map[string]tftypes.Value, len(c.fields))
	for _, f := range c.fields {
		av, ok := rv.Field(f.index).Interface().(attr.Value)
		if !ok { // newModelCodecOf checked the field's type
			conversionError(&diags, f.name, fmt.Sprintf("field %s of %T", rv.Type().Field(f.index).Name, src), errors.New("it is not a framework value"))
			continue
		}
		v, err := av.ToTerraformValue(ctx)
		if err != nil {
			conversionError(&diags, f.name, fmt.Sprintf("the value of attribute %q into a Terraform value", f.name), err)
			continue
		}
		if at := c.tfType.AttributeTypes[f.name]; !v.Type().UsableAs(at) {
			conversionError(&diags, f.name, fmt.Sprintf("the value of attribute %q into a Terraform value", f.name),
				fmt.Errorf("it is of type %s, but the schema's type is %s", v.Type(), at))
			continue
		}
		vals[f.name] = v
	}
	if diags.HasError() {
		return tftypes.Value{}, diags
	}
	if err := tftypes.ValidateValue(c.tfType, vals); err != nil {
		diags.AddError("Value Conversion Error",
			fmt.Sprintf("An unexpected error was encountered trying to write %T as a Terraform value: %s. This is a bug in the provider; please report it.", src, err))
		return tftypes.Value{}, diags
	}
	return tftypes.NewValue(c.tfType, vals), nil
}

// getState, getPlan, setState and setPlan fall back to the framework when the
// model has no codec for the data's type.
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

type frameworkConversion func(ctx context.Context, model any) diag.Diagnostics

// A null or unknown object goes to the framework, for its own diagnostic.
func readModel(ctx context.Context, s schemaTyper, raw tftypes.Value, dst any, fallback frameworkConversion) diag.Diagnostics {
	if raw.IsNull() || !raw.IsKnown() {
		return fallback(ctx, dst)
	}
	c, err := codecFor(ctx, dst, s, raw.Type())
	if err != nil {
		return fallback(ctx, dst)
	}
	return c.decode(ctx, raw, dst)
}

// A zero *raw has no type and goes to the framework.
func writeModel(ctx context.Context, s schemaTyper, raw *tftypes.Value, src any, fallback frameworkConversion) diag.Diagnostics {
	c, err := codecFor(ctx, src, s, raw.Type())
	if err != nil {
		return fallback(ctx, src)
	}
	v, diags := c.encode(ctx, src)
	if diags.HasError() {
		return diags
	}
	*raw = v
	return nil
}
