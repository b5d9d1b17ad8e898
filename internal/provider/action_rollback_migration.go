package provider

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/action/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

var (
	_ action.ActionWithConfigure  = &rollbackMigrationAction{}
	_ action.ActionWithModifyPlan = &rollbackMigrationAction{}
)

const rollbackMigrationTypeName = TypeName + "_rollback_migration"

// NewRollbackMigrationAction is the redisstreamcoordinator_rollback_migration action.
func NewRollbackMigrationAction() action.Action { return &rollbackMigrationAction{} }

type rollbackMigrationAction struct{ actionBase }

type rollbackMigrationModel struct {
	StreamPrefix  types.String `tfsdk:"stream_prefix"`
	ConsumerGroup types.String `tfsdk:"consumer_group"`
	actionAudit
}

func (a *rollbackMigrationAction) Metadata(_ context.Context, req action.MetadataRequest, resp *action.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_rollback_migration"
}

func (a *rollbackMigrationAction) Schema(_ context.Context, _ action.SchemaRequest, resp *action.SchemaResponse) {
	attrs := map[string]schema.Attribute{
		"stream_prefix": schema.StringAttribute{
			MarkdownDescription: "The stream prefix whose resharding is rolled back: without `consumer_group`, every group of it with an `ACTIVE` migration.",
			Required:            true,
			Validators:          []validator.String{streamPrefixValidator},
		},
		"consumer_group": schema.StringAttribute{
			MarkdownDescription: "Roll back only this group's migration; the coordinator refuses one that is not `ACTIVE`.",
			Optional:            true,
			Validators:          []validator.String{consumerGroupValidator},
		},
	}
	maps.Copy(attrs, auditAttributes("the resharding is rolled back"))
	resp.Schema = schema.Schema{
		MarkdownDescription: "Rolls back the `ACTIVE` resharding of a stream prefix, or of one group, and waits until each migration is `ROLLED_BACK`. Needs Terraform 1.14 or later.",
		Attributes:          attrs,
	}
}

func (a *rollbackMigrationAction) ModifyPlan(ctx context.Context, req action.ModifyPlanRequest, resp *action.ModifyPlanResponse) {
	var cfg rollbackMigrationModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	api := a.planAPI(&resp.Diagnostics, rollbackMigrationTypeName, cfg.StreamPrefix.IsUnknown() || cfg.ConsumerGroup.IsUnknown(),
		"stream_prefix or consumer_group")
	if api == nil {
		return
	}
	s, err := surveyRollback(ctx, api, cfg.StreamPrefix.ValueString(), cfg.ConsumerGroup.ValueString())
	if err != nil {
		planReadFailed(&resp.Diagnostics, rollbackMigrationTypeName, err)
		return
	}
	summary, detail := s.preview(cfg.requestedBy(api))
	if s.refusedBeforeSending() {
		// The plan fails what the invocation would refuse.
		resp.Diagnostics.AddError(summary, detail+"\n\n"+refusedNothingSent)
		return
	}
	resp.Diagnostics.AddWarning(summary, detail)
}

const refusedNothingSent = "Nothing was sent to the coordinator. To roll back one ACTIVE group anyway, set consumer_group (its preview says " +
	"whether it leaves the prefix at different shard counts)."

func (a *rollbackMigrationAction) Invoke(ctx context.Context, req action.InvokeRequest, resp *action.InvokeResponse) {
	var cfg rollbackMigrationModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	api := a.invokeAPI(&resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, actionTimeout)
	defer cancel()
	p, g := cfg.StreamPrefix.ValueString(), cfg.ConsumerGroup.ValueString()
	say := progressReporter{ctx: ctx, resp: resp}

	s, err := surveyRollback(ctx, api, p, g)
	if err != nil {
		addAPIError(&resp.Diagnostics, fmt.Sprintf("Failed to read the migrations of %s", (&rollbackSurvey{prefix: p, group: g}).scope()), err,
			"Nothing was rolled back.")
		return
	}
	if note := s.goneNote(); note != "" {
		say.say("%s", strings.TrimSpace(note))
	}
	switch {
	case s.refusedBeforeSending():
		summary, detail := s.preview(cfg.requestedBy(api))
		resp.Diagnostics.AddError(summary, detail+"\n\n"+refusedNothingSent)
		return
	case s.nothingToDo() && len(s.rolledBack) > 0:
		say.say("Nothing to send: the resharding of %s is already rolled back (%s).", s.scope(), joinEach(s.rolledBack, "; ", groupMigration.String))
		return
	case s.nothingToDo():
		resp.Diagnostics.AddError(fmt.Sprintf("Nothing to roll back: %s has no migration in progress", s.scope()), s.nothingDetail())
		return
	}

	targets := append(append([]groupMigration{}, s.active...), s.notActive...)
	var rolled []groupMigration
	for _, t := range targets {
		m := cfg.mutation(api, "rollback-migration")
		say.say("Rolling back migration %s of group %q (%d→%d shards, %s since %s); request id %s.",
			t.m.ReshardingID, t.group, t.m.FromShardCount, t.m.ToShardCount, t.m.State, formatSince(t.m.UpdatedAt), m.RequestID)
		id := t.m.ReshardingID
		_, settledBy, err := rollbackSettled(ctx, a.pd.timing, api, p, t.group, id, m)
		switch {
		case settledBy != nil:
			say.say("The answer to the rollback of migration %s (request id %s) was lost (%s); reading it back found it ROLLED_BACK, so the rollback was applied.",
				id, m.RequestID, lostAnswerCause(settledBy))
		case err != nil:
			rollbackFailed(&resp.Diagnostics, p, t, err, rolled)
			return
		}
		rolled = append(rolled, t)
	}
	if !waitRolledBack(ctx, api, p, rolled, say, &resp.Diagnostics) {
		return
	}
	say.say("Rolled back %s: %s.", s.scope(), joinEach(rolled, "; ", func(gm groupMigration) string {
		return fmt.Sprintf("%s of group %q (%d→%d, back to %d shards)", gm.m.ReshardingID, gm.group, gm.m.FromShardCount, gm.m.ToShardCount, gm.m.FromShardCount)
	}))
	if stranded := strandedShards(p, rolled); stranded != "" {
		resp.Diagnostics.AddWarning(fmt.Sprintf("Rolled back the resharding of %s", s.scope()), stranded)
	}
	if split := s.leavesSplit(); split != "" {
		resp.Diagnostics.AddWarning(fmt.Sprintf("Stream prefix %q is at different shard counts", p), split)
	}
}

