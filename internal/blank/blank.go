// Package blank holds the coordinator's two rules for "blank" (CONTRACT §3).
// They come from two libraries and differ, and Go's strings.TrimSpace matches
// neither: request-body fields (requestedBy, reason) are blank by Java's
// String.trim(), path names (streamPrefix, consumerGroup) by Kotlin's
// isBlank(). The provider's validators, its client and the in-repo
// coordinator all decide blankness here, so they cannot drift apart.
package blank

import "strings"

// Trim is Java's String.trim(): it strips every leading and trailing code
// point up to and including U+0020 (the C0 controls and the space), and
// nothing else (a no-break space stays).
func Trim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// Body reports whether a request-body field is blank for the coordinator's
// @NotBlank: Java's trim() leaves nothing. "\u001c" and "\t" are blank;
// "\u00a0" and "\u3000" are not.
func Body(s string) bool { return Trim(s) == "" }

// Name reports whether a stream prefix or consumer group name is blank for
// the coordinator: Kotlin's isBlank(), every character whitespace by
// Char.isWhitespace(). The empty name is blank.
func Name(s string) bool {
	for _, r := range s {
		if !NameSpace(r) {
			return false
		}
	}
	return true
}

// NameSpace is Kotlin's Char.isWhitespace() on the JVM:
// Character.isWhitespace(c) || Character.isSpaceChar(c).
func NameSpace(r rune) bool {
	switch {
	case r >= 0x09 && r <= 0x0d, r >= 0x1c && r <= 0x20:
		return true
	case r == 0xa0, r == 0x1680, r >= 0x2000 && r <= 0x200a, r == 0x2028, r == 0x2029, r == 0x202f, r == 0x205f, r == 0x3000:
		return true
	}
	return false
}
