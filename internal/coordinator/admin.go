package coordinator

import (
	"net/http"
	"strings"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/blank"
)

// createRequest is the body of both creates (§4.1, §4.2).
type createRequest struct {
	initialShardCount *int64
	requestedBy       string
}

// bindCreate binds and validates a create body; ok=false means the error
// response has been written.
func (x *exchange) bindCreate() (createRequest, bool) {
	f, ok := x.requiredBody()
	if !ok {
		return createRequest{}, false
	}
	req := createRequest{initialShardCount: f.optInt("initialShardCount", 32), requestedBy: f.str("requestedBy")}
	f.optStr("reason")
	if !x.bound(f) {
		return req, false
	}
	var v violations
	v.min("initialShardCount", req.initialShardCount, 1)
	v.notBlank("requestedBy", req.requestedBy)
	if e := v.err(); e != nil {
		x.fail(e)
		return req, false
	}
	return req, true
}

func (x *exchange) initialShardCount(req createRequest) int {
	if req.initialShardCount == nil {
		return x.c.opts.DefaultInitialShardCount
	}
	return int(*req.initialShardCount)
}

// validateNames is the service's IllegalArgumentException check: the only
// name rules are non-blank names and a prefix without hash-tag braces.
func validateNames(prefix, group string) *apiError {
	switch {
	case blank.Name(prefix):
		return errorf(http.StatusBadRequest, CodeInvalidRequest, "streamPrefix must not be blank")
	case strings.ContainsAny(prefix, "{}"):
		return errorf(http.StatusBadRequest, CodeInvalidRequest, "streamPrefix must not contain Redis Cluster hash tag braces")
	case blank.Name(group):
		return errorf(http.StatusBadRequest, CodeInvalidRequest, "consumerGroup must not be blank")
	}
	return nil
}

type streamCreateView struct {
	StreamPrefix    string `json:"streamPrefix"`
	ShardCount      int    `json:"shardCount"`
	MetadataVersion int64  `json:"metadataVersion"`
}

// createStream creates only the group {p, p} (§4.1).
func (x *exchange) createStream() {
	req, ok := x.bindCreate()
	if !ok {
		return
	}
	p := x.m.vars["streamPrefix"]
	if e := validateNames(p, p); e != nil {
		x.fail(e)
		return
	}
	c := x.c
	c.mu.Lock()
	defer c.mu.Unlock()
	n := x.initialShardCount(req)
	if len(c.groupsOfPrefix(p)) > 0 || (c.opts.StreamProvisioning && c.prefixKeysExist(p, n)) {
		x.fail(errorf(http.StatusConflict, CodeStreamPrefixAlreadyExists, "Stream prefix already exists: "+p))
		return
	}
	g := newGroup(p, p, n, x.c.opts.Numbering)
	if e := c.provisionNewGroupLocked(g); e != nil {
		x.fail(e)
		return
	}
	x.reply(http.StatusCreated, streamCreateView{StreamPrefix: p, ShardCount: g.shardCount, MetadataVersion: g.metadataVersion})
}

// createGroup is the compatibility create of an arbitrary {p, g} (§4.2). It
// does not inherit sibling groups' shard count.
func (x *exchange) createGroup() {
	req, ok := x.bindCreate()
	if !ok {
		return
	}
	p, name := x.m.vars["streamPrefix"], x.m.vars["consumerGroup"]
	c := x.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, exists := c.groups[groupKey{p, name}]; exists {
		x.fail(errorf(http.StatusConflict, CodeGroupAlreadyExists, "Group already exists: "+p+"/"+name))
		return
	}
	if e := validateNames(p, name); e != nil {
		x.fail(e)
		return
	}
	n := x.initialShardCount(req)
	// With provisioning on, only the first group of a prefix checks the
	// Redis keys; a later group's create provisions over existing keys.
	if c.opts.StreamProvisioning && len(c.groupsOfPrefix(p)) == 0 && c.prefixKeysExist(p, n) {
		x.fail(errorf(http.StatusConflict, CodeStreamPrefixAlreadyExists, "Stream prefix already exists: "+p))
		return
	}
	g := newGroup(p, name, n, x.c.opts.Numbering)
	if e := c.provisionNewGroupLocked(g); e != nil {
		x.fail(e)
		return
	}
	x.reply(http.StatusCreated, g.view())
}

// lookupGroup finds the path's group; the caller holds c.mu. On nil the 404
// has been written.
func (x *exchange) lookupGroup() *group {
	p, name := x.m.vars["streamPrefix"], x.m.vars["consumerGroup"]
	g := x.c.groups[groupKey{p, name}]
	if g == nil {
		x.fail(errorf(http.StatusNotFound, CodeGroupNotFound, "Group not found: "+p+"/"+name))
	}
	return g
}

// getGroup serves both the admin GET and the monitoring summary, which do
// the same thing (§4.3).
func (x *exchange) getGroup() {
	x.c.mu.Lock()
	defer x.c.mu.Unlock()
	if g := x.lookupGroup(); g != nil {
		x.reply(http.StatusOK, g.view())
	}
}

func (x *exchange) producerRouting() {
	x.c.mu.Lock()
	defer x.c.mu.Unlock()
	g := x.lookupGroup()
	if g == nil {
		return
	}
	// DOC≠CODE (§4.5): with provisioning on, routing re-provisions every shard.
	if x.c.opts.StreamProvisioning && g.shardCount > 0 {
		if e := x.c.provisionLocked(g, g.shardCount, ProvisionRouting); e != nil {
			x.fail(e)
			return
		}
	}
	x.reply(http.StatusOK, g.routingView())
}

// deleteGroup removes coordinator metadata only (§4.4). Live members block
// it unless force; an active migration does not.
func (x *exchange) deleteGroup() {
	f, ok := x.requiredBody()
	if !ok {
		return
	}
	requestedBy, reason, force := f.str("requestedBy"), f.str("reason"), f.boolean("force", false)
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
	g := x.lookupGroup()
	if g == nil {
		return
	}
	if !force {
		for _, m := range g.members {
			if m.live() {
				x.fail(errorf(http.StatusConflict, CodeGroupHasActiveMembers,
					"Group "+g.prefix+"/"+g.name+" has active members; stop the consumers or delete with force=true"))
				return
			}
		}
	}
	snapshot := g.view()
	delete(c.groups, groupKey{g.prefix, g.name})
	x.reply(http.StatusOK, snapshot)
}
