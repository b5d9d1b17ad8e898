package coordinator

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// send issues one request with a plain client (no retries) and returns the
// transport error, if any.
func (e *env) send(method, path string, body string) (*http.Response, error) {
	req, err := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.SetBasicAuth("admin", "password")
	resp, err := e.srv.Client().Do(req)
	if err == nil {
		resp.Body.Close()
	}
	return resp, err
}

func TestFaultRespondWithErrorCode(t *testing.T) {
	e := newEnv(t, Options{})
	e.createGroup("orders", "g", 2)
	e.c.InjectFault(Fault{Method: "POST", Route: RouteStreamScale, Status: 503, ErrorCode: CodeCoordinatorTerminating, Message: "shutting down", RetryAfter: "2"})
	r := e.do("POST", "/coord/v1/streams/orders/scale", scaleBody(4))
	m := r.wantAPIError(t, 503, "SERVICE_UNAVAILABLE", CodeCoordinatorTerminating)
	if m["message"] != "shutting down" || r.header.Get("Retry-After") != "2" {
		t.Fatalf("fault reply = %s %v", r.body, r.header)
	}
	// Nothing was applied or audited; the fault was used up.
	if g := e.group("orders", "g"); g.ShardCount != 2 {
		t.Fatalf("fault applied the scale: %+v", g)
	}
	if n := len(e.c.AuditEvents()); n != 1 {
		t.Fatalf("audit events = %d, want only the create", n)
	}
	e.scaleStream("orders", 4)
}

func TestFaultRespondRawBodyTimesAndOrder(t *testing.T) {
	e := newEnv(t, Options{})
	e.createGroup("orders", "g", 2)
	path := groupPath("orders", "g")
	e.c.InjectFault(Fault{Path: path, Method: "GET", Times: 2, Status: 502, Body: "<html>bad gateway</html>", ContentType: "text/html"})
	e.c.InjectFault(Fault{Path: path, Status: 500, Body: "{not json"})
	for range 2 {
		r := e.do("GET", path, nil)
		if r.status != 502 || string(r.body) != "<html>bad gateway</html>" || r.header.Get("Content-Type") != "text/html" {
			t.Fatalf("first fault = %d %q %v", r.status, r.body, r.header)
		}
	}
	if r := e.do("GET", path, nil); r.status != 500 || string(r.body) != "{not json" {
		t.Fatalf("second fault = %d %q", r.status, r.body)
	}
	e.mustStatus(e.do("GET", path, nil), 200)
	// Method and path must both match: the same method on another path, and
	// another method on the same path, pass untouched.
	e.c.InjectFault(Fault{Method: "DELETE", Path: path, Status: 500})
	e.mustStatus(e.do("GET", path, nil), 200)
	e.do("DELETE", groupPath("orders", "other"), auditBody()).wantAPIError(t, 404, "NOT_FOUND", CodeGroupNotFound)
	if r := e.do("DELETE", path, auditBody()); r.status != 500 {
		t.Fatalf("DELETE fault = %d", r.status)
	}
}

func TestFaultResetBeforeApply(t *testing.T) {
	e := newEnv(t, Options{})
	e.c.InjectFault(Fault{Method: "POST", Route: RouteGroup, Kind: FaultResetBeforeApply})
	if _, err := e.send("POST", groupPath("orders", "g"), `{"requestedBy":"t"}`); err == nil {
		t.Fatal("expected a connection error")
	}
	e.do("GET", groupPath("orders", "g"), nil).wantAPIError(t, 404, "NOT_FOUND", CodeGroupNotFound)
	if len(e.c.AuditEvents()) != 0 || e.c.RequestCount("POST", RouteGroup) != 1 {
		t.Fatalf("audit %d, count %d", len(e.c.AuditEvents()), e.c.RequestCount("POST", RouteGroup))
	}
}

func TestFaultResetAfterApply(t *testing.T) {
	e := newEnv(t, Options{RateLimitEnabled: true, RateLimitPerWindow: 1})
	e.c.InjectFault(Fault{Route: RouteGroup, Kind: FaultResetAfterApply})
	if _, err := e.send("POST", groupPath("orders", "g"), `{"requestedBy":"t","initialShardCount":3}`); err == nil {
		t.Fatal("expected a connection error")
	}
	if g := e.group("orders", "g"); g.ShardCount != 3 {
		t.Fatalf("the create was not applied: %+v", g)
	}
	evs := e.c.AuditEvents()
	if len(evs) != 1 || evs[0].Status != 201 || evs[0].Action != ActionCreateGroup {
		t.Fatalf("audit = %+v", evs)
	}
	// The applied request used the rate-limit budget.
	want429(t, e.do("POST", groupPath("orders", "g"), createBody(3)), "60")
}

func TestFaultDelay(t *testing.T) {
	e := newEnv(t, Options{})
	e.c.InjectFault(Fault{Route: RouteGroup, Method: "POST", Kind: FaultDelay, Delay: 20 * time.Millisecond})
	e.createGroup("orders", "g", 1)

	// A client that gives up during the delay does not stop the server from
	// applying the request afterwards.
	e.c.InjectFault(Fault{Route: RouteGroup, Method: "POST", Kind: FaultDelay, Delay: 200 * time.Millisecond})
	client := &http.Client{Timeout: 20 * time.Millisecond}
	req, _ := http.NewRequest("POST", e.srv.URL+groupPath("orders", "late"), strings.NewReader(`{"requestedBy":"t"}`))
	req.Header.Set("Content-Type", "application/json")
	req.SetBasicAuth("admin", "password")
	if resp, err := client.Do(req); err == nil {
		resp.Body.Close()
		t.Fatal("expected a client timeout")
	}
	waitFor(t, "the delayed create to be applied", func() bool { return len(e.c.AuditEvents()) >= 2 })
	e.group("orders", "late")
}

