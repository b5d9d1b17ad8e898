package provider

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// createSettleBound is how long a create whose response was lost may still
// be queued or running on the coordinator: critical sections queue on a JVM
// lock and then wait up to 5 s for the state mutex (CONTRACT §4.2). A group
// seen during that window may still be deleted again if provisioning fails,
// so it is adopted only if it is still there after the bound.
var createSettleBound = 6 * time.Second

// siblingBasisGetLimit: up to this many siblings in the plan's basis are
// re-read one by one at apply; more are re-read with one listing.
const siblingBasisGetLimit = 8

func (r *groupResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan groupResourceModel
	resp.Diagnostics.Append(getPlan(ctx, req.Plan, &plan)...)
	resp.Diagnostics.Append(setGroupIdentity(ctx, resp.Identity, plan.StreamPrefix, plan.ConsumerGroup)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, diags := plan.Timeouts.Create(ctx, defaultGroupCreateTimeout)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	p, g := plan.StreamPrefix.ValueString(), plan.ConsumerGroup.ValueString()
	api := r.pd.api
	// Siblings created in the same apply must see each other, so sibling
	// resolution and the create are one step per prefix.
	defer r.pd.prefixLocks.Lock(p)()

	var count *int32
	// rescale: this apply's own stream scale took the siblings to its
	// target before this create (verifySiblingBasis).
	var rescale *int32
	if plan.SiblingShardCounts.IsNull() || plan.SiblingShardCounts.IsUnknown() || plan.InitialShardCount.IsUnknown() {
		// The plan could not resolve the count (provider configuration
		// unknown at plan time, or a new prefix whose other groups this run
		// also creates without a count): resolve now, from a full listing,
		// under the prefix lock so groups created in this apply see each other.
		c, diags := resolveInitialShardCount(ctx, api.Groups, p, g, plan.InitialShardCount, true)
		resp.Diagnostics.Append(diags...)
		if resp.Diagnostics.HasError() {
			return
		}
		count = c
	} else {
		if !r.verifySiblingBasis(ctx, p, g, plan, &rescale, &resp.Diagnostics) {
			return
		}
		if !plan.InitialShardCount.IsNull() && !plan.InitialShardCount.IsUnknown() {
			c := int32(plan.InitialShardCount.ValueInt64())
			count = &c
		}
	}
	if count != nil && !checkCreatedInRun(&r.pd.plans, p, g, *count, &resp.Diagnostics) {
		return
	}
	m := client.Mutation{RequestID: api.NewRequestID("create-group"), RequestedBy: plan.RequestedBy.ValueString(), Reason: plan.Reason.ValueString()}
	// An interrupt while the create is in flight must not lose the group the
	// coordinator made: the request and its read-back get a grace period
	// (and after an interrupt the client sends no create at all).
	mctx, done := graceContext(ctx, "create-group "+m.RequestID)
	defer done()
	group, err := r.createSettled(mctx, p, g, count, m, &resp.Diagnostics)
	if err != nil {
		var prefix prefixAfterFailure
		if errors.Is(err, errCreateRolledBack) || errorCodeIs(err, client.CodeRedisStreamProvisioningFailed) {
			prefix = readPrefixAfterFailure(mctx, api, p, g)
		}
		addCreateGroupError(&resp.Diagnostics, p, g, count, prefix, err)
		return
	}
	r.pd.plans.registerCreated(p, g, group.ShardCount)
	if ctx.Err() != nil {
		resp.Diagnostics.AddWarning("Create finished after the operation was interrupted", fmt.Sprintf(
			"The operation ended (%v) while the create of group %q under stream prefix %q (request id %s) was in flight. The provider "+
				"finished it within its %s grace period: the group exists and is recorded in state, so the next apply continues from it.",
			ctx.Err(), g, p, m.RequestID, cancelGrace))
	}
	if rescale != nil && group.ShardCount != *rescale {
		r.rescaleCreated(ctx, p, g, *rescale, group, m, &resp.Diagnostics)
	}
	plan.fill(group)
	plan.MetadataVersion = types.Int64Value(group.MetadataVersion)
	resp.Diagnostics.Append(setGroupHighest(ctx, resp.Private, groupHighest{MetadataVersion: group.MetadataVersion, ShardCount: int64(group.ShardCount)})...)
	resp.Diagnostics.Append(clearCreateBasis(ctx, resp.Private)...) // the plan's, no state
	mark := markOf(group)
	resp.Diagnostics.Append(setEpochsSeen(ctx, resp.Private, &mark)...)
	if plan.SiblingShardCounts.IsUnknown() {
		plan.SiblingShardCounts = types.MapNull(types.Int64Type)
	}
	resp.Diagnostics.Append(setState(ctx, &resp.State, &plan)...)
}

// isAmbiguousCreate: the outcome is unknown (client.IsAmbiguous: no answer,
// a 5xx without the coordinator's errorCode, an unreadable 201). The 500
// check covers hand-built errors.
func isAmbiguousCreate(err error) bool {
	if client.IsAmbiguous(err) {
		return true
	}
	apiErr, ok := client.AsAPIError(err)
	return ok && apiErr.HTTPStatus == http.StatusInternalServerError && apiErr.ErrorCode == ""
}

// verifySiblingBasis re-checks, before the POST, the siblings the plan
// resolved the count from (sibling_shard_counts). The rule: every sibling of
// the basis is re-read (one GET each, or one listing when there are more
// than siblingBasisGetLimit) and must still exist with the same shard count;
// a plan that saw no sibling re-reads nothing. Groups of the prefix created
// since the plan by this apply were checked against each other at plan time.
//
// A sibling this run's own change of the prefix took to its target (the
// run's journal, prefix.Run.Explains: the executor journals each step under
// the prefix lock, which this create holds) is no stale basis: the plan
// showed that change. rescale is then set to its target, so the create
// brings the new group there too.
func (r *groupResource) verifySiblingBasis(ctx context.Context, p, g string, plan groupResourceModel, rescale **int32, diags *diag.Diagnostics) bool {
	basis := map[string]int64{}
	for name, v := range plan.SiblingShardCounts.Elements() {
		if iv, ok := v.(types.Int64); ok {
			basis[name] = iv.ValueInt64()
		}
	}
	if len(basis) == 0 {
		return true
	}
	names := make([]string, 0, len(basis))
	for n := range basis {
		names = append(names, n)
	}
	sort.Strings(names)
	now := map[string]int64{}
	if len(names) > siblingBasisGetLimit {
		groups, err := r.pd.api.Groups(ctx)
		if err != nil {
			addAPIError(diags, fmt.Sprintf("Failed to re-check the siblings of group %q under stream prefix %q", g, p), err,
				"Before creating the group, the provider re-reads the groups its planned shard count was based on. Nothing was created.")
			return false
		}
		for _, grp := range groups {
			if grp.StreamPrefix == p {
				now[grp.ConsumerGroup] = int64(grp.ShardCount)
			}
		}
	} else {
		for _, n := range names {
			grp, err := r.pd.api.GetGroup(ctx, p, n)
			if client.IsNotFound(err) {
				continue
			}
			if err != nil {
				addAPIError(diags, fmt.Sprintf("Failed to re-check sibling %q of group %q under stream prefix %q", n, g, p), err,
					"Before creating the group, the provider re-reads the groups its planned shard count was based on. Nothing was created.")
				return false
			}
			now[n] = int64(grp.ShardCount)
		}
	}
	var changes []string
	for _, n := range names {
		c, ok := now[n]
		switch {
		case !ok && r.pd.plans.deletedInRun(p, n):
			// This apply deleted it, for a -replace or a rename: its own
			// create (if any) is checked against its own plan.
		case ok && c != basis[n] && r.pd.run.Explains(p, n, basis[n], c):
			// This run's own change of the prefix, which the plan showed.
			target := int32(c)
			*rescale = &target
		case !ok:
			changes = append(changes, fmt.Sprintf("%q had %d shards and no longer exists", n, basis[n]))
		case c != basis[n]:
			changes = append(changes, fmt.Sprintf("%q went from %d to %d shards", n, basis[n], c))
		}
	}
	if len(changes) == 0 {
		return true
	}
	replaced := ""
	if r.pd.plans.deletedInRun(p, g) {
		replaced = fmt.Sprintf("\n\nThis apply already deleted the group %q it replaces: it stays deleted until an apply creates it again, "+
			"and the next terraform plan shows that create.", g)
	}
	diags.AddError(fmt.Sprintf("Stale plan for group %s/%s: its siblings changed since the plan", p, g), fmt.Sprintf(
		"The plan resolved initial_shard_count = %s for group %q from the other groups of stream prefix %q, and they changed since: %s. "+
			"Creating the group now could give the prefix two shard counts. Nothing was sent to the coordinator for this create.%s\n\n"+
			"Run `terraform plan` again and review the new plan before applying it.",
		int64String(plan.InitialShardCount), g, p, strings.Join(changes, "; "), replaced))
	return false
}

func int64String(v types.Int64) string {
	if v.IsNull() || v.IsUnknown() {
		return "(the coordinator's default)"
	}
	return fmt.Sprint(v.ValueInt64())
}

// errCreatedByOther: after a lost create response, the group turned out to
// exist in a shape this create would not have made.
var errCreatedByOther = errors.New("the group was created by someone else")

// errCreateRolledBack: the lost create was seen and then deleted again.
var errCreateRolledBack = errors.New("the lost create was rolled back by the coordinator")

// lostCreatePrefixError: the re-send of a lost create met 409
// STREAM_PREFIX_ALREADY_EXISTS.
type lostCreatePrefixError struct {
	requestID string
	err       error
}

func (e *lostCreatePrefixError) Error() string { return e.err.Error() }
func (e *lostCreatePrefixError) Unwrap() error { return e.err }

func importHint(p, g string) string {
	return fmt.Sprintf(
		"Group %q under stream prefix %q already exists on the coordinator. The provider never adopts an existing group silently. "+
			"To manage it with Terraform, import it:\n\n"+
			"  import {\n    to = redisstreamcoordinator_group.<name>\n    id = %q\n  }\n\n"+
			"or run: terraform import redisstreamcoordinator_group.<name> %s\n\n"+
			"With deletion_policy = \"ABANDON\" (the default), a destroy or -replace leaves the group on the coordinator, so the "+
			"next create meets it here: import it back, or set deletion_policy = \"DELETE\" before replacing.", g, p, groupID(p, g), groupID(p, g))
}

// leftoverKeys names the Redis keys a failed provisioning may have left.
func leftoverKeys(p string, count *int32) string {
	n := "n"
	if count != nil {
		n = fmt.Sprint(*count)
	}
	keys := fmt.Sprintf("%s:0 … %s:%s-1", p, p, n)
	if count != nil {
		keys = fmt.Sprintf("%s:0 … %s:%d", p, p, *count-1)
	}
	return keys
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

// shellQuote makes s one word of a POSIX shell command, so a command for a
// name the coordinator accepts (spaces, quotes, unicode) can be pasted as is.
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

// scanPatternEscape escapes what Redis SCAN MATCH reads as a glob.
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
	var lostPrefix *lostCreatePrefixError
	var lostRead *lostCreateReadError
	var unproven *unprovenCreateError
	var unsettled *lostCreateLimitError
	switch {
	case errors.As(err, &unsettled):
		addAPIError(diags, summary, unsettled.lost, fmt.Sprintf(
			"The create (request id %s) was sent %d times, and none of its answers settled it: after each, reading the group back found "+
				"no group, so the create had not happened, and it was not sent again (%d re-sends is the limit). Check the coordinator's "+
				"health and the proxy in front of it. %s", unsettled.requestID, unsettled.sends, unsettled.sends-1, lostCreateNextPlan(p, g)))
	case errors.As(err, &unproven):
		diags.AddError("Group found after a lost create answer was not adopted", err.Error()+".\n\n"+
			auditLookupHint(p, g, unproven.requestID)+" If it is this create's, import it; if not, it belongs to someone else.\n\n"+
			lostCreateNextPlan(p, g)+" To avoid this after a lost answer, set initial_shard_count: the count a create sent is part of what "+
			"proves a group is its own.")
	case errors.As(err, &lostRead):
		addAPIError(diags, summary, lostRead.err, fmt.Sprintf(
			"The create (request id %s) got no usable answer, and reading the group back to settle it failed, so whether the "+
				"coordinator created the group is unknown. %s\n\n%s", lostRead.requestID, auditLookupHint(p, g, lostRead.requestID),
			lostCreateNextPlan(p, g)))
	case errors.Is(err, errCreatedByOther):
		diags.AddError("Group already exists", err.Error()+". The coordinator's audit log tells whose it is: if the CREATE_GROUP "+
			"with this create's request id succeeded, the group is this configuration's own and someone changed it since; otherwise "+
			"another actor created it. Either way it was not adopted, because it no longer looks as this create made it.\n\n"+importHint(p, g))
	case errors.Is(err, errCreateRolledBack):
		diags.AddError(summary, fmt.Sprintf("%s. The coordinator deletes a new group again when provisioning its Redis streams fails "+
			"(503 REDIS_STREAM_PROVISIONING_FAILED), so this create most likely failed that way; nothing was adopted. %s",
			err, prefix.keysAdvice(p, count)))
	case errors.As(err, &lostPrefix):
		addAPIError(diags, summary, err, fmt.Sprintf(
			"This create's first attempt (request id %s) got no usable answer, and the same create sent again found Redis keys for "+
				"stream prefix %q. Most likely the first attempt itself failed while provisioning the streams (503 "+
				"REDIS_STREAM_PROVISIONING_FAILED): the coordinator deleted the group's metadata again but kept the keys it had "+
				"already made, %s. Choosing another stream_prefix is not the fix. Check the coordinator's log and audit for request "+
				"id %s and the Redis failure, then clear the keys. %s",
			lostPrefix.requestID, p, leftoverKeys(p, count), lostPrefix.requestID, clearKeysHint(p, count)))
	case client.IsConflict(err, client.CodeGroupAlreadyExists):
		addAPIError(diags, "Group already exists", err, importHint(p, g))
	case client.IsConflict(err, client.CodeStreamPrefixAlreadyExists):
		addAPIError(diags, summary, err, fmt.Sprintf(
			"Redis keys for stream prefix %q already exist although the coordinator has no group for it. Either an earlier create "+
				"of the prefix's first group failed while provisioning (503 REDIS_STREAM_PROVISIONING_FAILED deletes the metadata "+
				"but keeps the keys it made, %s), or a group whose metadata was deleted left its streams (a metadata delete keeps "+
				"them). %s Or choose another stream_prefix.", p, leftoverKeys(p, count), clearKeysHint(p, count)))
	case errorCodeIs(err, client.CodeRedisStreamProvisioningFailed):
		next := "The coordinator failed to create the group's Redis streams and deleted the group's metadata again. " + prefix.keysAdvice(p, count)
		if prefix.first() {
			next = fmt.Sprintf("The coordinator failed to create the Redis streams of the prefix's first group and deleted the group's "+
				"metadata again (it has no other group of stream prefix %q), but the stream keys it had already made stay in Redis: any of "+
				"%s (the coordinator does not say how far it got). While they exist, a retry fails with 409 STREAM_PREFIX_ALREADY_EXISTS, "+
				"so the provider did not re-send the create. Fix the Redis problem above first. %s", p, leftoverKeys(p, count), clearKeysHint(p, count))
		}
		addAPIError(diags, summary, err, next)
	case isAmbiguousCreate(err):
		addAPIError(diags, summary, err, "The coordinator's answer was lost or failed without an error code, and reading the group back "+
			"did not settle it. "+lostCreateNextPlan(p, g))
	default:
		addAPIError(diags, summary, err, "")
	}
}

func errorCodeIs(err error, code string) bool {
	apiErr, ok := client.AsAPIError(err)
	return ok && apiErr.ErrorCode == code
}
