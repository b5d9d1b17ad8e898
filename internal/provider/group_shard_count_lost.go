package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
)

// errDiagnosed: a read-back failed and said so in the diagnostics itself.
var errDiagnosed = errors.New("reported in the diagnostics")

// scaleStream sends the stream-level scale and settles its outcome by the
// one rule for lost answers (prefix.Settle). A lost answer (no answer, a
// proxy's 5xx, an unreadable 202) is read back before anything else is
// decided: a migration to the target means the scale happened and is
// adopted; the old count without a migration means it did not, and the same
// scale (same request id) is sent again. A scale is not idempotent while its
// migration is active, so a failed read-back sends nothing more. The request
// and its read-back run on a grace context, so an interrupt while it is in
// flight still ends with what happened recorded in state.
func (s *scaler) scaleStream(ctx context.Context, out *scaleOutcome) *scaleOutcome {
	m := s.mutation
	m.RequestID = s.api.NewRequestID("scale-stream")
	mctx, done := graceContext(ctx, "scale-stream "+m.RequestID)
	defer done()
	sends := 0
	var lost error // the answer the read-back settles, for its warning
	res, _, err := prefix.Settle(mctx, prefix.Mutation[*scaleOutcome]{
		What:      fmt.Sprintf("stream scale of stream prefix %q to %d shards", s.p, s.target),
		RequestID: m.RequestID,
		Send: func(ctx context.Context) (*scaleOutcome, error) {
			unlock := s.locks.Lock(s.p)
			defer unlock()
			// Journaled under the prefix lock, so a create of the
			// prefix in this apply either precedes the scale or sees it
			// (verifySiblingBasis).
			s.note(prefix.StreamScale, "", m.RequestID)
			resp, err := s.api.ScaleStream(ctx, s.p, s.target, m)
			if sends == 0 && provedNotApplied(err) {
				s.strike()
			}
			sends++
			if err != nil {
				lost = err
				return nil, err
			}
			for i, name := range resp.AffectedConsumerGroups {
				if i < len(resp.Migrations) {
					out.track(name, resp.Migrations[i])
				}
			}
			tflog.Info(ctx, "stream scale accepted", map[string]any{
				"stream_prefix": s.p, "target_shard_count": s.target, "affected_groups": resp.AffectedConsumerGroups, "request_id": m.RequestID,
			})
			return out, nil
		},
		ReadBack: func(ctx context.Context) (*scaleOutcome, bool, error) {
			applied, adopted := s.readBackScale(ctx, m.RequestID, lost)
			if adopted != nil {
				// Applied, and what it started adopted, even when the
				// take-over then refused to send more (basisHolds).
				return adopted, true, nil
			}
			if s.diags.HasError() {
				return nil, false, errDiagnosed
			}
			return nil, applied, nil
		},
	})
	var un *prefix.UnsettledError
	switch {
	case err == nil:
		return res
	case errors.As(err, &un) && errors.Is(un.ReadBack, errDiagnosed):
		return nil
	case errors.As(err, &un) && un.Reason == prefix.LimitReached:
		addAPIError(s.diags, fmt.Sprintf("Failed to scale stream prefix %q to %d shards", s.p, s.target), un.Lost, fmt.Sprintf(
			"The scale's answer was lost %d times, and each time the groups read back showed it had not happened (still %d shards, no "+
				"migration). Nothing was changed. Check the coordinator's health and the proxy in front of it, then run terraform apply again.",
			un.Sends, s.self.ShardCount))
		return nil
	case client.IsNotSent(err):
		// The interrupt rule (client.WithOperation): nothing new is sent.
		what := fmt.Sprintf("The scale of stream prefix %q to %d shards (request id %s) was not sent: the operation ended first.", s.p, s.target, m.RequestID)
		if errors.As(err, &un) {
			err = un.NotSent
			what = fmt.Sprintf("The scale of stream prefix %q to %d shards (request id %s) was sent, and its answer was lost; reading the "+
				"groups back showed it had not happened (still %d shards, no migration to %d). The operation ended meanwhile, so it "+
				"was not sent again.", s.p, s.target, m.RequestID, s.self.ShardCount, s.target)
		}
		addAPIError(s.diags, fmt.Sprintf("Scale of stream prefix %q to %d shards not sent", s.p, s.target), err, what+
			" Nothing was changed on the coordinator. The next plan shows the same scale again.")
		return nil
	case client.IsConflict(err, client.CodeActiveMigrationExists):
		// A stream scale that failed part-way, a sibling's migration, or
		// a lost scale that landed after the read-back: find out which
		// from the groups.
		tflog.Warn(ctx, "stream scale refused because a migration is active; recovering from the groups' state", map[string]any{"stream_prefix": s.p})
		if !s.redecided {
			// The prefix moved since the record the decision was made
			// from: decide again, once, from a fresh one (it may wait for
			// other migrations, or adopt ours).
			s.redecided = true
			return s.execute(ctx)
		}
		return s.takeOver(mctx, "recovered", nil)
	default:
		addAPIError(s.diags, fmt.Sprintf("Failed to scale stream prefix %q to %d shards", s.p, s.target), err, scaleErrorHint(err))
		return nil
	}
}

