package coordinator

import (
	"errors"
	"net/http"
	"strconv"
	"time"
)

// exchange is one request on its way through the pipeline.
type exchange struct {
	c         *Coordinator
	w         *statusWriter
	r         *http.Request
	m         *match
	rawPath   string
	rawQuery  string
	start     time.Time
	principal *principal
	body      []byte // set only once the JSON converter consumed it, as the audit filter sees it
}

// ServeHTTP runs the pipeline: request counting, fault injection, Tomcat URI
// checks, 405, audit, auth interceptor, rate limit, handler.
func (c *Coordinator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !c.inflight.enter() {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	defer c.inflight.leave()
	rawPath, rawQuery := rawRequestPath(r)
	m := resolve(r.Method, rawPath)
	routeKey := m.routeKey(rawPath)
	c.counts.add(r.Method, routeKey, r.Header.Get("X-Request-Id"))
	if f, ok := c.faults.take(r.Method, rawPath, routeKey); ok {
		if f.OnMatch != nil {
			f.OnMatch()
		}
		if !c.applyFault(f, w, r, m, rawPath, rawQuery) {
			return
		}
	}
	c.serve(w, r, m, rawPath, rawQuery)
}

// storeFailure says where an injected store failure hits a request.
type storeFailure int

const (
	storeOK storeFailure = iota
	storeFailBeforeCommit
	storeFailAfterCommit
)

func (c *Coordinator) serve(w http.ResponseWriter, r *http.Request, m *match, rawPath, rawQuery string) {
	c.serveWith(w, r, m, rawPath, rawQuery, storeOK)
}

func (c *Coordinator) serveWith(w http.ResponseWriter, r *http.Request, m *match, rawPath, rawQuery string, sf storeFailure) {
	if sf == storeFailAfterCommit {
		// The handler answers into a buffer (its status goes to the audit
		// record). A request the coordinator refused is answered as usual;
		// a successful one gets the 500 instead.
		clientW, buf := w, &bufferedWriter{h: http.Header{}}
		w = buf
		defer func() {
			if buf.status >= 400 {
				buf.copyTo(clientW)
				return
			}
			writeFrameworkError(clientW, http.StatusInternalServerError, rawPath, c.now())
		}()
	}
	x := &exchange{c: c, w: &statusWriter{ResponseWriter: w}, r: r, m: m, rawPath: rawPath, rawQuery: rawQuery, start: c.now()}
	switch {
	case m.badURI:
		writeTomcatBadRequest(x.w)
		return
	case m.route != nil && m.ep == nil:
		// The handler lookup fails before any interceptor runs.
		x.w.Header().Set("Allow", m.route.allow())
		x.frameworkError(http.StatusMethodNotAllowed)
		return
	case !m.inAPI && m.ep == nil:
		x.frameworkError(http.StatusNotFound)
		return
	}
	if m.ep != nil && m.ep.action != "" {
		defer c.recordAudit(x, m.ep.action)
	}
	defer x.recoverPanic()
	if !x.authorize() || !x.checkRateLimit() {
		return
	}
	if m.ep == nil {
		// Unknown path under /coord/v1: the static-resource handler answers
		// after the interceptors ran.
		x.frameworkError(http.StatusNotFound)
		return
	}
	if sf == storeFailBeforeCommit {
		x.frameworkError(http.StatusInternalServerError)
		return
	}
	m.ep.handle(x)
}

// authorize is the auth interceptor; false means it answered 401/403.
func (x *exchange) authorize() bool {
	need := grantRead
	switch {
	case x.m.ep != nil && x.m.ep.access == accessPublic:
		return true
	case x.m.ep != nil && x.m.ep.access == accessHeartbeat:
		if !x.c.opts.AuthenticateMemberAPI {
			return true
		}
		need = grantMember
	case x.r.Method != http.MethodGet && x.r.Method != http.MethodHead:
		need = grantWrite
	}
	p, ok := x.c.authenticate(x.r.Header.Get("Authorization"))
	if !ok {
		writeUnauthorized(x.w)
		return false
	}
	x.principal = p
	if !p.has(need) {
		writeForbidden(x.w)
		return false
	}
	return true
}

func (x *exchange) checkRateLimit() bool {
	if !x.c.opts.RateLimitEnabled {
		return true
	}
	key, limited := x.m.rateLimitKey(x.r.Method)
	if !limited {
		return true
	}
	retryAfter, ok := x.c.limiter.allow(x.principal.name+":"+key, x.m.raw["streamPrefix"], x.c.now(), x.c.opts.RateLimitPerWindow, x.c.opts.RateLimitWindow)
	if ok {
		return true
	}
	x.w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	writeAPIError(x.w, errorf(http.StatusTooManyRequests, CodeRateLimitExceeded, rateLimitMessage))
	return false
}

func (x *exchange) recoverPanic() {
	v := recover()
	if v == nil {
		return
	}
	if err, ok := v.(error); ok && errors.Is(err, http.ErrAbortHandler) {
		panic(v)
	}
	if !x.w.written() {
		x.frameworkError(http.StatusInternalServerError)
	}
}

func (x *exchange) frameworkError(status int) {
	writeFrameworkError(x.w, status, x.rawPath, x.c.now())
}

func (x *exchange) fail(e *apiError) { writeAPIError(x.w, e) }

func (x *exchange) reply(status int, v any) { writeJSON(x.w, status, v) }

// statusWriter remembers the status for the audit record.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

func (s *statusWriter) written() bool { return s.status != 0 }

func (s *statusWriter) code() int {
	if s.status == 0 {
		return http.StatusOK
	}
	return s.status
}

// bufferedWriter keeps a response so it can be sent later, or not at all.
type bufferedWriter struct {
	h      http.Header
	status int
	body   []byte
}

func (b *bufferedWriter) Header() http.Header { return b.h }

func (b *bufferedWriter) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}

func (b *bufferedWriter) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	b.body = append(b.body, p...)
	return len(p), nil
}

func (b *bufferedWriter) copyTo(w http.ResponseWriter) {
	for k, v := range b.h {
		w.Header()[k] = v
	}
	w.WriteHeader(b.status)
	_, _ = w.Write(b.body)
}
