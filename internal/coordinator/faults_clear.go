package coordinator

// ClearFaults drops every queued fault that no request has taken yet, so a
// test that injected faults for one command can be sure none is left for
// the next.
func (c *Coordinator) ClearFaults() {
	c.faults.mu.Lock()
	defer c.faults.mu.Unlock()
	c.faults.queued = nil
}
