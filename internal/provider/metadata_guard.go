package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// The metadata guard: state records the highest metadataVersion seen; a lower
// reported version means the metadata was deleted, corrupted or restored, and
// plans fail closed until acknowledged_metadata_version accepts it. A higher
// version alone is no stale plan: consumer churn raises it.

type metadataRegression struct {
	Seen int64 `json:"seen"`
	// Reported is the version first reported after the regression; Latest the one
	// at the last refresh (consumer churn raises it).
	Reported int64 `json:"reported"`
	Latest   int64 `json:"latest,omitempty"`
	// StaleAck is an earlier acknowledgement, which does not accept this one.
	StaleAck      *int64           `json:"stale_ack,omitempty"`
	Stale         []versionRange   `json:"stale,omitempty"`
	Epochs        *epochRegression `json:"epochs,omitempty"`
	LostMigration string           `json:"lost_migration,omitempty"`
}

// observeMetadataVersion never lowers the stored version.
func observeMetadataVersion(seen types.Int64, reported int64) (store types.Int64, regressed bool) {
	if seen.IsNull() || seen.IsUnknown() {
		return types.Int64Value(reported), false
	}
	if reported < seen.ValueInt64() {
		return seen, true
	}
	return types.Int64Value(reported), false
}

// An unreadable record is an error: the plan fails closed.
func readMetadataRegression(ctx context.Context, private privateGetter) (*metadataRegression, diag.Diagnostics) {
	rec, diags := readPrivateRecord(ctx, private)
	return rec.MetadataRegression, diags
}

const metadataRunbook = "Runbook (metadata key deleted, corrupted, or restored from an old backup):\n" +
	"  1. Run `terraform apply -refresh-only` now so the regression is recorded in state before consumer churn can hide it (a plan that fails closed saves nothing).\n" +
	"  2. Stop admin mutations for this group (no scale, no recreate) until it is repaired; the plan fails closed until then.\n" +
	"  3. Restore the group's metadata from a backup taken at or after metadataVersion %[1]d if you can; then run `terraform apply -refresh-only` and plan again.\n" +
	"  4. Otherwise recreate the group explicitly with the expected shard count and treat its consumers and producers as a new lifecycle (they rejoin as new).\n" +
	"  Never rebuild the metadata from clients' caches, never force clients down to a lower metadata version, and never repair by bumping the rolled-back version numbers.\n"

const metadataWayOut = "Once you have followed the runbook and accept metadataVersion %[1]d as the group's metadata, either:\n" +
	"  - set acknowledged_metadata_version = %[1]d on this resource and apply (that version becomes the new baseline; consumers rejoining and raising the version since do not invalidate it), or\n" +
	"  - `terraform state rm` this resource and import it again (a new lifecycle)."

const metadataWayOutStateRm = "No acknowledged_metadata_version can acknowledge this regression: every version reported since it (%[1]d to %[2]d) " +
	"is one an acknowledgement was applied or written for, for an earlier regression. Once you have followed the runbook, " +
	"`terraform state rm` this resource and import it again (a new lifecycle)."

func metadataWayOutText(reg *metadataRegression) string {
	if a, ok := reg.acceptableAck(); ok {
		return fmt.Sprintf(metadataWayOut, a)
	}
	return fmt.Sprintf(metadataWayOutStateRm, reg.Reported, reg.latest())
}

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

func hiddenByChurn(reg *metadataRegression) string {
	if reg.LostMigration != "" {
		return ""
	}
	return fmt.Sprintf("\n\nRecord it (`terraform apply -refresh-only`) before consumers rejoining lift metadataVersion back above %d: "+
		"from then on the version alone no longer shows the regression.", reg.Seen)
}
