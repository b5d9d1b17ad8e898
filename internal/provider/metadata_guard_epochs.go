package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// Epochs going backwards signal a metadata rollback. Every change that raises
// the epochs also raises metadataVersion, so only lower epochs at the same
// version are a regression; the way out is the version rule's.

type epochMark struct {
	MetadataVersion int64 `json:"metadata_version"`
	GroupEpoch      int64 `json:"group_epoch"`
	AssignmentEpoch int64 `json:"assignment_epoch"`
}

func markOf(g *client.Group) epochMark {
	return epochMark{MetadataVersion: g.MetadataVersion, GroupEpoch: g.GroupEpoch, AssignmentEpoch: g.AssignmentEpoch}
}

type epochRegression struct {
	SeenGroupEpoch          int64 `json:"seen_group_epoch"`
	ReportedGroupEpoch      int64 `json:"reported_group_epoch"`
	SeenAssignmentEpoch     int64 `json:"seen_assignment_epoch"`
	ReportedAssignmentEpoch int64 `json:"reported_assignment_epoch"`
}

func observeEpochs(prev *epochMark, g *client.Group) (next epochMark, reg *metadataRegression) {
	now := markOf(g)
	switch {
	case prev == nil || now.MetadataVersion > prev.MetadataVersion:
		return now, nil
	case now.MetadataVersion < prev.MetadataVersion:
		return *prev, nil
	case now.GroupEpoch < prev.GroupEpoch || now.AssignmentEpoch < prev.AssignmentEpoch:
		return *prev, &metadataRegression{Seen: prev.MetadataVersion, Reported: now.MetadataVersion, Epochs: &epochRegression{
			SeenGroupEpoch: prev.GroupEpoch, ReportedGroupEpoch: now.GroupEpoch,
			SeenAssignmentEpoch: prev.AssignmentEpoch, ReportedAssignmentEpoch: now.AssignmentEpoch,
		}}
	}
	return epochMark{MetadataVersion: now.MetadataVersion, GroupEpoch: max(now.GroupEpoch, prev.GroupEpoch),
		AssignmentEpoch: max(now.AssignmentEpoch, prev.AssignmentEpoch)}, nil
}

func acknowledgedMark(reg *metadataRegression) *epochMark {
	if reg.Epochs == nil {
		return nil // the next refresh records the epochs at the new version
	}
	return &epochMark{MetadataVersion: reg.Reported, GroupEpoch: reg.Epochs.ReportedGroupEpoch, AssignmentEpoch: reg.Epochs.ReportedAssignmentEpoch}
}

func epochsRegressionDetail(resourceType, p, g string, reg *metadataRegression) string {
	e := reg.Epochs
	return fmt.Sprintf("%s %q: the coordinator reports metadataVersion %d for group %q of stream prefix %q, the version this resource "+
		"had seen, but its epochs went backwards: groupEpoch %d → %d, assignmentEpoch %d → %d. Epochs only rise, and never without "+
		"the version; lower epochs at the same version mean the group's metadata was corrupted or restored from an inconsistent "+
		"copy: consumers may hold a newer assignment than the coordinator.\n",
		resourceType, g, reg.Reported, g, p, e.SeenGroupEpoch, e.ReportedGroupEpoch, e.SeenAssignmentEpoch, e.ReportedAssignmentEpoch)
}

func observeGroupEpochs(ctx context.Context, prior privateGetter, private privateSetter, group *client.Group, diags *diag.Diagnostics) *metadataRegression {
	rec, d := readPrivateRecord(ctx, prior)
	diags.Append(d...)
	mark, reg := observeEpochs(rec.EpochsSeen, group)
	if reg != nil {
		tflog.Warn(ctx, "group epochs went backwards at the same metadata version", map[string]any{
			"stream_prefix": group.StreamPrefix, "consumer_group": group.ConsumerGroup, "metadata_version": reg.Reported,
			"group_epoch_seen": reg.Epochs.SeenGroupEpoch, "group_epoch_reported": reg.Epochs.ReportedGroupEpoch,
			"assignment_epoch_seen": reg.Epochs.SeenAssignmentEpoch, "assignment_epoch_reported": reg.Epochs.ReportedAssignmentEpoch,
		})
	}
	diags.Append(updatePrivateRecord(ctx, private, func(r *privateRecord) { r.EpochsSeen = &mark })...)
	return reg
}
