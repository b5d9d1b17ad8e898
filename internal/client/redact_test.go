package client

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"
)

// Secrets with characters that every echo escapes differently.
const (
	echoPassword  = `pw"<&>\'/?%+1-main`
	echoEphemeral = `eph"<&>\2-token-pw`
	echoToken     = "tok.eyJhbGciOi.static-3"
	echoIssued    = "tok.eyJzdWIiOi.x9q2z-4"
)

// echoOf is what a WAF or proxy page may quote of the refused request: the
// request line, the Authorization header and the body.
func echoOf(r *http.Request) string {
	b, _ := io.ReadAll(r.Body)
	return "echo: " + r.Method + " " + r.URL.String() + " Authorization: " + r.Header.Get("Authorization") + " body: " + string(b)
}

// echoPaths are every way an answer's text reaches an error: each status
// class, each body shape, a redirect's Location, an unreadable 2xx, a
// malformed answer quoted by net/http, and the plain-HTTP-to-TLS 400.
var echoPaths = map[string]func(w http.ResponseWriter, r *http.Request){
	"400 text": func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(400); _, _ = io.WriteString(w, echoOf(r)) },
	"401 text": func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(401); _, _ = io.WriteString(w, echoOf(r)) },
	"403 text": func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(403); _, _ = io.WriteString(w, echoOf(r)) },
	"500 text": func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(500); _, _ = io.WriteString(w, echoOf(r)) },
	"502 html": func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(502)
		_, _ = io.WriteString(w, "<html><body><pre>"+html.EscapeString(echoOf(r))+"</pre></body></html>")
	},
	"502 html, &quot; style": func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(502)
		esc := strings.NewReplacer("&#34;", "&quot;", "&#39;", "&#x27;").Replace(html.EscapeString(echoOf(r)))
		_, _ = io.WriteString(w, "<html><body><pre>"+esc+"</pre></body></html>")
	},
	"503 json message": func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 503, map[string]string{"message": echoOf(r)})
	},
	"409 coordinator json": func(w http.ResponseWriter, r *http.Request) {
		writeCoordError(w, 409, CodeInvalidRequest, echoOf(r))
	},
	"429 json": func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "1")
		writeCoordError(w, 429, CodeRateLimitExceeded, echoOf(r))
	},
	"json in json": func(w http.ResponseWriter, r *http.Request) {
		inner, _ := json.Marshal(map[string]string{"password": echoPassword, "authorization": r.Header.Get("Authorization")})
		writeJSON(w, 400, map[string]string{"message": "echo: " + string(inner) + " " + echoOf(r)})
	},
	"301 location": func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "https://elsewhere/echo?a="+url.QueryEscape(echoOf(r)))
		w.WriteHeader(301)
	},
	"200 not json": func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200); _, _ = io.WriteString(w, echoOf(r)) },
	"malformed answer": func(w http.ResponseWriter, r *http.Request) {
		// No space: net/http then quotes the whole line.
		line := strings.NewReplacer("\r", "\t", "\n", "\t", " ", "\t").Replace(echoOf(r))
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_, _ = io.WriteString(conn, "HTTP/1.1"+line+"\r\n\r\n")
			_ = conn.Close()
		}
	},
	"plain http to tls": func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(400)
		_, _ = io.WriteString(w, "Client sent an HTTP request to an HTTPS server. "+echoOf(r))
	},
}

// echoCallers are the calls that carry each configured secret.
var echoCallers = map[string]struct {
	cfg  func(*Config)
	call func(context.Context, *Client) error
}{
	"basic read": {func(*Config) {}, func(ctx context.Context, c *Client) error { _, err := c.GetGroup(ctx, "orders", "billing"); return err }},
	"basic scale": {func(*Config) {}, func(ctx context.Context, c *Client) error {
		_, err := c.ScaleStream(ctx, "orders", 4, Mutation{})
		return err
	}},
	"login call": {func(cfg *Config) { cfg.Login = true }, func(ctx context.Context, c *Client) error {
		_, err := c.GetGroup(ctx, "orders", "billing")
		return err
	}},
	"issued token read": {func(cfg *Config) { cfg.Login = true }, func(ctx context.Context, c *Client) error {
		_, err := c.GetGroup(ctx, "orders", "billing")
		return err
	}},
	"static token read": {func(cfg *Config) { cfg.Username, cfg.Password, cfg.Token = "", "", echoToken }, func(ctx context.Context, c *Client) error {
		_, err := c.GetGroup(ctx, "orders", "billing")
		return err
	}},
	"ephemeral token login": {func(cfg *Config) { cfg.Username, cfg.Password, cfg.Token = "", "", echoToken }, func(ctx context.Context, c *Client) error {
		_, err := c.Login(ctx, "eph", echoEphemeral)
		return err
	}},
}

