package provider

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/blank"
)

func validateString(v validator.String, value types.String) (errs []string) {
	req := validator.StringRequest{Path: path.Root("attr"), ConfigValue: value}
	var resp validator.StringResponse
	v.ValidateString(context.Background(), req, &resp)
	for _, d := range resp.Diagnostics {
		errs = append(errs, d.Summary()+": "+d.Detail())
	}
	return errs
}

// The not-blank validator refuses exactly what the coordinator's @NotBlank
// refuses in a body field (Java's String.trim() leaves nothing: blank.Body),
// rune by rune over the Basic Multilingual Plane and some beyond, and says
// why; null and unknown values are not checked.
func TestNotBlankValidatorIsJavaTrim(t *testing.T) {
	runes := []rune{0x10000, 0x1F600, 0xE0020, utf8.MaxRune}
	for r := rune(0); r < 0x10000; r++ {
		runes = append(runes, r)
	}
	for _, r := range runes {
		if !utf8.ValidRune(r) {
			continue
		}
		s := string(r)
		want := r <= ' '
		if blank.Body(s) != want {
			t.Errorf("blank.Body(%U) = %v", r, !want)
		}
		if errs := validateString(notBlankValidator, types.StringValue(s)); (len(errs) > 0) != want {
			t.Errorf("%U: blank %v, diagnostics %q", r, want, errs)
		}
	}
	for _, v := range []types.String{types.StringNull(), types.StringUnknown(), types.StringValue("ops: rotate"), types.StringValue(" x "),
		types.StringValue("\u00a0\u00a0"), types.StringValue("\u3000"), types.StringValue("\u0085")} {
		if errs := validateString(notBlankValidator, v); len(errs) != 0 {
			t.Errorf("%s: %q", v, errs)
		}
	}
	for _, v := range []string{"", " \t\n\v\f\r", "\u001c", "\u0000\u001f "} {
		errs := validateString(notBlankValidator, types.StringValue(v))
		if len(errs) != 1 || !strings.Contains(errs[0], "Attribute attr must not be blank") ||
			!strings.Contains(errs[0], "rejects a blank reason or requestedBy with 400 INVALID_REQUEST") ||
			!strings.Contains(errs[0], "say who asks for this operation and why") || !strings.Contains(errs[0], "up to U+0020") {
			t.Errorf("%q: %q", v, errs)
		}
	}
}

// request_id_prefix and run_id: 1 to 64 letters, digits, '.', '_', ':' or
// '-'; null and unknown values are not checked.
func TestRequestIDPartValidator(t *testing.T) {
	for _, v := range []types.String{types.StringNull(), types.StringUnknown(), types.StringValue("run-42"),
		types.StringValue("a.b_c:d-E9"), types.StringValue(strings.Repeat("x", 64))} {
		if errs := validateString(requestIDPartValidator, v); len(errs) != 0 {
			t.Errorf("%s: %q", v, errs)
		}
	}
	for _, v := range []string{"", "run 42", "run/42", strings.Repeat("x", 65), "주문"} {
		errs := validateString(requestIDPartValidator, types.StringValue(v))
		if len(errs) != 1 || !strings.Contains(errs[0], "Attribute attr "+requestIDPartRule+", got: "+v) ||
			!strings.Contains(errs[0], "1 to 64 letters, digits, '.', '_', ':' or '-', so that request ids stay one clean token in the audit log") {
			t.Errorf("%q: %q", v, errs)
		}
	}
}
