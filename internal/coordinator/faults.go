package coordinator

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// FaultKind selects what an injected fault does to a matching request.
type FaultKind int

const (
	// FaultRespond answers with Status and an error body instead of the
	// coordinator, as a proxy or a failing instance would. Nothing is
	// applied, audited or rate-limit counted.
	FaultRespond FaultKind = iota
	// FaultResetBeforeApply resets the connection without applying the
	// request.
	FaultResetBeforeApply
	// FaultResetAfterApply applies the request (mutation, audit event,
	// rate-limit count) and then resets the connection instead of answering.
	FaultResetAfterApply
	// FaultDelay waits Delay (or until Until reports true), then handles the
	// request normally.
	FaultDelay
	// FaultStoreError is a Redis store or state-mutex failure that escaped
	// the coordinator's error handler (CONTRACT §9): after authentication and
	// the rate limit, the request fails before it changes anything and is
	// answered with Spring's generic 500 ({"timestamp","status":500,"error",
	// "path"}, no errorCode). It is audited (status 500, outcome ERROR).
	FaultStoreError
	// FaultStoreErrorAfterCommit applies the request (mutation committed,
	// audited with the status the coordinator reached, rate-limit counted)
	// and then answers Spring's generic 500 instead of the real response: the
	// store failed after the commit. On a GET it is the same as
	// FaultStoreError except that nothing is audited either way.
	FaultStoreErrorAfterCommit
	// FaultRespondAfterApply applies the request (mutation, audit event with
	// the coordinator's own status, rate-limit count) and then answers as
	// FaultRespond does, as a proxy that forwarded the request and lost the
	// coordinator's answer would: typically Status 502 or 504 with an HTML
	// Body.
	FaultRespondAfterApply
	// FaultGarbleAfterApply applies the request and passes its answer on with
	// the coordinator's status but only the first half of its body, so the
	// body cannot be decoded.
	FaultGarbleAfterApply
	// FaultHangAfterApply applies the request and then sends nothing until
	// the client gives up (closes the connection), Delay passes, Until
	// reports true, or the coordinator closes, and then resets the
	// connection: an answer delayed past the client's deadline, or one that
	// is lost after the change took effect while the test makes something
	// happen in between.
	FaultHangAfterApply
)

// Fault is a one-shot (or Times-shot) disturbance of matching requests.
type Fault struct {
	Method string // "" matches any method
	// Path matches the exact raw request path (no query), e.g.
	// "/coord/v1/streams/orders/scale". Route matches a route pattern such as
	// RouteGroup. Leave both empty to match any path.
	Path  string
	Route string
	Times int // matching requests affected; ≤ 0 means 1
	Kind  FaultKind

	// FaultRespond: with ErrorCode set the body is the coordinator error
	// {"status","errorCode","message"}; with ErrorCode empty, Body is sent
	// raw with ContentType (default text/plain). Status defaults to 500.
	Status      int
	ErrorCode   string
	Message     string
	RetryAfter  string // Retry-After header value, if any
	Body        string
	ContentType string

	Delay time.Duration // FaultDelay
	// Until, when set, ends a FaultDelay (or a FaultHangAfterApply) early:
	// the request is served (or its connection reset) as soon as Until reports true (asked at once, then every untilPollInterval), or
	// after Delay at the latest. Tests hold requests with it until something
	// the coordinator cannot see has happened, such as a consumer joining.
	Until func() bool
	// OnMatch, when set, runs synchronously when the fault is taken by a
	// request, before the fault is applied: a test makes something happen
	// exactly at that moment (another actor's request, a flag), with no
	// timing involved. It may send requests to the coordinator itself.
	OnMatch func()
}

// untilPollInterval is how often a FaultDelay asks its Until.
const untilPollInterval = 10 * time.Millisecond

type faultQueue struct {
	mu     sync.Mutex
	queued []*Fault
}

// InjectFault queues f; the earliest injected fault that matches a request
// applies to it.
func (c *Coordinator) InjectFault(f Fault) {
	if f.Times <= 0 {
		f.Times = 1
	}
	c.faults.mu.Lock()
	defer c.faults.mu.Unlock()
	c.faults.queued = append(c.faults.queued, &f)
}

