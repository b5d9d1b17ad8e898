package acctest

import (
	"context"
	"time"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// NewConsumer starts a fake member of group {p,g} outside a test (the demo
// uses it). It authenticates as creds, or sends no credentials when creds is
// empty (heartbeats are open by default). The caller must Stop it.
func NewConsumer(endpoint string, creds Credentials, p, g string) (*Consumer, error) {
	api, err := client.New(client.Config{
		Endpoint: endpoint, Username: creds.Username, Password: creds.Password,
		RunID: "consumer", MaxRetries: 2, RetryWaitMin: 20 * time.Millisecond, RetryWaitMax: 100 * time.Millisecond,
		RequestTimeout: 5 * time.Second,
	})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Consumer{MemberID: RandomName("consumer"), api: api, p: p, g: g, cancel: cancel, done: make(chan struct{})}
	go c.run(ctx)
	return c, nil
}

// Joined reports whether the coordinator has accepted the consumer as a
// member (it holds a member epoch), i.e. it counts as a live consumer.
func (c *Consumer) Joined() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.epoch > 0
}
