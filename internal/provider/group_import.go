package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
)

// An import never creates: a Read that finds no group while the import marker
// is set removes the resource, so Terraform fails the import instead of
// planning a create.

func importedNotRead(ctx context.Context, private privateGetter) bool {
	rec, diags := readPrivateRecord(ctx, private)
	return !diags.HasError() && rec.ImportedNotRead
}

func importConfirmed(ctx context.Context, private privateSetter) diag.Diagnostics {
	return updatePrivateRecord(ctx, private, func(r *privateRecord) { r.ImportedNotRead = false })
}
