package coordinator

import (
	"fmt"
	"net/http"
	"time"
)

// bindScale binds a scale body (§4.6): targetShardCount is a non-null Int
// without default, so leaving it out is a framework 400, not a validation
// error.
func (x *exchange) bindScale() (int, bool) {
	f, ok := x.requiredBody()
	if !ok {
		return 0, false
	}
	target := f.reqInt("targetShardCount", 32)
	requestedBy, reason := f.str("requestedBy"), f.str("reason")
	f.anyScalarOrNull("deprecatedAfter") // accepted and ignored
	if !x.bound(f) {
		return 0, false
	}
	var v violations
	v.min("targetShardCount", &target, 0)
	v.notBlank("requestedBy", requestedBy)
	v.notBlank("reason", reason)
	if e := v.err(); e != nil {
		x.fail(e)
		return 0, false
	}
	return int(target), true
}

type streamScaleView struct {
	StreamPrefix           string          `json:"streamPrefix"`
	TargetShardCount       int             `json:"targetShardCount"`
	AffectedConsumerGroups []string        `json:"affectedConsumerGroups"`
	Migrations             []migrationView `json:"migrations"`
}

// scaleStream scales every group of the prefix in name order (§4.6). A
// provisioning failure part-way leaves earlier groups ACTIVE.
func (x *exchange) scaleStream() {
	target, ok := x.bindScale()
	if !ok {
		return
	}
	p := x.m.vars["streamPrefix"]
	c := x.c
	c.mu.Lock()
	defer c.mu.Unlock()
	groups := c.groupsOfPrefix(p)
	if len(groups) == 0 {
		x.fail(errorf(http.StatusNotFound, CodeStreamNotFound, "Stream not found: "+p))
		return
	}
	for _, g := range groups {
		if e := blockingMigration(g, target); e != nil {
			x.fail(e)
			return
		}
	}
	failAt, armed := c.failScale[p]
	delete(c.failScale, p)
	now := c.now()
	resp := streamScaleView{StreamPrefix: p, TargetShardCount: target, AffectedConsumerGroups: []string{}, Migrations: []migrationView{}}
	for i, g := range groups {
		mv, e := c.scaleGroupLocked(g, target, now, armed && i == failAt)
		if e != nil {
			x.fail(e)
			return
		}
		resp.AffectedConsumerGroups = append(resp.AffectedConsumerGroups, g.name)
		resp.Migrations = append(resp.Migrations, mv)
	}
	x.reply(http.StatusAccepted, resp)
}

// scaleGroup is the compatibility scale of one group (§4.7).
func (x *exchange) scaleGroup() {
	target, ok := x.bindScale()
	if !ok {
		return
	}
	c := x.c
	c.mu.Lock()
	defer c.mu.Unlock()
	g := x.lookupGroup()
	if g == nil {
		return
	}
	if e := blockingMigration(g, target); e != nil {
		x.fail(e)
		return
	}
	mv, e := c.scaleGroupLocked(g, target, c.now(), false)
	if e != nil {
		x.fail(e)
		return
	}
	x.reply(http.StatusAccepted, mv)
}

// blockingMigration is the pre-check: any active migration blocks a scale,
// even to the current count, except a PREPARING one with the same target,
// which the scale resumes.
func blockingMigration(g *group, target int) *apiError {
	m := g.active()
	if m == nil || (m.state == MigrationPreparing && m.to == target) {
		return nil
	}
	msg := fmt.Sprintf("Active migration %s (%s, %d -> %d) exists for %s/%s", m.id, m.state, m.from, m.to, g.prefix, g.name)
	if m.state == MigrationPreparing {
		msg += fmt.Sprintf("; a PREPARING migration only resumes with a scale to its own target %d", m.to)
	}
	return errorf(http.StatusConflict, CodeActiveMigrationExists, msg)
}

