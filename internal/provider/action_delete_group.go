package provider

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/action"
	"github.com/hashicorp/terraform-plugin-framework/action/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

var (
	_ action.ActionWithConfigure  = &deleteGroupAction{}
	_ action.ActionWithModifyPlan = &deleteGroupAction{}
)

const deleteGroupTypeName = TypeName + "_delete_group"

// NewDeleteGroupAction is the redisstreamcoordinator_delete_group action.
func NewDeleteGroupAction() action.Action { return &deleteGroupAction{} }

type deleteGroupAction struct{ actionBase }

type deleteGroupModel struct {
	StreamPrefix  types.String `tfsdk:"stream_prefix"`
	ConsumerGroup types.String `tfsdk:"consumer_group"`
	Force         types.Bool   `tfsdk:"force"`
	actionAudit
}

func (a *deleteGroupAction) Metadata(_ context.Context, req action.MetadataRequest, resp *action.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_delete_group"
}

func (a *deleteGroupAction) Schema(_ context.Context, _ action.SchemaRequest, resp *action.SchemaResponse) {
	attrs := map[string]schema.Attribute{
		"stream_prefix": schema.StringAttribute{
			MarkdownDescription: "The stream prefix of the group to delete.",
			Required:            true,
			Validators:          []validator.String{streamPrefixValidator},
		},
		"consumer_group": schema.StringAttribute{
			MarkdownDescription: "The consumer group to delete.",
			Required:            true,
			Validators:          []validator.String{consumerGroupValidator},
		},
		"force": schema.BoolAttribute{
			MarkdownDescription: "Delete even while the group has live consumers, which then fail their next heartbeat. Defaults to `false`: the delete is refused.",
			Optional:            true,
		},
	}
	maps.Copy(attrs, auditAttributes("the group is deleted"))
	resp.Schema = schema.Schema{
		MarkdownDescription: "Deletes a consumer group's metadata from the coordinator (the Redis streams stay), for a group no configuration manages. Needs Terraform 1.14 or later.",
		Attributes:          attrs,
	}
}

func describeGroup(grp *client.Group) string {
	d := fmt.Sprintf("%d shards, state %s, metadataVersion %d", grp.ShardCount, grp.State, grp.MetadataVersion)
	if am := grp.ActiveMigration; am != nil && !am.Finished() {
		d += fmt.Sprintf(", migration %s in progress (%d→%d shards, %s since %s)", am.ReshardingID, am.FromShardCount, am.ToShardCount, am.State, formatSince(am.UpdatedAt))
	}
	return d
}

func memberList(members []client.Member) string {
	var live []string
	for _, mem := range members {
		live = append(live, fmt.Sprintf("%s (%s, %s)", mem.MemberID, mem.MemberName, mem.State))
	}
	return strings.Join(live, ", ")
}

func (a *deleteGroupAction) ModifyPlan(ctx context.Context, req action.ModifyPlanRequest, resp *action.ModifyPlanResponse) {
	var cfg deleteGroupModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	if resp.Diagnostics.HasError() {
		return
	}
	api := a.planAPI(&resp.Diagnostics, deleteGroupTypeName, cfg.StreamPrefix.IsUnknown() || cfg.ConsumerGroup.IsUnknown() || cfg.Force.IsUnknown(),
		"stream_prefix, consumer_group or force")
	if api == nil {
		return
	}
	p, g, force := cfg.StreamPrefix.ValueString(), cfg.ConsumerGroup.ValueString(), cfg.Force.ValueBool()
	grp, err := api.GetGroup(ctx, p, g)
	var live []client.Member
	switch {
	case client.IsNotFound(err):
		grp, err = nil, nil
	case err == nil:
		live, err = liveMembers(ctx, api, p, g)
	}
	if err != nil {
		planReadFailed(&resp.Diagnostics, deleteGroupTypeName, err)
		return
	}
	footer := fmt.Sprintf("\n\nRead from the coordinator at plan time; the invocation reads again before it sends anything. It needs a "+
		"principal with the WRITE role, and is audited with requestedBy %q.", cfg.requestedBy(api))
	switch {
	case grp == nil:
		resp.Diagnostics.AddWarning(fmt.Sprintf("The invocation will change nothing: group %q under stream prefix %q does not exist", g, p),
			"The coordinator has no such group (404), so the invocation reports it as already deleted and sends nothing."+footer)
	case len(live) > 0 && !force:
		resp.Diagnostics.AddWarning(fmt.Sprintf("The invocation will be refused: group %q under stream prefix %q has live consumers", g, p),
			fmt.Sprintf("Group: %s.\nLive members: %s.\nThe coordinator refuses to delete a group with live consumers (409 %s). Stop "+
				"them (they must leave or let their lease expire) before invoking, or set force = true, accepting that they fail "+
				"their next heartbeat.", describeGroup(grp), memberList(live), client.CodeGroupHasActiveMembers)+footer)
	default:
		detail := fmt.Sprintf("Will send DELETE %s%s with force = %t.\nGroup: %s.\n", client.APIBasePath, groupAPIPath(p, g), force, describeGroup(grp))
		if len(live) > 0 {
			detail += fmt.Sprintf("Live members, which fail their next heartbeat: %s.\n", memberList(live))
		} else {
			detail += "No live members, so force is not needed.\n"
		}
		detail += "The Redis streams and the Redis consumer group stay. If a redisstreamcoordinator_group manages this group, its next " +
			"plan re-creates it: this action cannot see Terraform state."
		resp.Diagnostics.AddWarning(fmt.Sprintf("The invocation will delete group %q under stream prefix %q", g, p), detail+footer)
	}
}

