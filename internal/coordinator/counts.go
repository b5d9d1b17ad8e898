package coordinator

import (
	"maps"
	"strings"
	"sync"
)

// requestCounter counts every request that reaches the handler, faulted
// or not, by "METHOD route".
type requestCounter struct {
	mu sync.Mutex
	m  map[string]int
	// ids are the X-Request-Id values of every request, by "METHOD route".
	ids map[string][]string
}

func (r *requestCounter) add(method, route, requestID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.m[method+" "+route]++
	if r.ids == nil {
		r.ids = map[string][]string{}
	}
	r.ids[method+" "+route] = append(r.ids[method+" "+route], requestID)
}

// RequestCountWithID returns how many requests arrived for method and route
// with an X-Request-Id containing part (a client's operation name, say).
func (c *Coordinator) RequestCountWithID(method, route, part string) int {
	c.counts.mu.Lock()
	defer c.counts.mu.Unlock()
	n := 0
	for _, id := range c.counts.ids[method+" "+route] {
		if strings.Contains(id, part) {
			n++
		}
	}
	return n
}

// RequestCount returns how many requests arrived for method and route
// pattern (e.g. RouteGroup); unmatched paths are counted under the raw path.
func (c *Coordinator) RequestCount(method, route string) int {
	c.counts.mu.Lock()
	defer c.counts.mu.Unlock()
	return c.counts.m[method+" "+route]
}

// RequestCounts returns a copy of all counts keyed "METHOD route".
func (c *Coordinator) RequestCounts() map[string]int {
	c.counts.mu.Lock()
	defer c.counts.mu.Unlock()
	return maps.Clone(c.counts.m)
}

// ResetRequestCounts forgets all counts.
func (c *Coordinator) ResetRequestCounts() {
	c.counts.mu.Lock()
	defer c.counts.mu.Unlock()
	c.counts.m = map[string]int{}
	c.counts.ids = nil
}

// RequestIDs returns the X-Request-Id values of the requests that arrived
// for method and route, in arrival order.
func (c *Coordinator) RequestIDs(method, route string) []string {
	c.counts.mu.Lock()
	defer c.counts.mu.Unlock()
	return append([]string(nil), c.counts.ids[method+" "+route]...)
}
