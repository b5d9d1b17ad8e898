package blank

import (
	"testing"
	"unicode/utf16"
)

// The two rules on the values CONTRACT §3 names, and the ones Go's
// strings.TrimSpace gets wrong either way.
func TestBodyAndName(t *testing.T) {
	for _, tc := range []struct {
		in         string
		body, name bool
	}{
		{"", true, true},
		{" ", true, true},
		{"\t\n\v\f\r", true, true},
		{"\u001c", true, true}, // TrimSpace keeps it: the server refuses it in a body and a name
		{"\u001f\u0000\u0001", true, false},
		{"\u00a0", false, true},       // TrimSpace strips it: the server accepts it in a body
		{"\u00a0\u00a0", false, true}, // a reason of no-break spaces is accepted
		{"\u3000", false, true},
		{"\u2028\u2029\u202f\u205f\u1680\u2000\u200a", false, true},
		{"\u0085", false, false}, // NEL: TrimSpace strips it, Java and Kotlin keep it
		{"\u180e", false, false},
		{"\u200b", false, false},
		{"\ufeff", false, false},
		{" x ", false, false},
		{"ops: rotate", false, false},
	} {
		if got := Body(tc.in); got != tc.body {
			t.Errorf("Body(%+q) = %v, want %v", tc.in, got, tc.body)
		}
		if got := Name(tc.in); got != tc.name {
			t.Errorf("Name(%+q) = %v, want %v", tc.in, got, tc.name)
		}
	}
	if got := Trim("\u001c\u00a0 x\t\u0000"); got != "\u00a0 x" {
		t.Errorf("Trim = %+q", got)
	}
}

// javaTrimEmpty and kotlinIsBlank restate the server's rules over UTF-16
// code units, as the JVM sees the string.
func javaTrimEmpty(s string) bool {
	for _, u := range utf16.Encode([]rune(s)) {
		if u > ' ' {
			return false
		}
	}
	return true
}

func kotlinIsBlank(s string) bool {
	whitespace := map[uint16]bool{0x20: true, 0xa0: true, 0x1680: true, 0x2028: true, 0x2029: true, 0x202f: true, 0x205f: true, 0x3000: true}
	for c := uint16(0x09); c <= 0x0d; c++ {
		whitespace[c] = true
	}
	for c := uint16(0x1c); c <= 0x1f; c++ {
		whitespace[c] = true
	}
	for c := uint16(0x2000); c <= 0x200a; c++ {
		whitespace[c] = true
	}
	for _, u := range utf16.Encode([]rune(s)) {
		if !whitespace[u] {
			return false
		}
	}
	return true
}

// FuzzBlankRules: Body and Name decide exactly as the server's Java and
// Kotlin rules do, for any string.
func FuzzBlankRules(f *testing.F) {
	for _, s := range []string{"", " ", "\u001c", "\u00a0", "\u0085", "x", "\u3000a", "\xff", "\t\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if Body(s) != javaTrimEmpty(s) {
			t.Fatalf("Body(%+q) = %v, Java's trim().isEmpty() = %v", s, Body(s), javaTrimEmpty(s))
		}
		if Name(s) != kotlinIsBlank(s) {
			t.Fatalf("Name(%+q) = %v, Kotlin's isBlank() = %v", s, Name(s), kotlinIsBlank(s))
		}
	})
}
