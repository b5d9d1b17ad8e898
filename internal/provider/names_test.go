package provider

import (
	"strings"
	"testing"
)

func TestParseGroupID(t *testing.T) {
	p, g, err := parseGroupID("orders/order-service")
	if err != nil || p != "orders" || g != "order-service" {
		t.Fatalf("parseGroupID = %q, %q, %v", p, g, err)
	}
	for _, bad := range []string{"", "orders", "orders/", "/g", "a/b/c", "or ders/g", "o{x}/g", "p/g*", "p/g;x"} {
		if _, _, err := parseGroupID(bad); err == nil || !strings.Contains(err.Error(), "{stream_prefix}/{consumer_group}") {
			t.Errorf("parseGroupID(%q) error = %v; want one showing the expected form", bad, err)
		}
	}
}

func TestCheckName(t *testing.T) {
	for _, ok := range []string{"orders", "a.b_c:d-e", "X1"} {
		if msg := checkName("stream prefix", ok); msg != "" {
			t.Errorf("checkName(%q) = %q; want ok", ok, msg)
		}
	}
	for bad, want := range map[string]string{
		"":                       "empty",
		"a{b}":                   "brace",
		"a/b":                    "'/'",
		"a b":                    "may only contain",
		"*":                      "may only contain",
		strings.Repeat("a", 201): "at most 200",
	} {
		if msg := checkName("stream prefix", bad); !strings.Contains(msg, want) {
			t.Errorf("checkName(%q) = %q; want it to mention %q", bad, msg, want)
		}
	}
}

func FuzzParseGroupID(f *testing.F) {
	for _, s := range []string{"orders/order-service", "a/b/c", "", "/", "ü/ö", "p/{g}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) {
		p, g, err := parseGroupID(id)
		if err != nil {
			return
		}
		if groupID(p, g) != id {
			t.Fatalf("round trip of %q gave %q", id, groupID(p, g))
		}
		if checkName("p", p) != "" || checkName("g", g) != "" {
			t.Fatalf("parseGroupID(%q) accepted an invalid name", id)
		}
	})
}
