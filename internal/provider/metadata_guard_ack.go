package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Acknowledging a metadata regression (issue 23 §2).
//
// After a restore, consumers rejoin and every join raises metadataVersion
// again (CONTRACT §4): the version the coordinator reports keeps moving, so
// the value a user copies from the error is lower than the reported one by
// the next plan. So:
//
//   - acknowledged_metadata_version = A accepts the regression when A is at
//     most the version the coordinator reports now (latest): "I accept the
//     metadata as restored, at version A; every version from A on, consumer
//     churn included, is the group's new lifecycle". The value copied from
//     the error stays valid while churn moves the version on, also when the
//     record was first saved after more churn (by `apply -refresh-only`, so
//     with a higher Reported than the error named); a value the coordinator
//     has not reached (a typo) keeps the plan failing.
//   - An acknowledgement already applied for an earlier regression (the
//     value state still holds, StaleAck) never accepts a new one; nor does a
//     value within the range of an unacknowledged regression that a newer
//     one replaced (Stale): it was written for the earlier one.
//   - The error's way out names a value acknowledges accepts
//     (acceptableAck), or, when none exists, `terraform state rm` and import.
//   - Once applied, A is the new baseline of metadata_version; the next
//     refresh raises it to whatever the coordinator reports.
//   - A refresh whose result is saved keeps the record (nextRegression)
//     until an apply acknowledges it, with the version first reported after
//     the regression, even when churn lifts the version back above the old
//     high-water mark. A plan that fails closed saves nothing (and Terraform
//     plans during `apply -refresh-only` too), so while plans fail closed
//     each refresh detects the regression afresh: the version must still be
//     below the high-water mark. A restore that churn lifts above it before
//     any refresh saw it is not visible in the version (the errors and the
//     metadata guide say so).

// nextRegression is the Read-time rule for the record: prior is the
// recorded regression (nil if none), highest the high-water mark before this
// refresh, reported what the coordinator reports now, ack the
// acknowledged_metadata_version in state. It returns the record to keep.
func nextRegression(prior *metadataRegression, highest, reported int64, ack types.Int64) *metadataRegression {
	if prior != nil {
		latest := max(prior.Latest, prior.Reported)
		if reported >= latest {
			next := *prior
			next.Latest = reported
			return &next
		}
		// Lower again than the latest version seen since: a new regression.
		// The unacknowledged record's range is stale: an acknowledgement
		// written for it (not applied yet) does not accept this one.
		stale := append(append([]versionRange(nil), prior.Stale...), versionRange{prior.Reported, latest})
		return &metadataRegression{Seen: max(prior.Seen, latest), Reported: reported, Latest: reported, StaleAck: int64Ptr(ack), Stale: stale}
	}
	if highest > 0 && reported < highest {
		return &metadataRegression{Seen: highest, Reported: reported, Latest: reported, StaleAck: int64Ptr(ack)}
	}
	return nil
}

// versionRange is the range of metadataVersions of one regression, from the
// version first reported after it to the latest reported since.
type versionRange [2]int64

// acknowledges reports whether ack accepts the recorded regression.
func (reg *metadataRegression) acknowledges(ack types.Int64) bool {
	if reg == nil || ack.IsNull() || ack.IsUnknown() {
		return false
	}
	_, why := reg.refusal(ack.ValueInt64())
	return why == ""
}

// refusal says why a refuses the regression ("" = it accepts it) and, for a
// stale value, the range it was written for.
func (reg *metadataRegression) refusal(a int64) (versionRange, string) {
	switch {
	case reg.StaleAck != nil && *reg.StaleAck == a:
		return versionRange{}, "applied"
	case a < 1:
		return versionRange{}, "below"
	case a > reg.latest():
		return versionRange{}, "above"
	}
	for _, r := range reg.Stale {
		if a >= r[0] && a <= r[1] {
			return r, "stale"
		}
	}
	return versionRange{}, ""
}

// acceptableAck is the lowest value acknowledges accepts, if any.
func (reg *metadataRegression) acceptableAck() (int64, bool) {
	for a := reg.Reported; a <= reg.latest(); {
		r, why := reg.refusal(a)
		switch why {
		case "":
			return a, true
		case "stale":
			a = r[1] + 1
		default:
			a++
		}
	}
	return 0, false
}

// latest is the version the coordinator reported at the last refresh.
func (reg *metadataRegression) latest() int64 { return max(reg.Latest, reg.Reported) }
