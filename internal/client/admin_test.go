package client

import (
	"context"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

func TestMutationRequests(t *testing.T) {
	three := int32(3)
	cases := []struct {
		name       string
		run        func(ctx context.Context, c *Client) error
		respond    func(w http.ResponseWriter)
		wantMethod string
		wantURI    string
		wantBody   map[string]any
	}{
		{
			name: "create stream defaults, no initial count",
			run: func(ctx context.Context, c *Client) error {
				_, err := c.CreateStream(ctx, "orders", nil, Mutation{})
				return err
			},
			respond: func(w http.ResponseWriter) {
				writeJSON(w, 201, map[string]any{"streamPrefix": "orders", "shardCount": 12, "metadataVersion": 1})
			},
			wantMethod: "POST", wantURI: "/coord/v1/streams/orders",
			wantBody: map[string]any{"requestedBy": "terraform", "reason": "terraform apply run1"},
		},
		{
			name: "create group with overrides",
			run: func(ctx context.Context, c *Client) error {
				_, err := c.CreateGroup(ctx, "orders", "billing", &three, Mutation{RequestedBy: "terraform:prod", Reason: "ticket-42"})
				return err
			},
			respond:    func(w http.ResponseWriter) { writeJSON(w, 201, groupJSON("orders", "billing", 3)) },
			wantMethod: "POST", wantURI: "/coord/v1/streams/orders/groups/billing",
			wantBody: map[string]any{"initialShardCount": float64(3), "requestedBy": "terraform:prod", "reason": "ticket-42"},
		},
		{
			name: "delete sends force=false and a non-blank reason",
			run: func(ctx context.Context, c *Client) error {
				_, err := c.DeleteGroup(ctx, "orders", "billing", false, Mutation{RequestedBy: "  ", Reason: " \t"})
				return err
			},
			respond:    func(w http.ResponseWriter) { writeJSON(w, 200, groupJSON("orders", "billing", 3)) },
			wantMethod: "DELETE", wantURI: "/coord/v1/streams/orders/groups/billing",
			wantBody: map[string]any{"requestedBy": "terraform", "reason": "terraform apply run1", "force": false},
		},
		{
			name: "scale stream to zero sends the zero",
			run: func(ctx context.Context, c *Client) error {
				_, err := c.ScaleStream(ctx, "orders", 0, Mutation{Reason: "drain"})
				return err
			},
			respond: func(w http.ResponseWriter) {
				writeJSON(w, 202, map[string]any{"streamPrefix": "orders", "targetShardCount": 0,
					"affectedConsumerGroups": []string{}, "migrations": []any{}})
			},
			wantMethod: "POST", wantURI: "/coord/v1/streams/orders/scale",
			wantBody: map[string]any{"targetShardCount": float64(0), "requestedBy": "terraform", "reason": "drain"},
		},
		{
			name: "scale group",
			run: func(ctx context.Context, c *Client) error {
				_, err := c.ScaleGroup(ctx, "orders", "billing", 6, Mutation{})
				return err
			},
			respond:    func(w http.ResponseWriter) { writeMigration(w, 202) },
			wantMethod: "POST", wantURI: "/coord/v1/streams/orders/groups/billing/scale",
			wantBody: map[string]any{"targetShardCount": float64(6), "requestedBy": "terraform", "reason": "terraform apply run1"},
		},
		{
			name: "rollback",
			run: func(ctx context.Context, c *Client) error {
				_, err := c.RollbackMigration(ctx, "orders", "billing", "reshard-1", Mutation{})
				return err
			},
			respond:    func(w http.ResponseWriter) { writeMigration(w, 202) },
			wantMethod: "POST", wantURI: "/coord/v1/streams/orders/groups/billing/migrations/reshard-1/rollback",
			wantBody: map[string]any{"requestedBy": "terraform", "reason": "terraform apply run1"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) { tc.respond(w) })
			c := newTestClient(t, f.URL, nil)
			if err := tc.run(context.Background(), c); err != nil {
				t.Fatal(err)
			}
			r := f.requests()[0]
			if r.Method != tc.wantMethod || r.RequestURI != tc.wantURI {
				t.Errorf("sent %s %s, want %s %s", r.Method, r.RequestURI, tc.wantMethod, tc.wantURI)
			}
			if got := mustDecode(t, r.Body); !reflect.DeepEqual(got, tc.wantBody) {
				t.Errorf("body = %v, want %v", got, tc.wantBody)
			}
			if r.Header.Get("Content-Type") != "application/json" || r.Header.Get("X-Request-Id") == "" {
				t.Errorf("headers: %v", r.Header)
			}
		})
	}
}

