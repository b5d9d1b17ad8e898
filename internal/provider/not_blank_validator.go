package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/schema/validator"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/blank"
)

// notBlankValidator refuses what the coordinator's Java String.trim() empties
// (code points up to U+0020): 400 "must not be blank".
var notBlankValidator validator.String = notBlank{}

type notBlank struct{}

const notBlankRule = "must not be blank (the coordinator rejects a blank reason or requestedBy with 400 INVALID_REQUEST): " +
	"say who asks for this operation and why"

func (notBlank) Description(context.Context) string { return notBlankRule }

func (v notBlank) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (notBlank) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if v := req.ConfigValue.ValueString(); blank.Body(v) {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid Attribute Value", fmt.Sprintf(
			"Attribute %s %s, got: %+q. The coordinator strips every character up to U+0020 (spaces, tabs, newlines and the "+
				"other control characters, as Java's String.trim() does) before checking, and nothing is left.", req.Path, notBlankRule, v))
	}
}
