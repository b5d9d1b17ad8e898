package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

func (r *groupResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan groupResourceModel
	resp.Diagnostics.Append(getPlan(ctx, req.Plan, &plan)...)
	resp.Diagnostics.Append(setGroupIdentity(ctx, resp.Identity, plan.StreamPrefix, plan.ConsumerGroup)...)
	timeout, diags := plan.Timeouts.Create(ctx, defaultGroupCreateTimeout)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	p, g := plan.StreamPrefix.ValueString(), plan.ConsumerGroup.ValueString()
	api := r.pd.api
	// Siblings created in the same apply must see each other.
	defer r.pd.prefixLocks.Lock(p)()

	count, siblings, ok := r.createCount(ctx, p, g, plan.InitialShardCount, &resp.Diagnostics)
	if !ok {
		return
	}
	m := client.Mutation{RequestID: api.NewRequestID("create-group"), RequestedBy: plan.RequestedBy.ValueString(), Reason: plan.Reason.ValueString()}
	// An interrupt must not lose a group the coordinator made.
	mctx, done := r.pd.timing.graceContext(ctx, "create-group "+m.RequestID)
	defer done()
	r.pd.plans.note(p, g, func(rg *runGroup) { rg.creating = true })
	group, err := r.createSettled(mctx, p, g, count, m, &resp.Diagnostics)
	r.pd.plans.note(p, g, func(rg *runGroup) {
		if rg.creating = false; err == nil {
			created := group.ShardCount
			rg.created = &created
		}
	})
	if err != nil {
		var prefix prefixAfterFailure
		if errors.Is(err, errCreateRolledBack) || client.ErrorCode(err) == client.CodeRedisStreamProvisioningFailed {
			prefix = readPrefixAfterFailure(mctx, api, p, g)
		}
		addCreateGroupError(&resp.Diagnostics, p, g, count, prefix, err)
		return
	}
	if ctx.Err() != nil {
		resp.Diagnostics.AddWarning("Create finished after the operation was interrupted", fmt.Sprintf(
			"The operation ended (%v) while the create of group %q under stream prefix %q (request id %s) was in flight. The provider "+
				"finished it within its %s grace period: the group exists and is recorded in state, so the next apply continues from it.",
			ctx.Err(), g, p, m.RequestID, r.pd.timing.grace()))
	}
	plan.fill(group)
	mark := markOf(group)
	resp.Diagnostics.Append(updatePrivateRecord(ctx, resp.Private, func(r *privateRecord) {
		r.GroupHighest = &groupHighest{MetadataVersion: group.MetadataVersion, ShardCount: int64(group.ShardCount)}
		r.PrefixSeen, r.EpochsSeen = nil, &mark // PrefixSeen is the plan's, no state
	})...)
	plan.SiblingShardCounts = siblings
	resp.Diagnostics.Append(setState(ctx, &resp.State, &plan)...)
}

// isAmbiguousCreate: the 500 check covers hand-built errors.
func isAmbiguousCreate(err error) bool {
	if client.IsAmbiguous(err) {
		return true
	}
	apiErr, ok := client.AsAPIError(err)
	return ok && apiErr.HTTPStatus == http.StatusInternalServerError && apiErr.ErrorCode == ""
}

var errCreatedByOther = errors.New("the group was created by someone else")

var errCreateRolledBack = errors.New("the lost create was rolled back by the coordinator")

func importHint(p, g string) string {
	return fmt.Sprintf(
		"Group %q under stream prefix %q already exists on the coordinator. The provider never adopts an existing group silently. "+
			"To manage it with Terraform, import it:\n\n"+
			"  import {\n    to = redisstreamcoordinator_group.<name>\n    id = %q\n  }\n\n"+
			"or run: terraform import redisstreamcoordinator_group.<name> %s\n\n"+
			"With deletion_policy = \"ABANDON\" (the default), a destroy or -replace leaves the group on the coordinator, so the "+
			"next create meets it here: import it back, or set deletion_policy = \"DELETE\" before replacing.", g, p, groupID(p, g), groupID(p, g))
}

func leftoverKeys(p string, count *int32) string {
	if count == nil {
		return fmt.Sprintf("%s:0 … %s:n-1", p, p)
	}
	return fmt.Sprintf("%s:0 … %s:%d", p, p, *count-1)
}

func clearKeysHint(p string, count *int32) string {
	last := "<n-1>"
	if count != nil {
		last = fmt.Sprint(*count - 1)
	}
	return fmt.Sprintf("After checking that nothing reads them (redis-cli --scan --pattern %s lists them; XINFO GROUPS shows readers), "+
		"remove them, e.g. `redis-cli UNLINK %s` and `redis-cli UNLINK %s … %s` (DEL works too), then run terraform apply again.",
		shellQuote(scanPatternEscape(p)+":*"), shellQuote(p), shellQuote(p+":0"), shellQuote(p+":"+last))
}

func shellQuote(s string) string {
	safe := s != ""
	for _, r := range s {
		safe = safe && (r < utf8.RuneSelf && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._:@%+=,/-", r)))
	}
	if safe {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func scanPatternEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\*?[]`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func addCreateGroupError(diags *diag.Diagnostics, p, g string, count *int32, prefix prefixAfterFailure, err error) {
	summary := fmt.Sprintf("Failed to create group %q under stream prefix %q", g, p)
	var lost *lostCreateError
	switch {
	case errors.As(err, &lost) && lost.err == nil:
		diags.AddError("Group found after a lost create answer was not adopted", lost.advice)
	case errors.As(err, &lost):
		addAPIError(diags, summary, lost.err, lost.advice)
	case errors.Is(err, errCreatedByOther):
		diags.AddError("Group already exists", err.Error()+". The coordinator's audit log tells whose it is: if the CREATE_GROUP "+
			"with this create's request id succeeded, the group is this configuration's own and someone changed it since; otherwise "+
			"another actor created it. Either way it was not adopted, because it no longer looks as this create made it.\n\n"+importHint(p, g))
	case errors.Is(err, errCreateRolledBack):
		diags.AddError(summary, fmt.Sprintf("%s. The coordinator deletes a new group again when provisioning its Redis streams fails "+
			"(503 REDIS_STREAM_PROVISIONING_FAILED), so this create most likely failed that way; nothing was adopted. %s",
			err, prefix.keysAdvice(p, count)))
	case client.IsConflict(err, client.CodeGroupAlreadyExists):
		addAPIError(diags, "Group already exists", err, importHint(p, g))
	case client.IsConflict(err, client.CodeStreamPrefixAlreadyExists):
		addAPIError(diags, summary, err, fmt.Sprintf(
			"Redis keys for stream prefix %q already exist although the coordinator has no group for it. Either an earlier create "+
				"of the prefix's first group failed while provisioning (503 REDIS_STREAM_PROVISIONING_FAILED deletes the metadata "+
				"but keeps the keys it made, %s), or a group whose metadata was deleted left its streams (a metadata delete keeps "+
				"them). %s Or choose another stream_prefix.", p, leftoverKeys(p, count), clearKeysHint(p, count)))
	case client.ErrorCode(err) == client.CodeRedisStreamProvisioningFailed:
		next := prefix.keysAdvice(p, count)
		if !prefix.first() {
			next = "The coordinator failed to create the group's Redis streams and deleted the group's metadata again. " + next
		}
		addAPIError(diags, summary, err, next)
	case isAmbiguousCreate(err):
		addAPIError(diags, summary, err, "The coordinator's answer was lost or failed without an error code, and reading the group back "+
			"did not settle it. "+lostCreateNextPlan(p, g))
	default:
		addAPIError(diags, summary, err, "")
	}
}
