package provider

import (
	"regexp"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
)

// notBlankValidator refuses what the coordinator's Java String.trim() empties
// (blank.Body: code points up to U+0020 only), which it answers with 400
// "must not be blank"; TestNotBlankValidatorIsJavaTrim checks it rune by rune.
var notBlankValidator = stringvalidator.RegexMatches(regexp.MustCompile(`[^\x00-\x20]`),
	"must not be blank (the coordinator rejects a blank reason or requestedBy with 400 INVALID_REQUEST): say who asks for "+
		"this operation and why. The coordinator strips every character up to U+0020 (spaces, tabs, newlines and the other "+
		"control characters, as Java's String.trim() does) before checking, and nothing may be left")
