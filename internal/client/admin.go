package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/blank"
)

// Mutation carries the audit fields of one admin mutation. Blank fields are
// filled from the client defaults (RequestID from NewRequestID). A caller
// re-sending a logical operation after an ambiguous failure passes the SAME
// RequestID explicitly so the audit log shows both attempts as one operation.
type Mutation struct {
	RequestID, RequestedBy, Reason string
}

// fill applies defaults; requestedBy and reason are never sent blank because
// delete, scale and rollback reject a blank reason with 400.
func (c *Client) fill(m Mutation, operation string) Mutation {
	m.RequestID = strings.TrimSpace(m.RequestID)
	if m.RequestID == "" {
		m.RequestID = c.NewRequestID(operation)
	}
	if blank.Body(m.RequestedBy) {
		m.RequestedBy = c.requestedBy
	}
	if blank.Body(m.Reason) {
		m.Reason = c.defaultReason
	}
	return m
}

// escapeSegment percent-encodes one path segment. url.PathEscape already
// encodes "/", ";", "," and "?"; ";" is forced again because Spring would
// otherwise cut the segment at it (matrix parameters). ":" stays literal.
func escapeSegment(s string) string {
	return strings.ReplaceAll(url.PathEscape(s), ";", "%3B")
}

// streamPath builds "/streams/{p}" plus escaped extra segments.
func streamPath(p string, extra ...string) (string, error) {
	if blank.Name(p) {
		return "", fmt.Errorf("coordinator client: stream prefix must not be blank")
	}
	var b strings.Builder
	b.WriteString("/streams/" + escapeSegment(p))
	for _, seg := range extra {
		if blank.Name(seg) {
			return "", fmt.Errorf("coordinator client: path segment after stream prefix %q must not be blank", p)
		}
		b.WriteString("/" + escapeSegment(seg))
	}
	return b.String(), nil
}

// groupPath builds "/streams/{p}/groups/{g}" plus escaped extra segments.
func groupPath(p, g string, extra ...string) (string, error) {
	if blank.Name(g) {
		return "", fmt.Errorf("coordinator client: consumer group must not be blank")
	}
	return streamPath(p, append([]string{"groups", g}, extra...)...)
}

type createBody struct {
	InitialShardCount *int32 `json:"initialShardCount,omitempty"`
	RequestedBy       string `json:"requestedBy"`
	Reason            string `json:"reason"`
}

type deleteBody struct {
	RequestedBy string `json:"requestedBy"`
	Reason      string `json:"reason"`
	Force       bool   `json:"force"`
}

type scaleBody struct {
	TargetShardCount int32  `json:"targetShardCount"` // always sent: 0 means full drain
	RequestedBy      string `json:"requestedBy"`
	Reason           string `json:"reason"`
}

type auditBody struct {
	RequestedBy string `json:"requestedBy"`
	Reason      string `json:"reason"`
}

