package coordinator

import (
	"maps"
	"sync"
)

// requestCounter counts every request that reaches the handler, faulted
// or not, by "METHOD route".
type requestCounter struct {
	mu sync.Mutex
	m  map[string]int
}

func (r *requestCounter) add(method, route string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.m[method+" "+route]++
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
}