// echoRawSecrets are every configured secret as it is.
func echoRawSecrets() []string {
	return []string{echoPassword, echoEphemeral, echoToken, echoIssued, base64.StdEncoding.EncodeToString([]byte("admin:" + echoPassword))}
}

// echoSecrets are every secret and the forms an echo gives them.
func echoSecrets() []string {
	var out []string
	for _, s := range echoRawSecrets() {
		j, _ := json.Marshal(s)
		out = append(out, s, string(j[1:len(j)-1]), html.EscapeString(s), url.QueryEscape(s), url.PathEscape(s), html.EscapeString(string(j[1:len(j)-1])))
	}
	return out
}

// TestNoSecretSurvivesAnEcho feeds every error path an answer echoing the
// request, with each configured secret, and asserts none is in the error.
func TestNoSecretSurvivesAnEcho(t *testing.T) {
	for callerName, caller := range echoCallers {
		for pathName, serve := range echoPaths {
			t.Run(callerName+"/"+pathName, func(t *testing.T) {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if strings.HasSuffix(r.URL.Path, "/auth/login") && callerName == "issued token read" {
						writeJSON(w, 200, map[string]any{"accessToken": echoIssued, "tokenType": "Bearer", "expiresInSeconds": 3600})
						return
					}
					serve(w, r)
				}))
				defer srv.Close()
				c := newTestClient(t, srv.URL, func(cfg *Config) {
					cfg.Password = echoPassword
					caller.cfg(cfg)
				})
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				err := caller.call(ctx, c)
				if err == nil {
					t.Fatal("want an error")
				}
				msg := err.Error()
				if !strings.Contains(msg, "echo") && !strings.Contains(msg, "(withheld: it may contain a token)") {
					t.Fatalf("the echo is not quoted at all, so the check proves nothing: %s", msg)
				}
				for _, s := range echoSecrets() {
					if strings.Contains(msg, s) {
						t.Errorf("the error quotes a secret (%q): %s", s, msg)
					}
				}
				// Not even part of one: no 6-character window of a secret.
				for _, s := range echoRawSecrets() {
					for i := 0; i+6 <= len(s); i++ {
						if w := s[i : i+6]; strings.Contains(msg, w) {
							t.Errorf("the error quotes part of a secret (%q of %q): %s", w, s, msg)
						}
					}
				}
			})
		}
	}
}

// The patterns catch credentials the redactor was not given.
func TestRedactorPatterns(t *testing.T) {
	r := redactor{}
	for in, want := range map[string]string{
		"Authorization: Basic YWRtaW46cHc=":            "Authorization: Basic ***",
		"authorization: bearer abc.def-ghi":            "authorization: bearer ***",
		`{"password":"a\"b","user":"x"}`:               `{"password":***,"user":"x"}`,
		`{\"accessToken\":\"t0k\"}`:                    `{\"accessToken\":***}`,
		"&quot;token&quot;:&quot;xyz&quot;":            "&quot;token&quot;:***",
		`&#34;password&#34;:&#34;a\&#34;b\\&#34;,x`:    `&#34;password&#34;:***,x`,
		`&quot;password&quot;:&quot;a\&quot;b&quot;,x`: `&quot;password&quot;:***,x`,
		"username=a&password=p%40ss&x=1":               "username=a&password=***&x=1",
		"HTTP Basic (the username/password) rejected.": "HTTP Basic (the username/password) rejected.",
		`invalid Bearer token; Basic realm="coord"`:    `invalid Bearer token; Basic realm="coord"`,
	} {
		if got := r.text(in); got != want {
			t.Errorf("text(%q) = %q, want %q", in, got, want)
		}
	}
	if got := newRedactor("s3cr3t").excerpt([]byte(fmt.Sprintf("%s   %s", strings.Repeat("a", 195), "s3cr3t"))); strings.Contains(got, "s3c") {
		t.Errorf("an excerpt cut inside a secret shows part of it: %q", got)
	}
}

// Whatever surrounds a configured secret, in any of its escaped forms, the
// excerpt does not show it.
func FuzzRedactorExcerpt(f *testing.F) {
	const secret = `pw"<&>x9`
	f.Add("echo: ", " tail", uint8(0))
	f.Add("<p>", "</p>", uint8(1))
	f.Fuzz(func(t *testing.T, before, after string, form uint8) {
		j, _ := json.Marshal(secret)
		forms := []string{secret, string(j[1 : len(j)-1]), html.EscapeString(secret), url.QueryEscape(secret)}
		got := newRedactor(secret).excerpt([]byte(before + forms[int(form)%len(forms)] + after))
		for _, s := range forms {
			if strings.Contains(got, s) {
				t.Fatalf("excerpt %q shows the secret as %q", got, s)
			}
		}
	})
}
