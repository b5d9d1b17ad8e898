package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Rejoining consumers raise metadataVersion after a restore, so the value a
// user copies from the error is soon below the reported one: an
// acknowledgement accepts a regression when it is at most the version reported
// now. An acknowledgement written for an earlier regression never does.

// nextRegression keeps the record until an apply acknowledges it, even when
// churn lifts the version back above the old high-water mark.
func nextRegression(prior *metadataRegression, highest, reported int64, ack types.Int64) *metadataRegression {
	if prior != nil {
		latest := max(prior.Latest, prior.Reported)
		if reported >= latest {
			next := *prior
			next.Latest = reported
			return &next
		}
		// The unacknowledged record's range is stale: an acknowledgement written for
		// it does not accept this one.
		stale := append(append([]versionRange(nil), prior.Stale...), versionRange{prior.Reported, latest})
		return &metadataRegression{Seen: max(prior.Seen, latest), Reported: reported, Latest: reported, StaleAck: int64Ptr(ack), Stale: stale}
	}
	if highest > 0 && reported < highest {
		return &metadataRegression{Seen: highest, Reported: reported, Latest: reported, StaleAck: int64Ptr(ack)}
	}
	return nil
}

type versionRange [2]int64

func (reg *metadataRegression) acknowledges(ack types.Int64) bool {
	if reg == nil || ack.IsNull() || ack.IsUnknown() {
		return false
	}
	_, why := reg.refusal(ack.ValueInt64())
	return why == ""
}

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

func (reg *metadataRegression) latest() int64 { return max(reg.Latest, reg.Reported) }
