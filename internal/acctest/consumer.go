package acctest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// Consumer is a fake consumer group member driven through the real heartbeat
// endpoint (CONTRACT §6), so it works against a real coordinator too. It joins
// with epoch 0, then echoes the last response's epochs and assigned shards,
// which makes it converge to its target assignment like a real consumer.
type Consumer struct {
	MemberID string
	api      *client.Client
	p, g     string
	cancel   context.CancelFunc
	done     chan struct{}
	mu       sync.Mutex
	last     *client.HeartbeatResponse
	epoch    int64
	meta     int64
	owned    []client.ShardID
	silent   bool
	stalled  bool
}

// StartConsumer starts a fake member of group {p,g}; it leaves the group when
// the test ends (or on Stop).
func (e *Env) StartConsumer(t testing.TB, p, g string) *Consumer {
	t.Helper()
	c, err := newConsumer(e.Endpoint, e.memberCredentials(), "tfacc-member", p, g)
	if err != nil {
		t.Fatalf("consumer client: %v", err)
	}
	t.Cleanup(c.Stop)
	return c
}

// StartStalledConsumer starts a member of group {p,g} that heartbeats, so its
// lease does not lapse however long the test takes (against a coordinator
// with the real 15 s leases too), but never takes a shard: it echoes the
// epochs and reports owning nothing, like a consumer whose workers hung after
// it joined. It has nothing to revoke, so the rebalance timeout does not
// fence it, and it never converges, so a scale-out stays ACTIVE, under way,
// until the test stops it (or its cleanup, which leaves the group). Should a
// slow heartbeat still let its lease lapse, it rejoins, and the migration
// stays ACTIVE either way (CONTRACT §7: a scale-out with no live member stays
// ACTIVE). It returns once the coordinator has accepted the member.
func (e *Env) StartStalledConsumer(t testing.TB, p, g string) *Consumer {
	t.Helper()
	api, err := newMemberClient(e.Endpoint, e.memberCredentials())
	if err != nil {
		t.Fatalf("stalled consumer client: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Consumer{MemberID: RandomName("tfacc-stalled"), api: api, p: p, g: g, cancel: cancel, done: make(chan struct{}), stalled: true}
	// The join is this goroutine's, so the member exists when this returns.
	c.beat(ctx)
	c.mu.Lock()
	last := c.last
	c.mu.Unlock()
	if last == nil {
		cancel()
		t.Fatalf("stalled consumer %s could not join %s/%s", c.MemberID, p, g)
	}
	if joinRefused(last.Status) {
		cancel()
		t.Fatalf("stalled consumer %s was not accepted by %s/%s: %s", c.MemberID, p, g, last.Status)
	}
	go c.run(ctx)
	t.Cleanup(c.Stop)
	return c
}

// joinRefused says whether a joining heartbeat's status means the
// coordinator did not accept the member.
func joinRefused(status client.HeartbeatStatus) bool {
	switch status {
	case client.HeartbeatUnknownMemberID, client.HeartbeatFencedMemberEpoch, client.HeartbeatInvalidRequest, client.HeartbeatUnsupportedProtocol:
		return true
	}
	return false
}

// memberCredentials is the MEMBER principal heartbeats need, or the WRITE
// one where the coordinator does not authenticate the member API.
func (e *Env) memberCredentials() Credentials {
	if e.Member.Username == "" {
		return e.Writer
	}
	return e.Member
}

// newMemberClient is the client of a fake member's heartbeats.
func newMemberClient(endpoint string, creds Credentials) (*client.Client, error) {
	return client.New(client.Config{
		Endpoint: endpoint, Username: creds.Username, Password: creds.Password,
		RunID: "tfacc", MaxRetries: 3, RetryWaitMin: 20 * time.Millisecond, RetryWaitMax: 200 * time.Millisecond,
		RequestTimeout: 5 * time.Second,
	})
}

// newConsumer starts the heartbeat loop of a member whose id is idPrefix
// plus a random suffix.
func newConsumer(endpoint string, creds Credentials, idPrefix, p, g string) (*Consumer, error) {
	return startConsumer(endpoint, creds, idPrefix, p, g, false)
}

// startConsumer starts the heartbeat loop of a member; a stalled one never
// takes a shard (StartStalledConsumer).
func startConsumer(endpoint string, creds Credentials, idPrefix, p, g string, stalled bool) (*Consumer, error) {
	api, err := newMemberClient(endpoint, creds)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	c := &Consumer{MemberID: RandomName(idPrefix), api: api, p: p, g: g, cancel: cancel, done: make(chan struct{}), stalled: stalled}
	go c.run(ctx)
	return c, nil
}

func (c *Consumer) run(ctx context.Context) {
	defer close(c.done)
	for {
		interval := c.beat(ctx)
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}

// beat sends one heartbeat and returns the wait before the next.
func (c *Consumer) beat(ctx context.Context) time.Duration {
	c.mu.Lock()
	if c.silent {
		c.mu.Unlock()
		return 50 * time.Millisecond
	}
	req := client.HeartbeatRequest{
		MemberID: c.MemberID, MemberName: "tfacc-fake-consumer",
		MemberEpoch: c.epoch, MetadataVersion: c.meta, OwnedShards: c.owned,
		RuntimeConsumerCapacity: client.RuntimeConsumerCapacity{RuntimeMaxConcurrency: 4, AvailableConcurrency: 4},
	}
	c.mu.Unlock()

	resp, err := c.api.Heartbeat(ctx, c.p, c.g, req)
	if err != nil {
		return 200 * time.Millisecond
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.last = resp
	switch resp.Status {
	case client.HeartbeatUnknownMemberID, client.HeartbeatFencedMemberEpoch, client.HeartbeatInvalidRequest:
		// Rejoin from scratch, as a real consumer does after being fenced.
		c.epoch, c.meta, c.owned = 0, 0, nil
	default:
		c.epoch, c.meta = resp.MemberEpoch, resp.MetadataVersion
		if resp.Status != client.HeartbeatSyncMetadata && !c.stalled {
			c.owned = append([]client.ShardID(nil), resp.Assignment.AssignedShards...)
		}
	}
	interval := time.Duration(resp.HeartbeatIntervalMs) * time.Millisecond
	if interval <= 0 || interval > 3*time.Second {
		interval = 3 * time.Second
	}
	return interval
}

// Silence stops heartbeating without leaving: the member stays live until its
// lease expires, like a crashed consumer.
func (c *Consumer) Silence() {
	c.mu.Lock()
	c.silent = true
	c.mu.Unlock()
}

// Owned is the set of shards the consumer currently reports as owned.
func (c *Consumer) Owned() []client.ShardID {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]client.ShardID(nil), c.owned...)
}

// Stop leaves the group (memberEpoch -1) and ends the heartbeat loop.
func (c *Consumer) Stop() {
	select {
	case <-c.done:
		return
	default:
	}
	c.cancel()
	<-c.done
	c.mu.Lock()
	silent := c.silent
	c.mu.Unlock()
	if silent {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = c.api.Heartbeat(ctx, c.p, c.g, client.HeartbeatRequest{
		MemberID: c.MemberID, MemberEpoch: -1, MetadataVersion: c.meta,
		RuntimeConsumerCapacity: client.RuntimeConsumerCapacity{RuntimeMaxConcurrency: 4, AvailableConcurrency: 0},
	})
}

// JoinSilentMember joins {p,g} with a single heartbeat and never sends
// another: a member that stays live until its lease expires
// (Options.MemberLeaseTTL) and never converges, like a consumer that hung
// right after joining. It returns once the coordinator has accepted the
// member, so a test needs no wait for the join, and nothing can converge
// behind its back. It returns the member id.
func (e *Env) JoinSilentMember(t testing.TB, p, g string) string {
	t.Helper()
	api, err := newMemberClient(e.Endpoint, e.memberCredentials())
	if err != nil {
		t.Fatalf("silent member client: %v", err)
	}
	id := RandomName("tfacc-silent")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	resp, err := api.Heartbeat(ctx, p, g, client.HeartbeatRequest{
		MemberID: id, MemberName: "tfacc-silent-consumer",
		RuntimeConsumerCapacity: client.RuntimeConsumerCapacity{RuntimeMaxConcurrency: 4, AvailableConcurrency: 4},
	})
	if err != nil {
		t.Fatalf("silent member %s could not join %s/%s: %v", id, p, g, err)
	}
	if joinRefused(resp.Status) {
		t.Fatalf("silent member %s was not accepted by %s/%s: %s", id, p, g, resp.Status)
	}
	return id
}