// CreateStream creates stream prefix p and its single group {p, p}
// (POST /streams/{p}). A nil initialShardCount lets the server default (12).
// It is never re-sent after a failure that may have reached the server; such
// failures are AmbiguousError. A re-send that gets 409 GROUP_ALREADY_EXISTS or
// STREAM_PREFIX_ALREADY_EXISTS must be confirmed by reading the group.
func (c *Client) CreateStream(ctx context.Context, p string, initialShardCount *int32, m Mutation) (*CreateStreamResponse, error) {
	path, err := streamPath(p)
	if err != nil {
		return nil, err
	}
	m = c.fill(m, "create-stream")
	var out CreateStreamResponse
	err = c.do(ctx, &call{
		method: http.MethodPost, path: path, operation: "create-stream", requestID: m.RequestID,
		body:   createBody{InitialShardCount: initialShardCount, RequestedBy: m.RequestedBy, Reason: m.Reason},
		resend: resendNever, create: true, out: &out,
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateGroup creates {p, g} (POST /streams/{p}/groups/{g}), the only way to
// create an arbitrary group. It does not inherit sibling groups' shard count.
// Like CreateStream it is never re-sent after an ambiguous failure.
func (c *Client) CreateGroup(ctx context.Context, p, g string, initialShardCount *int32, m Mutation) (*Group, error) {
	path, err := groupPath(p, g)
	if err != nil {
		return nil, err
	}
	m = c.fill(m, "create-group")
	var out Group
	err = c.do(ctx, &call{
		method: http.MethodPost, path: path, operation: "create-group", requestID: m.RequestID,
		body:   createBody{InitialShardCount: initialShardCount, RequestedBy: m.RequestedBy, Reason: m.Reason},
		resend: resendNever, create: true, out: &out, expect: groupAnswer(p, g),
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// GetGroup reads {p, g} (GET /streams/{p}/groups/{g}).
func (c *Client) GetGroup(ctx context.Context, p, g string) (*Group, error) {
	return getGroupAt(ctx, c, "", p, g, "get-group")
}

// DeleteGroup deletes the coordinator metadata of {p, g}; Redis streams stay.
// It returns the group as it was before the delete. Like every mutation it is
// not re-sent after a lost answer (AmbiguousError): the caller reads the
// group back (404 = deleted) and re-sends with the same request id if not.
func (c *Client) DeleteGroup(ctx context.Context, p, g string, force bool, m Mutation) (*Group, error) {
	path, err := groupPath(p, g)
	if err != nil {
		return nil, err
	}
	m = c.fill(m, "delete-group")
	var out Group
	err = c.do(ctx, &call{
		method: http.MethodDelete, path: path, operation: "delete-group", requestID: m.RequestID,
		body:   deleteBody{RequestedBy: m.RequestedBy, Reason: m.Reason, Force: force},
		resend: resendNever, out: &out, expect: groupAnswer(p, g),
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// ProducerRouting reads the routing producers use
// (GET /streams/{p}/groups/{g}/producer-routing). With provisioning enabled
// it re-provisions shards, so it may answer 503 REDIS_*.
func (c *Client) ProducerRouting(ctx context.Context, p, g string) (*ProducerRouting, error) {
	path, err := groupPath(p, g, "producer-routing")
	if err != nil {
		return nil, err
	}
	var out ProducerRouting
	if err := c.do(ctx, &call{method: http.MethodGet, path: path, operation: "producer-routing", out: &out, expect: routingAnswer(p, g)}); err != nil {
		return nil, err
	}
	return &out, nil
}

// ScaleStream scales every group under prefix p (POST /streams/{p}/scale,
// 202). The 202 is not completion: poll each migration until Finished.
//
// A lost answer (no answer, a proxy's 5xx, an unreadable 202) is an
// AmbiguousError, never re-sent by the transport: the caller reads the groups
// back, adopts a migration that already targets the count, and re-sends with
// the same request id only when nothing changed.
func (c *Client) ScaleStream(ctx context.Context, p string, target int32, m Mutation) (*StreamScaleResponse, error) {
	path, err := streamPath(p, "scale")
	if err != nil {
		return nil, err
	}
	m = c.fill(m, "scale-stream")
	var out StreamScaleResponse
	err = c.do(ctx, &call{
		method: http.MethodPost, path: path, operation: "scale-stream", requestID: m.RequestID,
		body:   scaleBody{TargetShardCount: target, RequestedBy: m.RequestedBy, Reason: m.Reason},
		resend: resendNever, out: &out, expect: streamScaleAnswer(p),
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// ScaleGroup scales one group (POST /streams/{p}/groups/{g}/scale, 202).
// A lost answer is an AmbiguousError, as for ScaleStream.
func (c *Client) ScaleGroup(ctx context.Context, p, g string, target int32, m Mutation) (*Migration, error) {
	path, err := groupPath(p, g, "scale")
	if err != nil {
		return nil, err
	}
	m = c.fill(m, "scale-group")
	var out Migration
	err = c.do(ctx, &call{
		method: http.MethodPost, path: path, operation: "scale-group", requestID: m.RequestID,
		body:   scaleBody{TargetShardCount: target, RequestedBy: m.RequestedBy, Reason: m.Reason},
		resend: resendNever, out: &out, expect: migrationAnswer(""),
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// GetMigration reads one migration. "noop" is never stored and answers 404
// MIGRATION_NOT_FOUND.
func (c *Client) GetMigration(ctx context.Context, p, g, reshardingID string) (*Migration, error) {
	path, err := groupPath(p, g, "migrations", reshardingID)
	if err != nil {
		return nil, err
	}
	var out Migration
	if err := c.do(ctx, &call{method: http.MethodGet, path: path, operation: "get-migration", out: &out, expect: migrationAnswer(reshardingID)}); err != nil {
		return nil, err
	}
	return &out, nil
}

// RollbackPath is the API path of a migration's rollback, each name
// percent-encoded as the client sends it, for messages that tell a user which
// call to make by hand.
func RollbackPath(p, g, reshardingID string) string {
	path, err := groupPath(p, g, "migrations", reshardingID, "rollback")
	if err != nil {
		return APIBasePath + "/streams/{streamPrefix}/groups/{consumerGroup}/migrations/{reshardingId}/rollback"
	}
	return APIBasePath + path
}

// RollbackMigration rolls the group's ACTIVE migration straight to
// ROLLED_BACK (202); other states answer 422 ROLLBACK_NOT_ALLOWED. Rollback
// is idempotent, but a lost answer is still an AmbiguousError: the caller
// reads the migration back, and a re-send (same request id) of a migration
// already ROLLED_BACK answers 202 with the same object.
func (c *Client) RollbackMigration(ctx context.Context, p, g, reshardingID string, m Mutation) (*Migration, error) {
	path, err := groupPath(p, g, "migrations", reshardingID, "rollback")
	if err != nil {
		return nil, err
	}
	m = c.fill(m, "rollback-migration")
	var out Migration
	err = c.do(ctx, &call{
		method: http.MethodPost, path: path, operation: "rollback-migration", requestID: m.RequestID,
		body:   auditBody{RequestedBy: m.RequestedBy, Reason: m.Reason},
		resend: resendNever, out: &out, expect: migrationAnswer(reshardingID),
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// getGroupAt reads a GroupResponse from the admin or monitoring variant.
func getGroupAt(ctx context.Context, c *Client, prefix, p, g, operation string) (*Group, error) {
	path, err := groupPath(p, g)
	if err != nil {
		return nil, err
	}
	var out Group
	if err := c.do(ctx, &call{method: http.MethodGet, path: prefix + path, operation: operation, out: &out, expect: groupAnswer(p, g)}); err != nil {
		return nil, err
	}
	return &out, nil
}
