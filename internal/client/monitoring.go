package client

import (
	"context"
	"net/http"
)

const monitoringPrefix = "/monitoring"

func (c *Client) get(ctx context.Context, path, operation string, out any) error {
	return c.do(ctx, &call{method: http.MethodGet, path: path, operation: operation, out: out})
}

// Health reads GET /monitoring/health.
func (c *Client) Health(ctx context.Context) (*Health, error) {
	var out Health
	if err := c.get(ctx, monitoringPrefix+"/health", "health", &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Session reads GET /monitoring/session: who the credentials authenticate as
// and which roles they hold.
func (c *Client) Session(ctx context.Context) (*Session, error) {
	var out Session
	if err := c.get(ctx, monitoringPrefix+"/session", "session", &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Compatibility reads GET /monitoring/compatibility.
func (c *Client) Compatibility(ctx context.Context) (*Compatibility, error) {
	var out Compatibility
	if err := c.get(ctx, monitoringPrefix+"/compatibility", "compatibility", &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Groups lists every group (GET /monitoring/groups); use it to find the
// sibling groups a stream-level scale would also touch.
func (c *Client) Groups(ctx context.Context) ([]Group, error) { return c.GroupsFor(ctx, "groups") }

// GroupsFor is Groups, its request id naming operation (a waits' poll
// round is "wait-groups"), so logs and request ids tell the reads apart.
func (c *Client) GroupsFor(ctx context.Context, operation string) ([]Group, error) {
	var out struct {
		Groups []Group `json:"groups"`
	}
	if err := c.do(ctx, &call{method: http.MethodGet, path: monitoringPrefix + "/groups", operation: operation, out: &out, expect: groupsListing()}); err != nil {
		return nil, err
	}
	return out.Groups, nil
}

// GroupSummary reads GET /monitoring/streams/{p}/groups/{g}; it returns the
// same as GetGroup (no refresh happens despite the docs).
func (c *Client) GroupSummary(ctx context.Context, p, g string) (*Group, error) {
	return getGroupAt(ctx, c, monitoringPrefix, p, g, "group-summary")
}

// Members lists the group's members.
func (c *Client) Members(ctx context.Context, p, g string) ([]Member, error) {
	path, err := groupPath(p, g, "members")
	if err != nil {
		return nil, err
	}
	var out struct {
		Members []Member `json:"members"`
	}
	if err := c.get(ctx, monitoringPrefix+path, "members", &out); err != nil {
		return nil, err
	}
	return out.Members, nil
}

// Assignments reads the group's target/current assignments and revoke progress.
func (c *Client) Assignments(ctx context.Context, p, g string) (*Assignments, error) {
	path, err := groupPath(p, g, "assignments")
	if err != nil {
		return nil, err
	}
	var out Assignments
	if err := c.get(ctx, monitoringPrefix+path, "assignments", &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// Consumption lists per-member, per-shard consumption progress.
func (c *Client) Consumption(ctx context.Context, p, g string) ([]ConsumptionProgress, error) {
	path, err := groupPath(p, g, "consumption")
	if err != nil {
		return nil, err
	}
	var out struct {
		Progress []ConsumptionProgress `json:"progress"`
	}
	if err := c.get(ctx, monitoringPrefix+path, "consumption", &out); err != nil {
		return nil, err
	}
	return out.Progress, nil
}

// Migrations reads the group's full migration history
// (GET /monitoring/streams/{p}/groups/{g}/migrations).
func (c *Client) Migrations(ctx context.Context, p, g string) (*MigrationHistory, error) {
	path, err := groupPath(p, g, "migrations")
	if err != nil {
		return nil, err
	}
	var out MigrationHistory
	if err := c.do(ctx, &call{method: http.MethodGet, path: monitoringPrefix + path, operation: "migrations", out: &out, expect: migrationHistory()}); err != nil {
		return nil, err
	}
	return &out, nil
}
