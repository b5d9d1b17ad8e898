package provider

import (
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// limitWarning exists because Terraform silently stops at limit results, so a
// bulk import would leave the rest unmanaged unnoticed.
func limitWarning(limit int64, total int, noun, last string, prefix types.String) diag.Diagnostic {
	narrow := "or narrow each list block with config { stream_prefix = \"...\" } and query the prefixes in turn"
	if !prefix.IsNull() {
		narrow = fmt.Sprintf("the list block already lists only stream prefix %q", prefix.ValueString())
	}
	return diag.NewWarningDiagnostic(
		fmt.Sprintf("Query result cut at limit = %d", limit),
		fmt.Sprintf("The coordinator has %d matching %s, but the list block's limit (%d; Terraform's default is 100) returned only the first %d, "+
			"ordered by stream prefix, then consumer group, up to %s. The rest were not listed, and -generate-config-out, if used, "+
			"generates no configuration for them. Set limit = %d or more in the list block and run terraform query again (%s).",
			total, noun, limit, limit, last, total, narrow))
}
