package coordinator

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// Stream provisioning (CONTRACT §4.2, §4.5, §4.6): with
// Options.StreamProvisioning the coordinator runs XGROUP CREATE p:i g $
// MKSTREAM for every shard of a created or scaled group, which makes the
// Redis stream keys p:0..n-1. The in-repo coordinator keeps those keys in an
// in-memory set, so tests can see what a failed create leaves behind and
// clear it as a user would with redis-cli.

// Provisioning operations a ProvisioningFault can target.
const (
	ProvisionCreate  = "create"  // create stream or create group
	ProvisionScale   = "scale"   // stream or group scale
	ProvisionRouting = "routing" // producer-routing re-provisioning
)

// ProvisioningFault makes one provisioning run fail with 503
// REDIS_STREAM_PROVISIONING_FAILED after AfterShards shards were provisioned
// (XGROUP CREATE succeeded, and with StreamProvisioning their keys
// p:0..AfterShards-1 exist). It applies whether or not StreamProvisioning is
// on; only the keys need it.
//
// On a create the group's metadata is deleted again and the keys stay; on a
// scale the migration stays PREPARING with the old shard count; on producer
// routing the GET answers 503.
type ProvisioningFault struct {
	StreamPrefix  string // "" matches any prefix
	ConsumerGroup string // "" matches any group
	Operation     string // ProvisionCreate, ProvisionScale, ProvisionRouting; "" matches all
	// AfterShards is k: shards 0..k-1 are provisioned, shard k fails. A run
	// that provisions k shards or fewer cannot fail, and uses the fault up.
	AfterShards int
	Times       int // matching runs affected; ≤ 0 means 1
}

// FailProvisioning queues f; the earliest queued fault that matches a
// provisioning run applies to it.
func (c *Coordinator) FailProvisioning(f ProvisioningFault) {
	if f.Times <= 0 {
		f.Times = 1
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.provFaults = append(c.provFaults, &f)
}

// takeProvisioningFault returns the shard index that fails, or -1; the
// caller holds c.mu.
func (c *Coordinator) takeProvisioningFault(prefix, group, op string) int {
	for i, f := range c.provFaults {
		if (f.StreamPrefix != "" && f.StreamPrefix != prefix) || (f.ConsumerGroup != "" && f.ConsumerGroup != group) ||
			(f.Operation != "" && f.Operation != op) {
			continue
		}
		f.Times--
		if f.Times == 0 {
			c.provFaults = append(c.provFaults[:i:i], c.provFaults[i+1:]...)
		}
		return f.AfterShards
	}
	return -1
}

// provisionLocked provisions shards 0..n-1 of g; the caller holds c.mu.
func (c *Coordinator) provisionLocked(g *group, n int, op string) *apiError {
	failAt := c.takeProvisioningFault(g.prefix, g.name, op)
	made := n
	if failAt >= 0 && failAt < n {
		made = failAt
	}
	// Without provisioning nothing is made: no loop over the shards, so a
	// group of 2147483647 shards is as cheap as any (the server sets no
	// upper bound).
	for i := 0; c.opts.StreamProvisioning && i < made; i++ {
		c.redisKeys[shardKeyName(g.prefix, i)] = true
	}
	if made < n {
		return provisioningFailed(g, made)
	}
	return nil
}

func provisioningFailed(g *group, shard int) *apiError {
	return errorf(http.StatusServiceUnavailable, CodeRedisProvisioningFailed, fmt.Sprintf(
		"Failed to provision Redis stream %s for consumer group %s", shardKeyName(g.prefix, shard), g.name))
}

func shardKeyName(prefix string, i int) string { return prefix + ":" + strconv.Itoa(i) }

// prefixKeysExist is the first-group check of a create with provisioning
// on: the plain key p or any of p:0..n-1.
func (c *Coordinator) prefixKeysExist(prefix string, n int) bool {
	if c.redisKeys[prefix] {
		return true
	}
	for i := 0; i < n; i++ {
		if c.redisKeys[shardKeyName(prefix, i)] {
			return true
		}
	}
	return false
}

// RedisKeys lists the Redis keys the coordinator knows for prefix: "p"
// itself and "p:i", ordered by shard index. Only StreamProvisioning makes
// keys (plus SetRedisKey).
func (c *Coordinator) RedisKeys(prefix string) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for k := range c.redisKeys {
		if k == prefix {
			out = append(out, k)
			continue
		}
		if rest, ok := strings.CutPrefix(k, prefix+":"); ok {
			if _, err := strconv.Atoi(rest); err == nil {
				out = append(out, k)
			}
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		return keyIndex(prefix, a) - keyIndex(prefix, b)
	})
	return out
}

