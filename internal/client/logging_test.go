package client

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-log/tflogtest"
)

// logMessages decodes the JSON log lines and returns their messages.
func logMessages(t *testing.T, out string) string {
	t.Helper()
	entries, err := tflogtest.MultilineJSONDecode(strings.NewReader(out))
	if err != nil {
		t.Fatalf("decoding log output: %v", err)
	}
	var msgs []string
	for _, e := range entries {
		msgs = append(msgs, fmt.Sprint(e["@message"]))
	}
	return strings.Join(msgs, "\n")
}

func assertNotLogged(t *testing.T, out string, secrets map[string]string) {
	t.Helper()
	for name, s := range secrets {
		if strings.Contains(out, s) {
			t.Errorf("the %s %q appears in the log output", name, s)
		}
	}
}

func TestBasicCredentialsAreNotLogged(t *testing.T) {
	// The fake echoes the credentials it received into the bodies the client
	// logs at TRACE, so only the client's masking keeps them out of the log.
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		_, pw, _ := r.BasicAuth()
		echo := pw + " " + r.Header.Get("Authorization")
		if n == 1 {
			writeCoordError(w, 409, CodeStateVersionConflict, "conflict seen with "+echo)
			return
		}
		g := groupJSON("orders", "billing", 4)
		g["note"] = "billing " + echo // not in the group's name: that answer would be about another group
		writeJSON(w, 200, g)
	})
	var buf bytes.Buffer
	ctx := tflogtest.RootLogger(context.Background(), &buf)
	c := newTestClient(t, f.URL, nil)
	if _, err := c.DeleteGroup(ctx, "orders", "billing", false, Mutation{}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	assertNotLogged(t, out, map[string]string{
		"password":     "s3cret-pw",
		"basic header": base64.StdEncoding.EncodeToString([]byte("admin:s3cret-pw")),
	})
	msgs := logMessages(t, out)
	for _, want := range []string{
		"DELETE /coord/v1/streams/orders/groups/billing -> 409; retrying in",
		"DELETE /coord/v1/streams/orders/groups/billing -> 200",
	} {
		if !strings.Contains(msgs, want) {
			t.Errorf("log messages lack %q:\n%s", want, msgs)
		}
	}
	for _, want := range []string{
		`"@module":"provider.coordinator"`,
		`"reason":"409 STATE_VERSION_CONFLICT is transient"`,
		`"attempt":2`,
		`"request_id":"terraform-run1-delete-group-`,
		"terraform apply run1", // TRACE request body
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log output lacks %q:\n%s", want, out)
		}
	}
}

func TestLoginSecretsAreNotLogged(t *testing.T) {
	const token = "eyJ2MQ.c2VjcmV0LXNpZ25hdHVyZQ"
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		if r.URL.Path == "/coord/v1/auth/login" {
			writeJSON(w, 200, map[string]any{"accessToken": token, "tokenType": "Bearer",
				"expiresAt": "2099-01-01T00:00:00Z", "expiresInSeconds": 604800, "roles": []string{"WRITE"}})
			return
		}
		writeJSON(w, 200, map[string]any{"authenticated": true, "username": "admin", "roles": []string{"WRITE"},
			"echo": r.Header.Get("Authorization")})
	})
	var buf bytes.Buffer
	ctx := tflogtest.RootLogger(context.Background(), &buf)
	c := newTestClient(t, f.URL, func(cfg *Config) { cfg.Login = true })
	if _, err := c.Session(ctx); err != nil {
		t.Fatal(err)
	}
	// The explicit login of the ephemeral token resource must not leak either.
	if _, err := c.Login(ctx, "reader", "other-pw-123"); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	assertNotLogged(t, out, map[string]string{"password": "s3cret-pw", "explicit password": "other-pw-123", "token": token})
	msgs := logMessages(t, out)
	for _, want := range []string{"POST /coord/v1/auth/login -> 200", "GET /coord/v1/monitoring/session -> 200"} {
		if !strings.Contains(msgs, want) {
			t.Errorf("log messages lack %q:\n%s", want, msgs)
		}
	}
	if !strings.Contains(out, `\"accessToken\":***`) {
		t.Errorf("login response body not logged redacted:\n%s", out)
	}
}

func TestBearerTokenIsNotLogged(t *testing.T) {
	const token = "pre-issued.token-value"
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		writeJSON(w, 200, map[string]any{"authenticated": true, "username": "ci", "echo": r.Header.Get("Authorization")})
	})
	var buf bytes.Buffer
	ctx := tflogtest.RootLogger(context.Background(), &buf)
	c := newTestClient(t, f.URL, func(cfg *Config) { cfg.Username, cfg.Password, cfg.Token = "", "", token })
	if _, err := c.Session(ctx); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	assertNotLogged(t, out, map[string]string{"token": token})
	if !strings.Contains(logMessages(t, out), "GET /coord/v1/monitoring/session -> 200") {
		t.Errorf("request line missing:\n%s", out)
	}
}

// TestTraceBodyRedactsEscapedEchoes: a response echoing the password in an
// escaped form (here JSON-escaped inside an HTML page, which tflog's literal
// masks do not match) is logged at TRACE without it, and so is the login
// body's password and token keys.
func TestTraceBodyRedactsEscapedEchoes(t *testing.T) {
	const pw = `pa"ss<w0rd-xyz`
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`<html><p>refused: pa\"ss\u003cw0rd-xyz and {"token":"tok-123456"}</p></html>`))
	})
	var buf bytes.Buffer
	ctx := tflogtest.RootLogger(context.Background(), &buf)
	t.Setenv("TF_LOG_PROVIDER_REDISSTREAMCOORDINATOR", "TRACE")
	c := newTestClient(t, f.URL, func(cfg *Config) { cfg.Password = pw; cfg.MaxRetries = 0 })
	if _, err := c.GetGroup(ctx, "orders", "billing"); err == nil {
		t.Fatal("want the 400")
	}
	out := buf.String()
	if !strings.Contains(out, "coordinator error response body") {
		t.Fatalf("no TRACE body logged:\n%s", out)
	}
	for _, leaked := range []string{`ss\\u003cw0rd`, "w0rd-xyz", "tok-123456"} {
		if strings.Contains(out, leaked) {
			t.Errorf("TRACE log carries %q:\n%s", leaked, out)
		}
	}
}
