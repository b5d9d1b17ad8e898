package client

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
)

// callUnderTest runs one client method against the fake.
type callUnderTest struct {
	name      string
	ambiguous bool // a mutation: a reset or a non-coordinator answer must not be re-sent
	run       func(ctx context.Context, c *Client) error
	success   func(w http.ResponseWriter)
}

var eight = int32(8)

var networkCalls = []callUnderTest{
	{"create stream", true, func(ctx context.Context, c *Client) error {
		_, err := c.CreateStream(ctx, "orders", &eight, Mutation{})
		return err
	}, func(w http.ResponseWriter) {
		writeJSON(w, 201, map[string]any{"streamPrefix": "orders", "shardCount": 8, "metadataVersion": 1})
	}},
	{"create group", true, func(ctx context.Context, c *Client) error {
		_, err := c.CreateGroup(ctx, "orders", "billing", &eight, Mutation{})
		return err
	}, func(w http.ResponseWriter) { writeJSON(w, 201, groupJSON("orders", "billing", 8)) }},
	{"heartbeat", true, func(ctx context.Context, c *Client) error {
		_, err := c.Heartbeat(ctx, "orders", "billing", HeartbeatRequest{MemberID: "m1"})
		return err
	}, func(w http.ResponseWriter) { writeJSON(w, 200, map[string]any{"status": "OK", "memberId": "m1"}) }},
	{"get group", false, func(ctx context.Context, c *Client) error {
		_, err := c.GetGroup(ctx, "orders", "billing")
		return err
	}, func(w http.ResponseWriter) { writeJSON(w, 200, groupJSON("orders", "billing", 8)) }},
	{"delete group", true, func(ctx context.Context, c *Client) error {
		_, err := c.DeleteGroup(ctx, "orders", "billing", true, Mutation{})
		return err
	}, func(w http.ResponseWriter) { writeJSON(w, 200, groupJSON("orders", "billing", 8)) }},
	{"scale stream", true, func(ctx context.Context, c *Client) error {
		_, err := c.ScaleStream(ctx, "orders", 8, Mutation{})
		return err
	}, func(w http.ResponseWriter) {
		writeJSON(w, 202, map[string]any{"streamPrefix": "orders", "targetShardCount": 8,
			"affectedConsumerGroups": []string{"billing"}, "migrations": []json.RawMessage{json.RawMessage(migrationJSON)}})
	}},
	{"scale group", true, func(ctx context.Context, c *Client) error {
		_, err := c.ScaleGroup(ctx, "orders", "billing", 8, Mutation{})
		return err
	}, func(w http.ResponseWriter) { writeMigration(w, 202) }},
	{"rollback", true, func(ctx context.Context, c *Client) error {
		_, err := c.RollbackMigration(ctx, "orders", "billing", "reshard-1", Mutation{})
		return err
	}, func(w http.ResponseWriter) { writeMigration(w, 202) }},
}

func TestConnectionResetAfterWrite(t *testing.T) {
	for _, tc := range networkCalls {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
				if n == 1 {
					resetConnection(t, w)
					return
				}
				tc.success(w)
			})
			c := newTestClient(t, f.URL, nil)
			err := tc.run(context.Background(), c)
			reqs := f.requests()
			if !tc.ambiguous {
				if err != nil {
					t.Fatalf("want a transparent retry, got %v", err)
				}
				if len(reqs) != 2 {
					t.Fatalf("requests = %d, want 2", len(reqs))
				}
				return
			}
			if !IsAmbiguous(err) {
				t.Fatalf("want an ambiguous error, got %T %v", err, err)
			}
			if len(reqs) != 1 {
				t.Fatalf("requests = %d: a possibly applied request was re-sent", len(reqs))
			}
			rid := reqs[0].Header.Get("X-Request-Id")
			if !strings.Contains(err.Error(), "may have been applied") || !strings.Contains(err.Error(), rid) {
				t.Errorf("message %q must say it may have been applied and carry request id %q", err, rid)
			}
			if IsTransient(err) {
				t.Error("an ambiguous error must not be transient")
			}
		})
	}
}

func TestCreateResentAfterDialRefused(t *testing.T) {
	closedAddr := closedPort(t) // dialing it is refused

	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		writeJSON(w, 201, groupJSON("orders", "billing", 8))
	})
	var dials atomic.Int32
	base := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		if dials.Add(1) == 1 {
			return d.DialContext(ctx, network, closedAddr)
		}
		return d.DialContext(ctx, network, addr)
	}}
	c := newTestClient(t, f.URL, func(cfg *Config) { cfg.HTTPTransport = base })
	if _, err := c.CreateGroup(context.Background(), "orders", "billing", &eight, Mutation{}); err != nil {
		t.Fatalf("CreateGroup: %v", err)
	}
	if dials.Load() != 2 || f.count() != 1 {
		t.Errorf("dials = %d, server requests = %d; want 2 and 1", dials.Load(), f.count())
	}
}

func TestDialRefusedExhaustedIsNotAmbiguous(t *testing.T) {
	addr := closedPort(t)
	c := newTestClient(t, "http://"+addr, func(cfg *Config) { cfg.MaxRetries = 1 })
	_, err := c.CreateStream(context.Background(), "orders", nil, Mutation{})
	if err == nil || IsAmbiguous(err) {
		t.Fatalf("a request that never connected is not ambiguous: %v", err)
	}
	if !IsTransient(err) || !strings.Contains(err.Error(), "2 attempt(s)") {
		t.Errorf("got %v", err)
	}
}

func TestRequestIDStableAcrossRetries(t *testing.T) {
	f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) {
		switch n {
		case 1:
			writeCoordError(w, 409, CodeStateVersionConflict, "conflict")
		case 2:
			w.Header().Set("Retry-After", "1")
			writeCoordError(w, 429, CodeRateLimitExceeded, "slow down")
		case 3:
			writeCoordError(w, 503, CodeCoordinatorStateMutexUnavailable, "busy")
		default:
			writeMigration(w, 202)
		}
	})
	c := newTestClient(t, f.URL, nil)
	if _, err := c.ScaleGroup(context.Background(), "orders", "billing", 8, Mutation{}); err != nil {
		t.Fatalf("ScaleGroup: %v", err)
	}
	reqs := f.requests()
	if len(reqs) != 4 {
		t.Fatalf("requests = %d, want 4", len(reqs))
	}
	first := reqs[0].Header.Get("X-Request-Id")
	if !regexp.MustCompile(`^terraform-run1-scale-group-[0-9a-f]{8}$`).MatchString(first) {
		t.Errorf("request id %q has the wrong shape", first)
	}
	for i, r := range reqs {
		if got := r.Header.Get("X-Request-Id"); got != first {
			t.Errorf("attempt %d sent request id %q, want %q", i+1, got, first)
		}
		if string(r.Body) != string(reqs[0].Body) {
			t.Errorf("attempt %d body %s differs from %s", i+1, r.Body, reqs[0].Body)
		}
	}

	// An explicit id (re-sending a logical operation) is used verbatim.
	if _, err := c.ScaleGroup(context.Background(), "orders", "billing", 8, Mutation{RequestID: "terraform-run1-scale-group-0badc0de"}); err != nil {
		t.Fatal(err)
	}
	reqs = f.requests()
	if got := reqs[len(reqs)-1].Header.Get("X-Request-Id"); got != "terraform-run1-scale-group-0badc0de" {
		t.Errorf("explicit request id not used: %q", got)
	}
}