func TestFaultDelayUntil(t *testing.T) {
	t.Run("held until Until reports true", func(t *testing.T) {
		e := newEnv(t, Options{})
		var asked atomic.Int32
		var appliedEarly atomic.Bool
		// Delay far outlasts three polls: without Until the request is
		// served only after it, with Until never asked.
		e.c.InjectFault(Fault{Route: RouteGroup, Method: "POST", Kind: FaultDelay, Delay: 10 * time.Second, Until: func() bool {
			if len(e.c.AuditEvents()) > 0 {
				appliedEarly.Store(true)
			}
			return asked.Add(1) >= 3
		}})
		e.createGroup("orders", "g", 1)
		if asked.Load() != 3 || appliedEarly.Load() {
			t.Fatalf("Until asked %d times (want 3), request applied before Until held: %v", asked.Load(), appliedEarly.Load())
		}
	})

	t.Run("served after Delay when Until never holds", func(t *testing.T) {
		e := newEnv(t, Options{})
		var asked atomic.Int32
		e.c.InjectFault(Fault{Route: RouteGroup, Method: "POST", Kind: FaultDelay, Delay: 30 * time.Millisecond, Until: func() bool {
			asked.Add(1)
			return false
		}})
		e.createGroup("orders", "g", 1)
		if asked.Load() == 0 {
			t.Fatal("Until was never asked")
		}
	})

	t.Run("Close drops a held request", func(t *testing.T) {
		c := startCoordinator(t, Options{})
		c.InjectFault(Fault{Route: RouteGroup, Method: "POST", Kind: FaultDelay, Delay: time.Hour, Until: func() bool { return false }})
		errc := make(chan error, 1)
		go func() {
			req, _ := http.NewRequest("POST", c.URL()+groupPath("orders", "g"), strings.NewReader(`{"requestedBy":"t"}`))
			req.Header.Set("Content-Type", "application/json")
			req.SetBasicAuth("admin", "password")
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			errc <- err
		}()
		waitFor(t, "the held request to arrive", func() bool { return c.RequestCount("POST", RouteGroup) == 1 })
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if err := <-errc; err == nil {
			t.Fatal("the held request should have been dropped")
		}
		if n := len(c.AuditEvents()); n != 0 {
			t.Fatalf("the held request was applied: %d audit events", n)
		}
	})
}

func TestRequestCounts(t *testing.T) {
	e := newEnv(t, Options{})
	e.createGroup("orders", "g", 1)
	e.group("orders", "g")
	e.group("orders", "g")
	e.do("GET", "/coord/v1/unknown", nil)
	if got := e.c.RequestCount("GET", RouteGroup); got != 2 {
		t.Fatalf("GET group count = %d", got)
	}
	counts := e.c.RequestCounts()
	if counts["POST "+RouteGroup] != 1 || counts["GET /coord/v1/unknown"] != 1 || len(counts) != 3 {
		t.Fatalf("counts = %v", counts)
	}
	e.c.ResetRequestCounts()
	if len(e.c.RequestCounts()) != 0 || e.c.RequestCount("GET", RouteGroup) != 0 {
		t.Fatal("reset did not clear")
	}
	counts["x"] = 1 // the returned map is a copy
	if e.c.RequestCount("x", "") != 0 {
		t.Fatal("RequestCounts leaked its map")
	}
}

// TestFaultsAfterApply: a proxy that forwarded the request and then lost the
// answer (502/504 HTML, half a 2xx body, no answer before the client gives
// up). The create is applied and audited once in every case.
func TestFaultsAfterApply(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault Fault
		check func(t *testing.T, resp *http.Response, body []byte, err error)
	}{
		{"502 HTML", Fault{Kind: FaultRespondAfterApply, Status: 502, Body: "<html>502 Bad Gateway</html>", ContentType: "text/html"},
			func(t *testing.T, resp *http.Response, body []byte, err error) {
				if err != nil || resp.StatusCode != 502 || string(body) != "<html>502 Bad Gateway</html>" {
					t.Fatalf("got %v %v %q", resp, err, body)
				}
			}},
		{"garbled 201", Fault{Kind: FaultGarbleAfterApply}, func(t *testing.T, resp *http.Response, body []byte, err error) {
			if err != nil || resp.StatusCode != 201 || len(body) == 0 || json.Valid(body) {
				t.Fatalf("want a 201 whose body is cut, got %v %v %q", resp, err, body)
			}
		}},
		{"hang until the client gives up", Fault{Kind: FaultHangAfterApply}, func(t *testing.T, _ *http.Response, _ []byte, err error) {
			if err == nil {
				t.Fatal("want a client timeout")
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Options{})
			tc.fault.Method, tc.fault.Route = "POST", RouteGroup
			e.c.InjectFault(tc.fault)
			client := &http.Client{Timeout: 500 * time.Millisecond}
			req, _ := http.NewRequest("POST", e.srv.URL+groupPath("orders", "g"), strings.NewReader(`{"requestedBy":"t","initialShardCount":3}`))
			req.Header.Set("Content-Type", "application/json")
			req.SetBasicAuth("admin", "password")
			resp, err := client.Do(req)
			var body []byte
			if err == nil {
				body, _ = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			tc.check(t, resp, body, err)
			if g := e.group("orders", "g"); g.ShardCount != 3 {
				t.Fatalf("the create was not applied: %+v", g)
			}
			if evs := e.c.AuditEvents(); len(evs) != 1 || evs[0].Status != 201 {
				t.Fatalf("audit = %+v", evs)
			}
		})
	}
}