func keyIndex(prefix, key string) int {
	n, err := strconv.Atoi(strings.TrimPrefix(key, prefix+":"))
	if err != nil {
		return -1 // the plain prefix key first
	}
	return n
}

// DeleteRedisKeys deletes keys (as redis-cli DEL would) and returns how many
// existed.
func (c *Coordinator) DeleteRedisKeys(keys ...string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, k := range keys {
		if c.redisKeys[k] {
			delete(c.redisKeys, k)
			n++
		}
	}
	return n
}

// SetRedisKey creates a Redis key, e.g. a stream another tool wrote to.
func (c *Coordinator) SetRedisKey(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.redisKeys[key] = true
}

// CreateHold holds one create mid-provisioning: the group's metadata is
// claimed (GET answers 200, a second create 409 GROUP_ALREADY_EXISTS) and the
// request waits, as a real create queued on the state mutex or still
// provisioning does, until the test releases it.
type CreateHold struct {
	prefix, group string
	reached       chan struct{}
	outcome       chan int // -1 = succeed, k ≥ 0 = fail after k shards
}

// HoldCreate arms a hold for the next create of {prefix, group} (create
// stream holds {p, p}). The create is held after its metadata claim, before
// provisioning.
func (c *Coordinator) HoldCreate(prefix, group string) *CreateHold {
	h := &CreateHold{prefix: prefix, group: group, reached: make(chan struct{}), outcome: make(chan int, 1)}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.holds = append(c.holds, h)
	return h
}

// Reached is closed once the create is held, with the group visible.
func (h *CreateHold) Reached() <-chan struct{} { return h.reached }

// Release lets the held create provision successfully and answer 201. It
// may be called before the create arrives.
func (h *CreateHold) Release() { h.finish(-1) }

// FailProvisioning lets the held create fail after afterShards shards: 503
// REDIS_STREAM_PROVISIONING_FAILED, metadata deleted again, keys
// p:0..afterShards-1 left (with StreamProvisioning).
func (h *CreateHold) FailProvisioning(afterShards int) { h.finish(max(afterShards, 0)) }

func (h *CreateHold) finish(v int) {
	select {
	case h.outcome <- v:
	default: // already decided
	}
}

// takeHold removes and returns the hold for {prefix, group}; the caller
// holds c.mu.
func (c *Coordinator) takeHold(prefix, group string) *CreateHold {
	for i, h := range c.holds {
		if h.prefix == prefix && h.group == group {
			c.holds = append(c.holds[:i:i], c.holds[i+1:]...)
			return h
		}
	}
	return nil
}

// provisionNewGroupLocked is the end of both creates: claim the metadata,
// wait out a hold, provision the initial shards. On a provisioning failure
// the metadata is deleted again (if it is still this group's) and the keys
// made so far stay. The caller holds c.mu; it is released while held.
func (c *Coordinator) provisionNewGroupLocked(g *group) *apiError {
	key := groupKey{g.prefix, g.name}
	c.groups[key] = g
	failAt := -1
	if h := c.takeHold(g.prefix, g.name); h != nil {
		c.mu.Unlock()
		close(h.reached)
		select {
		case failAt = <-h.outcome:
		case <-c.closing:
		}
		c.mu.Lock()
	}
	var e *apiError
	if failAt >= 0 {
		for i := 0; i < failAt && i < g.shardCount; i++ {
			if c.opts.StreamProvisioning {
				c.redisKeys[shardKeyName(g.prefix, i)] = true
			}
		}
		e = provisioningFailed(g, min(failAt, max(g.shardCount-1, 0)))
	} else {
		e = c.provisionLocked(g, g.shardCount, ProvisionCreate)
	}
	if e != nil && c.groups[key] == g {
		delete(c.groups, key)
	}
	return e
}