// groupAPIPath percent-encodes each name as the client sends it.
func groupAPIPath(p, g string) string {
	path := client.RollbackPath(p, g, "x")
	path = strings.TrimPrefix(path, client.APIBasePath)
	return strings.TrimSuffix(path, "/migrations/x/rollback")
}

func (a *deleteGroupAction) Invoke(ctx context.Context, req action.InvokeRequest, resp *action.InvokeResponse) {
	var cfg deleteGroupModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &cfg)...)
	api := a.invokeAPI(&resp.Diagnostics)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, actionTimeout)
	defer cancel()
	p, g, force := cfg.StreamPrefix.ValueString(), cfg.ConsumerGroup.ValueString(), cfg.Force.ValueBool()
	say := progressReporter{ctx: ctx, resp: resp}

	grp, err := api.GetGroup(ctx, p, g)
	switch {
	case client.IsNotFound(err):
		say.say("Group %q under stream prefix %q does not exist (404): already deleted, nothing to send.", g, p)
		return
	case err != nil:
		addAPIError(&resp.Diagnostics, fmt.Sprintf("Failed to read group %q under stream prefix %q", g, p), err, "Nothing was deleted.")
		return
	}
	m := cfg.mutation(api, "delete-group")
	say.say("Deleting group %q under stream prefix %q (%s) with force = %t; request id %s.", g, p, describeGroup(grp), force, m.RequestID)
	settledBy, err := deleteGroupSettled(ctx, a.pd.timing, api, p, g, force, m)
	if settledBy != nil {
		say.say("The answer to the delete (request id %s) was lost (%s); reading the group back found it gone, so the delete was applied.",
			m.RequestID, lostAnswerCause(settledBy))
		return
	}
	summary := fmt.Sprintf("Failed to delete group %q under stream prefix %q", g, p)
	switch {
	case err == nil:
		say.say("Deleted group %q under stream prefix %q (request id %s). Its Redis streams and Redis consumer group stay.", g, p, m.RequestID)
	case client.IsNotFound(err):
		say.say("Group %q under stream prefix %q is gone (404 to the delete): deleted in the meantime.", g, p)
	case client.IsConflict(err, client.CodeGroupHasActiveMembers):
		addAPIError(&resp.Diagnostics, fmt.Sprintf("Group %q under stream prefix %q still has live consumers", g, p), err,
			liveMembersHint(ctx, api, p, g)+"Stop those consumers (they must leave or let their lease expire), or set force = true in "+
				"the action's config and invoke it again, accepting that they fail their next heartbeat. Nothing was deleted.")
	case client.IsForbidden(err):
		addAPIError(&resp.Diagnostics, summary, err, "Plan with any principal, but invoke with one that has the WRITE role. Nothing was deleted.")
	default:
		addAPIError(&resp.Diagnostics, summary, err, "Invoking the action again is safe: a group that is already gone counts as deleted.")
	}
}
