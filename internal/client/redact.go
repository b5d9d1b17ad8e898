package client

import (
	"encoding/json"
	"html"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// redactor is the one place where text from elsewhere (a response body, a
// header, a transport error quoting the wire) is made fit for an error
// message: a proxy or WAF page may echo the refused request, with its
// Authorization header and login body. It removes the secrets it was given,
// in the forms an echo may take (as sent, JSON-, URL- or HTML-escaped), and
// whatever follows a credential's name (Basic/Bearer, "password": …,
// token=…), so that secrets it was not given are caught too. Its zero value
// applies the patterns only.
type redactor struct {
	literals *strings.Replacer
}

// redacted replaces every secret.
const redacted = "***"

// authSchemeValue is an Authorization value; group 3 is the credential.
var authSchemeValue = regexp.MustCompile(`(?i)\b(basic|bearer)(\s+)([A-Za-z0-9+/=._~-]+)`)

// proseWord is a lowercase word after "Basic" or "Bearer" ("Bearer token",
// `Basic realm=…`): prose, not a credential.
var proseWord = regexp.MustCompile(`^[a-z]+=?$`)

// credentialPatterns match a credential by what precedes it; group 1 is kept.
var credentialPatterns = []*regexp.Regexp{
	// An HTML-escaped JSON value ends at the first quote entity that is not
	// JSON-escaped: \&quot; and \&#34; are a quote inside the value.
	regexp.MustCompile(`(?i)((?:"|\\"|&quot;|&#34;)(?:password|token|access_?token|authorization)(?:"|\\"|&quot;|&#34;)\s*:\s*)` +
		`(?:"(?:[^"\\]|\\.)*"|\\"(?:[^"\\]|\\[^"])*\\"|` +
		`&quot;(?:\\\\|\\&quot;|\\&#34;|.)*?&quot;|&#34;(?:\\\\|\\&quot;|\\&#34;|.)*?&#34;)`),
	regexp.MustCompile(`(?i)\b((?:password|passwd|token|access_?token)=)[^&\s"'<]+`),
}

// newRedactor knows secrets: passwords, tokens and Basic credentials.
func newRedactor(secrets ...string) redactor {
	var pairs []string
	seen := map[string]bool{"": true}
	add := func(s string) {
		// Very short strings would mangle every message and prove nothing.
		if len(s) >= 3 && !seen[s] {
			seen[s] = true
			pairs = append(pairs, s, redacted)
		}
	}
	for _, s := range secrets {
		quoted, _ := json.Marshal(s)
		var plain strings.Builder
		enc := json.NewEncoder(&plain)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(s)
		// As sent and JSON-escaped (a body), each also as an HTML page, a
		// URL (a Location) or Go's %q (net/http quoting a malformed answer)
		// quotes it.
		for _, v := range []string{s, string(quoted[1 : len(quoted)-1]), strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(plain.String()), `"`), `"`)} {
			for _, form := range htmlForms(v) {
				add(form)
			}
			goQuoted := strconv.Quote(v)
			add(goQuoted[1 : len(goQuoted)-1])
			add(url.QueryEscape(v))
			add(url.PathEscape(v))
		}
	}
	if len(pairs) == 0 {
		return redactor{}
	}
	// The longest form first: the replacer tries the pairs in order at each
	// position, and a shorter form may be the start of a longer one.
	type pair struct{ from, to string }
	ps := make([]pair, 0, len(pairs)/2)
	for i := 0; i < len(pairs); i += 2 {
		ps = append(ps, pair{pairs[i], pairs[i+1]})
	}
	sort.SliceStable(ps, func(i, j int) bool { return len(ps[i].from) > len(ps[j].from) })
	pairs = pairs[:0]
	for _, p := range ps {
		pairs = append(pairs, p.from, p.to)
	}
	return redactor{literals: strings.NewReplacer(pairs...)}
}

// htmlForms is s as is and as the HTML escapers in use write it: Go's
// (&#34; &#39;), and the &quot; / &#x27; / &apos; styles of others.
func htmlForms(s string) []string {
	esc := html.EscapeString(s)
	return []string{s, esc,
		strings.NewReplacer("&#34;", "&quot;", "&#39;", "&#x27;").Replace(esc),
		strings.NewReplacer("&#34;", "&quot;", "&#39;", "&apos;").Replace(esc),
		strings.NewReplacer("&#39;", "&#x27;").Replace(esc)}
}

// text returns s with every secret replaced.
func (r redactor) text(s string) string {
	if r.literals != nil {
		s = r.literals.Replace(s)
	}
	s = authSchemeValue.ReplaceAllStringFunc(s, func(m string) string {
		if g := authSchemeValue.FindStringSubmatch(m); !proseWord.MatchString(g[3]) {
			return g[1] + g[2] + redacted
		}
		return m
	})
	for _, re := range credentialPatterns {
		s = re.ReplaceAllString(s, "${1}"+redacted)
	}
	return s
}

// excerpt redacts b, then collapses whitespace and cuts it to maxExcerpt
// bytes on a rune boundary, so an HTML error page becomes a readable
// one-liner. Redacting first means a cut cannot leave half a secret.
func (r redactor) excerpt(b []byte) string {
	s := strings.Join(strings.Fields(r.text(strings.ToValidUTF8(string(b), "?"))), " ")
	if len(s) <= maxExcerpt {
		return s
	}
	cut := maxExcerpt
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// redactedError shows err's text redacted; errors.As and errors.Is still
// see err.
type redactedError struct {
	err error
	r   redactor
}

func (e *redactedError) Error() string { return e.r.text(e.err.Error()) }
func (e *redactedError) Unwrap() error { return e.err }

// redactFor is the redactor of one call: the client's credentials, the
// current login token, and the call's own (a login's password and header).
func (c *Client) redactFor(cl *call) redactor {
	if c.auth == nil {
		return redactor{}
	}
	secrets := c.auth.secrets()
	if cl.fixedAuth != nil {
		secrets = append(secrets, cl.fixedAuth.secret)
	}
	return newRedactor(append(secrets, cl.secrets...)...)
}
