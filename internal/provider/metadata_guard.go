package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// The metadata guard: one mechanism for metadata durability (issue 11.7) and
// stale plans (issue 10.3), shared by redisstreamcoordinator_group and
// redisstreamcoordinator_group_shard_count.
//
//   - State records the highest metadataVersion seen for the group
//     (metadata_version). Read never lowers it (observeMetadataVersion); a lower
//     reported version is a regression: the group's metadata was deleted,
//     corrupted, or restored from an old backup. Read records it in private
//     state (setMetadataRegression); a saved record stays until an apply
//     acknowledges it, even when consumer churn lifts the version back above
//     the old high-water mark (metadata_guard_ack.go).
//   - ModifyPlan fails closed on a recorded regression (checkMetadataRegression)
//     unless acknowledged_metadata_version accepts it: any version up to the
//     one the coordinator reports now, so the value copied from the error
//     survives consumer churn (metadata_guard_ack.go); once applied, it
//     becomes the new baseline.
//   - Create/Update re-read the group before any mutation and refuse when its
//     version is lower than the plan's basis (basisChanges: a regression).
//     A higher version alone is no stale plan: the coordinator raises it on
//     every change of the group's stored state, consumer churn included
//     (CONTRACT §4). What makes a plan stale is a change of its basis: the
//     count, the migration under way, the prefix's groups (plan_basis.go).

// privateRecord.MetadataRegression holds a regression recorded by Read.

// metadataRegression is what Read saw: the highest version state had recorded
// and the lower version the coordinator then reported.
type metadataRegression struct {
	Seen int64 `json:"seen"`
	// Reported is the version first reported after the regression (the
	// restored baseline); Latest the one reported at the last refresh since
	// (consumer churn raises it again).
	Reported int64 `json:"reported"`
	Latest   int64 `json:"latest,omitempty"`
	// StaleAck is acknowledged_metadata_version as state held it when the
	// regression was recorded: an earlier acknowledgement, which does not
	// accept this one.
	StaleAck *int64 `json:"stale_ack,omitempty"`
	// Stale are the ranges of earlier regressions that this one replaced
	// before they were acknowledged.
	Stale []versionRange `json:"stale,omitempty"`
	// Epochs is set when the version is the same and the epochs went
	// backwards (metadata_guard_epochs.go).
	Epochs *epochRegression `json:"epochs,omitempty"`
	// LostMigration is set when the version shows no regression but a
	// migration recorded in state is unknown to the coordinator
	// (group_part_not_found.go).
	LostMigration string `json:"lost_migration,omitempty"`
}

// observeMetadataVersion is the Read-time rule: the version to store is the
// highest seen (never lowered by a refresh), and regressed says the coordinator
// reported a lower version than state had recorded. A null or unknown seen
// (first read, import) stores the reported version and never regresses.
func observeMetadataVersion(seen types.Int64, reported int64) (store types.Int64, regressed bool) {
	if seen.IsNull() || seen.IsUnknown() {
		return types.Int64Value(reported), false
	}
	if reported < seen.ValueInt64() {
		return seen, true
	}
	return types.Int64Value(reported), false
}

// setMetadataRegression records a regression in private state; a nil reg
// clears it.
func setMetadataRegression(ctx context.Context, private privateSetter, reg *metadataRegression) diag.Diagnostics {
	return updatePrivateRecord(ctx, private, func(r *privateRecord) { r.MetadataRegression = reg })
}

// readMetadataRegression returns the regression Read recorded, or nil. An
// unreadable record is an error (readPrivateRecord): the plan fails closed.
func readMetadataRegression(ctx context.Context, private privateGetter) (*metadataRegression, diag.Diagnostics) {
	rec, diags := readPrivateRecord(ctx, private)
	return rec.MetadataRegression, diags
}

// metadataRunbook is the procedure for a group whose metadata regressed.
const metadataRunbook = "Runbook (metadata key deleted, corrupted, or restored from an old backup):\n" +
	"  1. Run `terraform apply -refresh-only` now so the regression is recorded in state before consumer churn can hide it (a plan that fails closed saves nothing).\n" +
	"  2. Stop admin mutations for this group (no scale, no recreate) until it is repaired; the plan fails closed until then.\n" +
	"  3. Restore the group's metadata from a backup taken at or after metadataVersion %[1]d if you can; then run `terraform apply -refresh-only` and plan again.\n" +
	"  4. Otherwise recreate the group explicitly with the expected shard count and treat its consumers and producers as a new lifecycle (they rejoin as new).\n" +
	"  Never rebuild the metadata from clients' caches, never force clients down to a lower metadata version, and never repair by bumping the rolled-back version numbers.\n"

