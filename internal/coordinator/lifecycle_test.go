package coordinator

import (
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func startCoordinator(t *testing.T, opts Options) *Coordinator {
	t.Helper()
	c := New(opts)
	if err := c.Start("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func call(t *testing.T, c *Coordinator, method, path, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, c.URL()+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.SetBasicAuth("admin", "password")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// waitFor polls cond for up to 5s; used where the real tick loop drives
// progress.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestStartServesAndTicks: Start serves the API on a real port and the
// background loop completes a member-less scale-in by itself.
func TestStartServesAndTicks(t *testing.T) {
	c := startCoordinator(t, Options{TickInterval: 5 * time.Millisecond})
	if !strings.HasPrefix(c.URL(), "http://127.0.0.1:") || c.URL() != "http://"+c.Addr() {
		t.Fatalf("URL = %q, Addr = %q", c.URL(), c.Addr())
	}
	if status, body := call(t, c, "GET", RouteHealth, ""); status != 200 || !strings.Contains(body, `"status":"UP"`) {
		t.Fatalf("health = %d %s", status, body)
	}
	if status, _ := call(t, c, "POST", groupPath("orders", "g"), `{"requestedBy":"t","initialShardCount":4}`); status != 201 {
		t.Fatalf("create = %d", status)
	}
	if status, _ := call(t, c, "POST", groupPath("orders", "g")+"/scale", `{"targetShardCount":1,"requestedBy":"t","reason":"r"}`); status != 202 {
		t.Fatalf("scale = %d", status)
	}
	waitFor(t, "the scale-in to finish", func() bool {
		_, body := call(t, c, "GET", groupPath("orders", "g"), "")
		return strings.Contains(body, `"activeMigration":null`)
	})
	if err := c.Start("127.0.0.1:0"); err == nil {
		t.Fatal("second Start must fail")
	}
}

// TestRestart: in-flight connections are dropped, the same address serves
// again, and state survives.
func TestRestart(t *testing.T) {
	c := startCoordinator(t, Options{})
	url := c.URL()
	call(t, c, "POST", groupPath("orders", "g"), `{"requestedBy":"t","initialShardCount":3}`)
	c.InjectFault(Fault{Route: RouteProducerRouting, Kind: FaultDelay, Delay: time.Minute})
	errc := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest("GET", url+groupPath("orders", "g")+"/producer-routing", nil)
		req.SetBasicAuth("admin", "password")
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	waitFor(t, "the delayed request to arrive", func() bool { return c.RequestCount("GET", RouteProducerRouting) == 1 })
	if err := c.Restart(10 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err == nil {
		t.Fatal("the in-flight request should have lost its connection")
	}
	if c.URL() != url {
		t.Fatalf("URL changed: %s → %s", url, c.URL())
	}
	if status, body := call(t, c, "GET", groupPath("orders", "g"), ""); status != 200 || !strings.Contains(body, `"shardCount":3`) {
		t.Fatalf("after restart = %d %s", status, body)
	}
}

func TestCloseAbortsDelaysAndIsIdempotent(t *testing.T) {
	c := startCoordinator(t, Options{})
	c.InjectFault(Fault{Kind: FaultDelay, Delay: time.Hour})
	errc := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest("GET", c.URL()+RouteHealth, nil)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	waitFor(t, "the delayed request to arrive", func() bool { return c.RequestCount("GET", RouteHealth) == 1 })
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err == nil {
		t.Fatal("the delayed request should have been dropped")
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close = %v", err)
	}
	if err := c.Restart(0); err == nil {
		t.Fatal("Restart after Close must fail")
	}
	if err := c.Start("127.0.0.1:0"); err == nil {
		t.Fatal("Start after Close must fail")
	}
}

func TestRestartNeedsStart(t *testing.T) {
	if err := New(Options{}).Restart(0); err == nil {
		t.Fatal("Restart before Start must fail")
	}
}

// TestRestartWithAppliesHeldRequestWhileDown: a create held until the
// connections are cut is applied while the coordinator is down, and whileDown
// decides when it serves again; connections are refused in between.
func TestRestartWithAppliesHeldRequestWhileDown(t *testing.T) {
	c := startCoordinator(t, Options{})
	url := c.URL()
	var cut atomic.Bool
	c.InjectFault(Fault{Method: "POST", Route: RouteGroup, Kind: FaultDelay, Delay: time.Minute, Until: cut.Load})
	errc := make(chan error, 1)
	go func() {
		req, _ := http.NewRequest("POST", url+groupPath("orders", "g"), strings.NewReader(`{"requestedBy":"t","initialShardCount":3}`))
		req.Header.Set("Content-Type", "application/json")
		req.SetBasicAuth("admin", "password")
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	waitFor(t, "the held create to arrive", func() bool { return c.RequestCount("POST", RouteGroup) == 1 })
	err := c.RestartWith(func() {
		cut.Store(true)
		waitFor(t, "the held create to be applied", func() bool { return len(c.AuditEvents()) == 1 })
		if _, err := http.Get(url + RouteHealth); err == nil {
			t.Error("the coordinator answered while down")
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err == nil {
		t.Fatal("the held request should have lost its connection")
	}
	if status, _ := call(t, c, "GET", groupPath("orders", "g"), ""); status != 200 {
		t.Fatalf("the held create was not applied: %d", status)
	}
}