// readBackScale reads the prefix's groups after a scale whose outcome is
// unknown. applied: the scale happened (a group has a migration to the
// target, or already has the target count), and the returned outcome adopts
// it (nil after an error). Not applied: every group still has its count and
// no migration to the target, so the caller sends the scale again.
func (s *scaler) readBackScale(ctx context.Context, requestID string, lost error) (bool, *scaleOutcome) {
	siblings, ok := s.prefixGroups(ctx)
	if !ok {
		return false, nil
	}
	var found []string
	underWay := map[string]client.Migration{}
	for _, gi := range siblings {
		if am := gi.ActiveMigration; am != nil && !am.Finished() && am.ToShardCount == s.target {
			found = append(found, fmt.Sprintf("group %q has migration %s (%d→%d shards, %s)", gi.ConsumerGroup, am.ReshardingID, am.FromShardCount, am.ToShardCount, am.State))
			underWay[gi.ConsumerGroup] = *am
		} else if gi.ShardCount == s.target && s.wasBehind(gi.ConsumerGroup) {
			found = append(found, fmt.Sprintf("group %q already has %d shards", gi.ConsumerGroup, s.target))
		}
		if gi.ConsumerGroup == s.g {
			g := gi
			s.self = &g
		}
	}
	if len(found) == 0 {
		return false, nil
	}
	s.landed = found
	out := s.takeOver(ctx, "read back after the scale's answer was lost", underWay)
	if out == nil {
		return true, nil
	}
	s.diags.AddWarning(fmt.Sprintf("The answer to the scale of stream prefix %q was lost; the scale had been applied", s.p), fmt.Sprintf(
		"The scale of stream prefix %q to %d shards (request id %s) got no answer from the coordinator itself: %s.\n\n"+
			"The provider read the groups back: %s. So the coordinator had accepted the scale: this apply adopted its migration(s) and "+
			"waits for them, without sending a second scale.", s.p, s.target, requestID, lostAnswerCause(lost), strings.Join(found, "; ")))
	return true, out
}

// wasBehind reports a group that was not at the target when the stream
// scale was sent (s.before), so finding it there proves the scale landed. A
// group of a split prefix already at the target before proves nothing.
// Without that record only this resource's own group counts, as it was read
// before the scale.
func (s *scaler) wasBehind(g string) bool {
	if s.before == nil {
		return g == s.g
	}
	was := s.before.Group(g)
	return was != nil && was.ShardCount != s.target
}

// lostAnswerCause says in a few words what came back instead of an answer.
func lostAnswerCause(err error) string {
	var amb *client.AmbiguousError
	if !errors.As(err, &amb) {
		return err.Error()
	}
	switch amb.Kind {
	case client.AmbiguousNotCoordinatorAnswer:
		if amb.Status == 500 {
			return "a 500 without the coordinator's errorCode (its store or state mutex failed, or a proxy answered)"
		}
		return fmt.Sprintf("a %d without the coordinator's errorCode, from a proxy or load balancer in front of it", amb.Status)
	case client.AmbiguousUnreadableAnswer:
		return fmt.Sprintf("a %d whose body could not be read", amb.Status)
	}
	if errors.Is(amb.Err, context.Canceled) {
		return "no answer before the operation was interrupted"
	}
	return "no answer (the connection was reset, closed or timed out)"
}

