package coordinator

// ClearFaults drops every queued fault that no request has taken yet, so a
// test that injected faults for one command can be sure none is left for
// the next.
func (c *Coordinator) ClearFaults() {
	c.faults.mu.Lock()
	defer c.faults.mu.Unlock()
	c.faults.queued = nil
}

// ClearProvisioningFaults drops every queued provisioning fault
// (FailProvisioning) that no provisioning run has used up yet: Redis is
// healthy again.
func (c *Coordinator) ClearProvisioningFaults() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.provFaults = nil
}