// scaleGroupLocked runs the synchronous scale step of one group: record
// PREPARING, provision, then ACTIVE with the new shard count, bumped
// metadataVersion and groupEpoch and a recomputed target assignment. A scale
// to the current count is a noop that is never stored. failProvisioning
// simulates XGROUP CREATE failing, which leaves the migration PREPARING.
func (c *Coordinator) scaleGroupLocked(g *group, target int, now time.Time, failProvisioning bool) (migrationView, *apiError) {
	m := g.active()
	switch {
	case m != nil:
		// Resuming a PREPARING migration with the same target.
	case g.shardCount == target:
		noop := migration{id: NoopReshardingID, from: target, to: target, state: MigrationDeprecated, createdAt: now, updatedAt: now}
		return noop.view(), nil
	default:
		m = &migration{id: newReshardingID(), from: g.shardCount, to: target, state: MigrationPreparing, createdAt: now, updatedAt: now}
		g.migrations = append(g.migrations, m)
		g.activeID = m.id
	}
	if target > 0 { // a scale to 0 provisions nothing
		if failProvisioning {
			return migrationView{}, errorf(http.StatusServiceUnavailable, CodeRedisProvisioningFailed, fmt.Sprintf(
				"Failed to provision Redis stream shards %s:0..%d for consumer group %s", g.prefix, target-1, g.name))
		}
		if e := c.provisionLocked(g, target, ProvisionScale); e != nil {
			return migrationView{}, e
		}
	}
	m.state, m.updatedAt = MigrationActive, now
	g.shardCount = target
	g.bumpMetadata(true)
	return m.view(), nil
}

func (x *exchange) getMigration() {
	x.c.mu.Lock()
	defer x.c.mu.Unlock()
	if _, m := x.lookupMigration(); m != nil {
		x.reply(http.StatusOK, m.view())
	}
}

// lookupMigration finds the path's group and stored migration; on a nil
// migration the 404 has been written. "noop" is never stored.
func (x *exchange) lookupMigration() (*group, *migration) {
	g := x.lookupGroup()
	if g == nil {
		return nil, nil
	}
	id := x.m.vars["reshardingId"]
	m := g.findMigration(id)
	if m == nil {
		x.fail(errorf(http.StatusNotFound, CodeMigrationNotFound, "Migration not found: "+id))
	}
	return g, m
}

// rollback is immediate (§4.8): ACTIVE → ROLLED_BACK, shard count back to
// fromShardCount. Rolling back a ROLLED_BACK migration again returns it
// unchanged; anything else that is not the active ACTIVE migration is 422.
func (x *exchange) rollback() {
	f, ok := x.requiredBody()
	if !ok {
		return
	}
	requestedBy, reason := f.str("requestedBy"), f.str("reason")
	if !x.bound(f) {
		return
	}
	var v violations
	v.notBlank("requestedBy", requestedBy)
	v.notBlank("reason", reason)
	if e := v.err(); e != nil {
		x.fail(e)
		return
	}
	c := x.c
	c.mu.Lock()
	defer c.mu.Unlock()
	g, m := x.lookupMigration()
	if m == nil {
		return
	}
	if m.state == MigrationRolledBack {
		x.reply(http.StatusAccepted, m.view())
		return
	}
	if g.activeID != m.id || m.state != MigrationActive {
		x.fail(errorf(http.StatusUnprocessableEntity, CodeRollbackNotAllowed, fmt.Sprintf(
			"Rollback is allowed only for the active migration in state ACTIVE; %s is %s", m.id, m.state)))
		return
	}
	m.state, m.updatedAt = MigrationRolledBack, c.now()
	g.shardCount = m.from
	g.activeID = ""
	g.bumpMetadata(true)
	x.reply(http.StatusAccepted, m.view())
}

// FailStreamScaleAt arms a provisioning failure for the next stream scale
// of prefix: groups before groupIndex (name order) scale normally, the group
// at groupIndex keeps its migration PREPARING with the old shard count and
// the call answers 503 REDIS_STREAM_PROVISIONING_FAILED; later groups are
// untouched. A noop group or a target of 0 provisions nothing and so cannot
// fail.
func (c *Coordinator) FailStreamScaleAt(prefix string, groupIndex int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.failScale[prefix] = groupIndex
}
