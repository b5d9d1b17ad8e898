package client

import "strings"

// EndpointHasUserInfo reports whether endpoint carries user info
// ("user:password@" or "user@") before its host. Any "@" counts: a password
// may hold an unescaped "/", "?" or "#", which would make url.Parse read the
// rest of it as a path, query or fragment and miss the user info, and no
// coordinator base URL needs an "@".
func EndpointHasUserInfo(endpoint string) bool { return strings.Contains(endpoint, "@") }

// RedactEndpoint is endpoint as messages and logs may show it: without user
// info (name and password alike, unlike url.URL.Redacted, which keeps the
// name), query or fragment, e.g. "https://user:secret@host:8443/x?y" gives
// "https://host:8443/x". It works on strings url.Parse refuses too, so it
// is safe to quote whatever the user wrote.
func RedactEndpoint(endpoint string) string {
	endpoint = strings.TrimSpace(endpoint)
	prefix, rest := "", endpoint
	if i := strings.Index(endpoint, "://"); i >= 0 {
		prefix, rest = endpoint[:i+3], endpoint[i+3:]
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		rest = rest[at+1:]
	}
	if i := strings.IndexAny(rest, "?#"); i >= 0 {
		rest = rest[:i]
	}
	return prefix + rest
}