func rollbackFailed(diags *diag.Diagnostics, p string, t groupMigration, err error, soFar []groupMigration) {
	id := t.m.ReshardingID
	summary := fmt.Sprintf("Failed to roll back migration %s of group %q under stream prefix %q", id, t.group, p)
	next := "A rollback is idempotent: invoking the action again is safe."
	switch {
	case client.ErrorCode(err) == client.CodeRollbackNotAllowed:
		advice := notActiveAdvice(t.m)
		if t.m.State == client.MigrationActive {
			advice = "ACTIVE when the action read it, and changed state since: read it with the redisstreamcoordinator_migrations data source"
		}
		summary, next = fmt.Sprintf("The coordinator refused to roll back migration %s of group %q", id, t.group), "It was "+advice+"."
	case client.IsForbidden(err):
		next = "Plan with any principal, but invoke with one that has the WRITE role."
	}
	addAPIError(diags, summary, err, next+rolledSoFar(soFar))
}

func rolledSoFar(done []groupMigration) string {
	if len(done) == 0 {
		return " Nothing was rolled back."
	}
	return " Already rolled back by this invocation: " + joinEach(done, ", ", func(gm groupMigration) string {
		return fmt.Sprintf("%s of group %q", gm.m.ReshardingID, gm.group)
	}) + "."
}

// waitRolledBack confirms the outcome the 202 announced; a rollback is
// immediate on the coordinator, so this normally takes one read each.
func waitRolledBack(ctx context.Context, api *client.Client, p string, ms []groupMigration, say progressReporter, diags *diag.Diagnostics) bool {
	confirmed := map[string]bool{}
	reported := map[string]client.MigrationState{}
	poll := client.PollOptions{Initial: 250 * time.Millisecond, Max: 500 * time.Millisecond, Factor: 1.5, MaxConsecutiveErrors: 5}
	err := client.Poll(ctx, poll, func(ctx context.Context) (bool, error) {
		for _, gm := range ms {
			if confirmed[gm.group] {
				continue
			}
			m, err := api.GetMigration(ctx, p, gm.group, gm.m.ReshardingID)
			if err != nil {
				return false, err
			}
			switch m.State {
			case client.MigrationRolledBack:
				confirmed[gm.group] = true
				say.say("Migration %s of group %q is ROLLED_BACK (since %s); the group has %d shards again.",
					m.ReshardingID, gm.group, formatSince(m.UpdatedAt), m.FromShardCount)
			case client.MigrationActive, client.MigrationRollingBack:
				if reported[gm.group] == m.State {
					continue
				}
				reported[gm.group] = m.State
				say.say("Waiting for migration %s of group %q to be ROLLED_BACK (now %s).", m.ReshardingID, gm.group, m.State)
			default:
				return false, fmt.Errorf("migration %s of group %q is %s after its rollback was accepted; "+
					"read it with the redisstreamcoordinator_migrations data source", m.ReshardingID, gm.group, m.State)
			}
		}
		return len(confirmed) == len(ms), nil
	})
	if err != nil {
		addAPIError(diags, fmt.Sprintf("Rollback of stream prefix %q accepted, but not confirmed", p), err,
			"The coordinator accepted every rollback; reading the migrations back did not show ROLLED_BACK. Invoking the action again is safe.")
		return false
	}
	return true
}