func (q *faultQueue) take(method, rawPath, route string) (Fault, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for i, f := range q.queued {
		if (f.Method != "" && f.Method != method) || (f.Path != "" && f.Path != rawPath) || (f.Route != "" && f.Route != route) {
			continue
		}
		f.Times--
		if f.Times == 0 {
			q.queued = append(q.queued[:i:i], q.queued[i+1:]...)
		}
		return *f, true
	}
	return Fault{}, false
}

// applyFault performs f; it returns true when the request should then be
// served normally.
func (c *Coordinator) applyFault(f Fault, w http.ResponseWriter, r *http.Request, m *match, rawPath, rawQuery string) bool {
	switch f.Kind {
	case FaultDelay:
		if c.wait(f, nil) {
			return true
		}
		resetConnection(w)
	case FaultResetBeforeApply:
		resetConnection(w)
	case FaultResetAfterApply:
		c.serve(discardWriter{h: http.Header{}}, r, m, rawPath, rawQuery)
		resetConnection(w)
	case FaultRespondAfterApply:
		c.serve(discardWriter{h: http.Header{}}, r, m, rawPath, rawQuery)
		respondFault(w, f)
	case FaultGarbleAfterApply:
		buf := &bufferedWriter{h: http.Header{}}
		c.serve(buf, r, m, rawPath, rawQuery)
		buf.body = buf.body[:len(buf.body)/2]
		buf.copyTo(w)
	case FaultHangAfterApply:
		c.serve(discardWriter{h: http.Header{}}, r, m, rawPath, rawQuery)
		if f.Delay <= 0 {
			f.Delay = time.Minute
		}
		c.wait(f, r.Context().Done())
		resetConnection(w)
	case FaultStoreError:
		c.serveWith(w, r, m, rawPath, rawQuery, storeFailBeforeCommit)
	case FaultStoreErrorAfterCommit:
		c.serveWith(w, r, m, rawPath, rawQuery, storeFailAfterCommit)
	default:
		respondFault(w, f)
	}
	return false
}

// wait waits until f.Delay has passed, f.Until reports true (asked at once,
// then every untilPollInterval), or done is closed; false means Close cut it
// short. A FaultDelay passes no done: the real server keeps working on a
// request whose client gave up, so only shutdown (or Until) ends its wait
// before Delay.
func (c *Coordinator) wait(f Fault, done <-chan struct{}) bool {
	t := time.NewTimer(f.Delay)
	defer t.Stop()
	var poll <-chan time.Time
	if f.Until != nil {
		if f.Until() {
			return true
		}
		tick := time.NewTicker(untilPollInterval)
		defer tick.Stop()
		poll = tick.C
	}
	for {
		select {
		case <-t.C:
			return true
		case <-done:
			return true
		case <-poll:
			if f.Until() {
				return true
			}
		case <-c.closing:
			return false
		}
	}
}

func respondFault(w http.ResponseWriter, f Fault) {
	status := f.Status
	if status == 0 {
		status = http.StatusInternalServerError
	}
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
	}
	if f.ErrorCode != "" {
		writeAPIError(w, errorf(status, f.ErrorCode, f.Message))
		return
	}
	if f.Body != "" {
		ct := f.ContentType
		if ct == "" {
			ct = "text/plain; charset=utf-8"
		}
		w.Header().Set("Content-Type", ct)
	}
	w.WriteHeader(status)
	_, _ = w.Write([]byte(f.Body))
}

// resetConnection drops the connection with an RST (SO_LINGER 0) so the
// client sees a reset, not a clean close. Without a hijackable connection
// (HTTP/2) the handler aborts, which resets the stream.
func resetConnection(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// discardWriter swallows the response of a request whose answer a
// FaultResetAfterApply drops.
type discardWriter struct{ h http.Header }

func (d discardWriter) Header() http.Header         { return d.h }
func (d discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (d discardWriter) WriteHeader(int)             {}