// rollback rolls back one group's ACTIVE migration with a fresh request id,
// reading a lost answer back (rollbackSettled).
func (s *scaler) rollback(ctx context.Context, g, reshardingID string) (*client.Migration, error) {
	m := s.mutation
	m.RequestID = s.api.NewRequestID("rollback-migration")
	s.note(prefix.Rollback, g, m.RequestID)
	mig, _, err := rollbackSettled(ctx, s.api, s.p, g, reshardingID, m)
	return mig, err
}

// scaleGroup scales one group left behind with the per-group endpoint,
// settling a lost answer, or a 409 ACTIVE_MIGRATION_EXISTS, by the one rule
// (prefix.Settle): a migration of the group to the target that moves by
// itself is the scale's result; the group unchanged, or PREPARING to the
// target, means it did not happen, and it is sent again with the same
// request id (which resumes a PREPARING one). A scale is not idempotent
// while its migration is active, so a failed read-back sends nothing more.
func (s *scaler) scaleGroup(ctx context.Context, gi client.Group) (*client.Migration, error) {
	m := s.mutation
	m.RequestID = s.api.NewRequestID("scale-group")
	s.note(prefix.ScaleGroup, gi.ConsumerGroup, m.RequestID)
	mctx, done := graceContext(ctx, "scale-group "+m.RequestID)
	defer done()
	var read *client.Group
	var answer error // the last send's answer
	mig, _, err := prefix.Settle(mctx, prefix.Mutation[*client.Migration]{
		What:      fmt.Sprintf("scale of group %q under stream prefix %q to %d shards", gi.ConsumerGroup, s.p, s.target),
		RequestID: m.RequestID,
		Send: func(ctx context.Context) (*client.Migration, error) {
			var mig *client.Migration
			mig, answer = s.api.ScaleGroup(ctx, s.p, gi.ConsumerGroup, s.target, m)
			return mig, answer
		},
		// 409 ACTIVE_MIGRATION_EXISTS, on any send, is read back like a
		// lost answer: a migration to the target is adopted (CONTRACT §9:
		// "if the active migration already targets the desired count, adopt
		// it"): this scale's first send landing after its lost answer was
		// read back, or another actor's scale (or a stream scale still
		// being applied) heading where this one goes. A migration heading
		// elsewhere leaves the refusal as the outcome.
		Lost: func(err error) bool {
			return client.IsAmbiguous(err) || client.IsConflict(err, client.CodeActiveMigrationExists)
		},
		ReadBack: func(ctx context.Context) (*client.Migration, bool, error) {
			var err error
			if read, err = s.api.GetGroup(ctx, s.p, gi.ConsumerGroup); err != nil {
				return nil, false, err
			}
			// PREPARING to the target is not applied: it never moves by
			// itself, and the same scale sent again resumes it (§4.6).
			if am := read.ActiveMigration; am != nil && am.ToShardCount == s.target && am.State != client.MigrationPreparing && !am.Finished() {
				return am, true, nil
			}
			if read.ShardCount == s.target && read.ActiveMigration.Finished() {
				// Applied and already finished: nothing left to wait for.
				return &client.Migration{ReshardingID: client.NoopReshardingID, FromShardCount: s.target, ToShardCount: s.target, State: client.MigrationDeprecated}, true, nil
			}
			if client.IsConflict(answer, client.CodeActiveMigrationExists) {
				return nil, false, prefix.Decided(answer)
			}
			return nil, false, nil
		},
	})
	var un *prefix.UnsettledError
	if errors.As(err, &un) && un.Reason == prefix.NotSentAgain {
		return nil, fmt.Errorf("the scale of group %q (request id %s) was sent and its answer was lost; the group read back showed it "+
			"had not happened (still %d shards), and it was not sent again: %w", gi.ConsumerGroup, m.RequestID, read.ShardCount, un.NotSent)
	}
	return mig, err
}

// provedNotApplied reports an answer proving that nothing of the request was
// applied: not sent at all, or refused before any change (400, 401, 403,
// 404, 422). A 409 or 503 may follow a part-way scale, and the take-over
// that handles it registers the prefix again.
func provedNotApplied(err error) bool {
	if err == nil || client.IsAmbiguous(err) {
		return false
	}
	if client.IsNotSent(err) {
		return true
	}
	apiErr, ok := client.AsAPIError(err)
	if !ok {
		return false
	}
	switch apiErr.HTTPStatus {
	case http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusUnprocessableEntity:
		return true
	}
	return false
}