func TestPathSegmentsArePercentEncoded(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		writeJSON(w, 200, map[string]any{"reshardingId": "a/b?c", "fromShardCount": 4, "toShardCount": 8, "state": "ACTIVE"})
	})
	c := newTestClient(t, f.URL, nil)
	if _, err := c.GetMigration(context.Background(), "my orders", "grp:1;v=2", "a/b?c"); err != nil {
		t.Fatal(err)
	}
	want := "/coord/v1/streams/my%20orders/groups/grp:1%3Bv=2/migrations/a%2Fb%3Fc"
	if got := f.requests()[0].RequestURI; got != want {
		t.Errorf("request URI %s, want %s", got, want)
	}
}

func TestBlankPathSegmentsAreRejectedLocally(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) { w.WriteHeader(500) })
	c := newTestClient(t, f.URL, nil)
	ctx := context.Background()
	errs := []error{}
	_, err := c.GetGroup(ctx, "orders", " ")
	errs = append(errs, err)
	_, err = c.CreateStream(ctx, "", nil, Mutation{})
	errs = append(errs, err)
	_, err = c.GetMigration(ctx, "orders", "billing", "")
	errs = append(errs, err)
	for i, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "must not be blank") {
			t.Errorf("call %d: %v", i, err)
		}
	}
	if f.count() != 0 {
		t.Errorf("%d requests reached the server", f.count())
	}
}

func TestEndpointNormalization(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		writeJSON(w, 200, map[string]string{"status": "UP"})
	})
	for _, suffix := range []string{"", "/", "/coord/v1", "/coord/v1/"} {
		c := newTestClient(t, f.URL+suffix, nil)
		if _, err := c.Health(context.Background()); err != nil {
			t.Fatalf("endpoint %q: %v", f.URL+suffix, err)
		}
	}
	c := newTestClient(t, f.URL+"/proxy/base/", nil)
	if _, err := c.Health(context.Background()); err != nil {
		t.Fatal(err)
	}
	reqs := f.requests()
	for _, r := range reqs[:4] {
		if r.RequestURI != "/coord/v1/monitoring/health" {
			t.Errorf("request URI %s", r.RequestURI)
		}
	}
	if got := reqs[4].RequestURI; got != "/proxy/base/coord/v1/monitoring/health" {
		t.Errorf("base path lost: %s", got)
	}

	for _, bad := range []string{"", "ftp://h", "http://", "localhost:8080", "http://h/?x=1", "http://u:p@h"} {
		if _, err := New(Config{Endpoint: bad}); err == nil {
			t.Errorf("endpoint %q accepted", bad)
		}
	}
}

func TestSuccessBodyThatIsNotJSON(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		w.WriteHeader(200)
		_, _ = w.Write([]byte("<html>maintenance</html>"))
	})
	c := newTestClient(t, f.URL, nil)
	_, err := c.GetGroup(context.Background(), "orders", "billing")
	if err == nil || !strings.Contains(err.Error(), "decoding 200 response") || !strings.Contains(err.Error(), "maintenance") {
		t.Fatalf("got %v", err)
	}
}

func TestUserAgent(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) { writeJSON(w, 200, map[string]string{}) })
	custom := "terraform-provider-redisstreamcoordinator/1.2.3 (+https://www.terraform.io) Terraform/1.11.4"
	c := newTestClient(t, f.URL, func(cfg *Config) { cfg.UserAgent = custom })
	if _, err := c.Session(context.Background()); err != nil {
		t.Fatal(err)
	}
	c = newTestClient(t, f.URL, nil)
	if _, err := c.Session(context.Background()); err != nil {
		t.Fatal(err)
	}
	reqs := f.requests()
	if got := reqs[0].Header.Get("User-Agent"); got != custom {
		t.Errorf("User-Agent %q", got)
	}
	if got := reqs[1].Header.Get("User-Agent"); got != DefaultUserAgent {
		t.Errorf("default User-Agent %q", got)
	}
}

func TestConfigValidation(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
	}{
		{"token and password", Config{Endpoint: "http://h", Username: "u", Password: "p", Token: "t"}},
		{"login with token", Config{Endpoint: "http://h", Login: true, Username: "u", Token: "t"}},
		{"login without password", Config{Endpoint: "http://h", Login: true, Username: "u"}},
		{"password without username", Config{Endpoint: "http://h", Password: "p"}},
		{"negative retries", Config{Endpoint: "http://h", MaxRetries: -1}},
		{"negative timeout", Config{Endpoint: "http://h", RequestTimeout: -1}},
		{"min above max", Config{Endpoint: "http://h", RetryWaitMin: 2e9, RetryWaitMax: 1e9}},
		{"invalid CA PEM", Config{Endpoint: "https://h", CACertPEM: "-----BEGIN CERTIFICATE-----\nnope\n-----END CERTIFICATE-----\n"}},
	}
	for _, tc := range cases {
		if _, err := New(tc.cfg); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	c, err := New(Config{Endpoint: "http://h", Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if c.maxRetries != 0 || c.retryWaitMin != DefaultRetryWaitMin || c.retryWaitMax != DefaultRetryWaitMax ||
		c.http.Timeout != DefaultRequestTimeout || c.RequestedBy() != "terraform" {
		t.Errorf("defaults not applied: %+v", c)
	}
}
