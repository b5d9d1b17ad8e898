package acctest

// NewConsumer starts a fake member of group {p,g} outside a test (the demo
// uses it). It authenticates as creds, or sends no credentials when creds is
// empty (heartbeats are open by default). The caller must Stop it.
func NewConsumer(endpoint string, creds Credentials, p, g string) (*Consumer, error) {
	return newConsumer(endpoint, creds, "consumer", p, g)
}

// NewStalledConsumer starts, outside a test, a member of group {p,g} that
// heartbeats but never takes a shard, as StartStalledConsumer does (the
// sandbox's stuck consumer): a scale-out of its prefix stays ACTIVE while it
// runs. The caller must Stop it.
func NewStalledConsumer(endpoint string, creds Credentials, p, g string) (*Consumer, error) {
	return startConsumer(endpoint, creds, "stalled-consumer", p, g, true)
}

// Joined reports whether the coordinator has accepted the consumer as a
// member (it holds a member epoch), i.e. it counts as a live consumer.
func (c *Consumer) Joined() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.epoch > 0
}
