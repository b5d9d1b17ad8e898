package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
)

// An import never creates. Every import of both resources — `terraform
// import`, an import block with an id or an identity, the configuration
// `terraform query -generate-config-out` or `plan -generate-config-out`
// writes — goes through importGroup, which marks the imported state in its
// private state (privateImported), and then through Read, which removes the
// marker once it has read the group. A Read that finds no group while the
// marker is set removes the resource, so Terraform fails the import with
// "Cannot import non-existent remote object" and nothing is planned, let
// alone created. Without the marker the state is one this configuration
// created (or adopted by an import that read the group), and a group gone
// from the coordinator is planned for re-creation as a new lifecycle (-/+).

// The marker is privateRecord.ImportedNotRead: importGroup sets it and the
// first Read after the import clears it.

// markImported records that the state is an import the coordinator has not
// confirmed yet.
func markImported(ctx context.Context, private privateSetter) diag.Diagnostics {
	return updatePrivateRecord(ctx, private, func(r *privateRecord) { r.ImportedNotRead = true })
}

// importedNotRead reports whether the state is an import not read yet.
func importedNotRead(ctx context.Context, private privateGetter) bool {
	rec, diags := readPrivateRecord(ctx, private)
	return !diags.HasError() && rec.ImportedNotRead
}

// importConfirmed clears the marker once Read has read the group.
func importConfirmed(ctx context.Context, private privateSetter) diag.Diagnostics {
	return updatePrivateRecord(ctx, private, func(r *privateRecord) { r.ImportedNotRead = false })
}
