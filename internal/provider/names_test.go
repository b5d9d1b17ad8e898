package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

func TestParseGroupID(t *testing.T) {
	for id, want := range map[string][2]string{
		"orders/order-service":    {"orders", "order-service"},
		"Legacy Orders/svc@v2":    {"Legacy Orders", "svc@v2"},
		"주문/결제-서비스":               {"주문", "결제-서비스"},
		"p/{g}":                   {"p", "{g}"}, // braces are a stream-prefix rule only
		"100%/a?b#c":              {"100%", "a?b#c"},
		"a.b/..c":                 {"a.b", "..c"},
		" padded / group ":        {" padded ", " group "},
		"orders%41/order%20group": {"orders%41", "order%20group"}, // raw names, never decoded
	} {
		p, g, err := parseGroupID(id)
		if err != nil || p != want[0] || g != want[1] {
			t.Errorf("parseGroupID(%q) = %q, %q, %v; want %q, %q", id, p, g, err, want[0], want[1])
		}
	}
	for _, bad := range []string{"", "orders", "orders/", "/g", "a/b/c", "o{x}/g", "p/g;x", "./g", "p/..", " /g", "p%2fq/g", "p/%2F"} {
		if _, _, err := parseGroupID(bad); err == nil || !strings.Contains(err.Error(), "{stream_prefix}/{consumer_group}") {
			t.Errorf("parseGroupID(%q) error = %v; want one showing the expected form", bad, err)
		}
	}
}

func TestCheckName(t *testing.T) {
	for _, ok := range []string{"orders", "a.b_c:d-e", "X1", "svc@v2", "Legacy Orders", "주문", "100%", "a?b#c", "a+b", "...",
		"ünïcödé", "tab\there", strings.Repeat("a", 5000),
		"\u0085", "\u200b"} { // not white space for Kotlin's isBlank() (strings.TrimSpace strips U+0085)
		for _, kind := range []string{kindStreamPrefix, kindConsumerGroup} {
			if msg := checkName(kind, ok); msg != "" {
				t.Errorf("checkName(%s, %q) = %q; want ok", kind, ok, msg)
			}
		}
	}
	if msg := checkName(kindConsumerGroup, "g{1}"); msg != "" {
		t.Errorf("a consumer group may contain braces; got %q", msg)
	}
	for bad, want := range map[string]string{
		"":     "must not be empty",
		"  \t": "blank",
		// Kotlin's isBlank(), as the coordinator decides for names
		// (CONTRACT §3): U+001C–U+001F and the Unicode spaces are blank.
		"\u001c\u001f": "blank",
		"\u00a0\u3000": "blank",
		"a{b}":         "brace",
		"a}":           "brace",
		"a/b":          "'/'",
		"a;b":          "';'",
		"a%2Fb":        "%2F",
		"a%2fb":        "%2F",
		".":            "dot segment",
		"..":           "dot segment",
	} {
		if msg := checkName(kindStreamPrefix, bad); !strings.Contains(msg, want) {
			t.Errorf("checkName(stream prefix, %q) = %q; want it to mention %q", bad, msg, want)
		}
	}
}

func TestUnconventionalNameWarning(t *testing.T) {
	for _, ok := range []string{"orders", "a.b_c:d-e", strings.Repeat("a", 200)} {
		if w := unconventionalNameWarning(kindStreamPrefix, ok); w != "" {
			t.Errorf("unconventionalNameWarning(%q) = %q; want none", ok, w)
		}
	}
	for name, want := range map[string]string{
		"svc@v2":                 "characters outside",
		"Legacy Orders":          "characters outside",
		"주문":                     "characters outside",
		strings.Repeat("a", 201): "201 characters long",
		strings.Repeat("주", 201): "characters outside letters, digits, '.', '_', ':' and '-' and it is 201 characters",
	} {
		if w := unconventionalNameWarning(kindConsumerGroup, name); !strings.Contains(w, want) || !strings.Contains(w, "consumer group") {
			t.Errorf("unconventionalNameWarning(%q) = %q; want it to mention %q", name, w, want)
		}
	}
	diags := newNameWarnings(types.StringValue("Legacy Orders"), types.StringValue("svc"))
	if diags.HasError() || diags.WarningsCount() != 1 {
		t.Fatalf("newNameWarnings: %v", diags)
	}
	if d, ok := diags[0].(interface{ Path() path.Path }); !ok || !d.Path().Equal(path.Root("stream_prefix")) {
		t.Errorf("warning not on stream_prefix: %v", diags[0])
	}
	for _, d := range [][2]types.String{
		{types.StringValue("orders"), types.StringValue("svc")},
		{types.StringUnknown(), types.StringNull()},
		{types.StringValue("a/b"), types.StringValue(";")}, // invalid: the validator's error says it all
	} {
		if diags := newNameWarnings(d[0], d[1]); len(diags) != 0 {
			t.Errorf("newNameWarnings(%v, %v) = %v; want none", d[0], d[1], diags)
		}
	}
}

func TestNameValidator(t *testing.T) {
	for _, tc := range []struct {
		v       validator.String
		value   string
		wantErr bool
	}{
		{streamPrefixValidator, "Legacy Orders", false},
		{streamPrefixValidator, "p{x}", true},
		{consumerGroupValidator, "g{x}", false},
		{consumerGroupValidator, "..", true},
		{consumerGroupValidator, "주문", false},
	} {
		resp := &validator.StringResponse{}
		tc.v.ValidateString(context.Background(), validator.StringRequest{Path: path.Root("x"), ConfigValue: types.StringValue(tc.value)}, resp)
		if resp.Diagnostics.HasError() != tc.wantErr || resp.Diagnostics.WarningsCount() != 0 {
			t.Errorf("%s validator on %q: %v; want error %v and no warning", tc.v.Description(context.Background()), tc.value, resp.Diagnostics, tc.wantErr)
		}
	}
}

// FuzzParseGroupID checks both directions of the import id: every id it
// accepts is exactly groupID of two valid names, and every pair of valid
// names survives groupID then parseGroupID unchanged.
func FuzzParseGroupID(f *testing.F) {
	for _, s := range [][2]string{{"orders/order-service", "orders"}, {"a/b/c", "x"}, {"", ""}, {"/", "/"}, {"ü/ö", "주문"},
		{"p/{g}", "{g}"}, {"Legacy Orders", "svc@v2"}, {"..", "."}, {"%2F", "a;b"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		if p, g, err := parseGroupID(a); err == nil {
			if groupID(p, g) != a {
				t.Fatalf("round trip of %q gave %q", a, groupID(p, g))
			}
			if checkName(kindStreamPrefix, p) != "" || checkName(kindConsumerGroup, g) != "" {
				t.Fatalf("parseGroupID(%q) accepted an invalid name", a)
			}
		}
		if checkName(kindStreamPrefix, a) != "" || checkName(kindConsumerGroup, b) != "" {
			return
		}
		p, g, err := parseGroupID(groupID(a, b))
		if err != nil || p != a || g != b {
			t.Fatalf("names %q and %q: parseGroupID(%q) = %q, %q, %v", a, b, groupID(a, b), p, g, err)
		}
	})
}
