package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Acknowledging a metadata regression (issue 23 §2).
//
// After a restore, consumers rejoin and every join raises metadataVersion
// again (CONTRACT §4): the version the coordinator reports keeps moving, and
// it may climb back above the old high-water mark. So:
//
//   - A regression, once a refresh has seen it, is recorded in private state
//     and stays recorded (nextRegression) until an apply acknowledges it,
//     however far churn lifts the version afterwards; a plan never stops
//     failing closed just because the version climbed back.
//   - The record keeps the version first reported after the regression
//     (Reported, the restored baseline the error names) and the latest one
//     (Latest). A version lower than Latest again is a new regression: the
//     record starts over from it.
//   - acknowledged_metadata_version = A accepts the regression when
//     Reported <= A <= Latest: "I accept the metadata as restored at version
//     A; every version since, consumer churn included, is the new lifecycle".
//     The value copied from the error (Reported) stays valid while churn
//     moves the version on. A value the coordinator has not reached, or
//     below the restored baseline, keeps the plan failing.
//   - An acknowledgement that was already applied before the regression was
//     recorded (StaleAck: the value left in the configuration after an
//     earlier one) never accepts a new regression.
//   - Once applied, A is the new baseline of metadata_version; the next
//     refresh raises it to whatever the coordinator reports.

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
		return &metadataRegression{Seen: max(prior.Seen, latest), Reported: reported, Latest: reported, StaleAck: int64Ptr(ack)}
	}
	if highest > 0 && reported < highest {
		return &metadataRegression{Seen: highest, Reported: reported, Latest: reported, StaleAck: int64Ptr(ack)}
	}
	return nil
}

// acknowledges reports whether ack accepts the recorded regression.
func (reg *metadataRegression) acknowledges(ack types.Int64) bool {
	if reg == nil || ack.IsNull() || ack.IsUnknown() {
		return false
	}
	a := ack.ValueInt64()
	if reg.StaleAck != nil && *reg.StaleAck == a {
		return false
	}
	return reg.Reported <= a && a <= max(reg.Latest, reg.Reported)
}

// latest is the version the coordinator reported at the last refresh.
func (reg *metadataRegression) latest() int64 { return max(reg.Latest, reg.Reported) }