// metadataWayOut is the explicit way out once the runbook was followed; %[1]d
// is a value acknowledges accepts (acceptableAck).
const metadataWayOut = "Once you have followed the runbook and accept metadataVersion %[1]d as the group's metadata, either:\n" +
	"  - set acknowledged_metadata_version = %[1]d on this resource and apply (that version becomes the new baseline; consumers rejoining and raising the version since do not invalidate it), or\n" +
	"  - `terraform state rm` this resource and import it again (a new lifecycle)."

// metadataWayOutStateRm is the way out when no acknowledgement can accept the
// regression: every version since it was reported is one an earlier
// acknowledgement was applied or written for.
const metadataWayOutStateRm = "No acknowledged_metadata_version can acknowledge this regression: every version reported since it (%[1]d to %[2]d) " +
	"is one an acknowledgement was applied or written for, for an earlier regression. Once you have followed the runbook, " +
	"`terraform state rm` this resource and import it again (a new lifecycle)."

// metadataWayOutText is the way out for reg: always one that works.
func metadataWayOutText(reg *metadataRegression) string {
	if a, ok := reg.acceptableAck(); ok {
		return fmt.Sprintf(metadataWayOut, a)
	}
	return fmt.Sprintf(metadataWayOutStateRm, reg.Reported, reg.latest())
}

// ackRefusalText says why the configured acknowledgement a does not accept reg.
func ackRefusalText(reg *metadataRegression, a int64) string {
	r, why := reg.refusal(a)
	switch why {
	case "applied":
		return fmt.Sprintf("acknowledged_metadata_version = %d was applied for an earlier regression; it does not acknowledge this one.\n", a)
	case "stale":
		return fmt.Sprintf("acknowledged_metadata_version = %d was written for an earlier regression (metadataVersion %d to %d), "+
			"which this one replaced before it was applied; it does not acknowledge this one.\n", a, r[0], r[1])
	case "below":
		return fmt.Sprintf("acknowledged_metadata_version is %d: metadata versions start at 1.\n", a)
	}
	return fmt.Sprintf("acknowledged_metadata_version is %d, higher than %d, the version the coordinator reports now: it can only "+
		"acknowledge a version the coordinator has reached.\n", a, reg.latest())
}

// checkMetadataRegression is the ModifyPlan-time rule: a recorded regression
// fails the plan closed unless acknowledged accepts it (acknowledges).
func checkMetadataRegression(diags *diag.Diagnostics, resourceType, p, g string, reg *metadataRegression, acknowledged types.Int64) {
	if reg == nil || reg.acknowledges(acknowledged) {
		return
	}
	ack := ""
	if !acknowledged.IsNull() && !acknowledged.IsUnknown() {
		ack = ackRefusalText(reg, acknowledged.ValueInt64())
	}
	since := ""
	if reg.latest() != reg.Reported {
		since = fmt.Sprintf(" (and %d at the last refresh: consumers rejoining raise it again, which neither repairs nor hides the regression)", reg.latest())
	}
	what := fmt.Sprintf("%s %q: this resource had seen metadataVersion %d for group %q of stream prefix %q, "+
		"but the coordinator then reported metadataVersion %d%s. The group's metadata was deleted, corrupted, or restored from an old backup; "+
		"clients may hold newer routing than the coordinator.\n", resourceType, g, reg.Seen, g, p, reg.Reported, since)
	switch {
	case reg.Epochs != nil:
		what = epochsRegressionDetail(resourceType, p, g, reg)
	case reg.LostMigration != "":
		what = lostMigrationDetail(resourceType, p, g, reg)
	}
	diags.AddError(
		fmt.Sprintf("Metadata of group %s/%s regressed: the plan fails closed", p, g),
		fmt.Sprintf("%s%s\n", what, ack)+
			fmt.Sprintf(metadataRunbook, reg.Seen)+"\n"+metadataWayOutText(reg)+hiddenByChurn(reg),
	)
}

// hiddenByChurn warns that churn hides a version regression not yet saved.
func hiddenByChurn(reg *metadataRegression) string {
	if reg.LostMigration != "" {
		return ""
	}
	return fmt.Sprintf("\n\nRecord it (`terraform apply -refresh-only`) before consumers rejoining lift metadataVersion back above %d: "+
		"from then on the version alone no longer shows the regression.", reg.Seen)
}
