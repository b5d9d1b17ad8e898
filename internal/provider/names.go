package provider

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
)

// MaxShardCount is the provider's upper bound on shard counts. The coordinator
// sets none; a bound catches typos such as 10000 before they provision
// thousands of Redis streams.
const MaxShardCount = 1024

// maxNameLength bounds stream prefixes and consumer group names. The
// coordinator sets no limit; Redis keys, audit records and URLs stay readable.
const maxNameLength = 200

// namePattern is the coordinator's recommendation for both names (CONTRACT
// §14): no '/', braces (Redis Cluster hash tags), whitespace, ';' or '*'.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9._:-]+$`)

// checkName returns why a stream prefix or consumer group name is unsafe, or "".
func checkName(kind, v string) string {
	switch {
	case v == "":
		return kind + " must not be empty."
	case len(v) > maxNameLength:
		return fmt.Sprintf("%s is %d characters long; the provider allows at most %d.", kind, len(v), maxNameLength)
	case strings.ContainsAny(v, "{}"):
		return fmt.Sprintf("%s %q contains a brace: braces would make a Redis Cluster hash tag, and the coordinator rejects them.", kind, v)
	case strings.Contains(v, "/"):
		return fmt.Sprintf("%s %q contains '/': names are single URL path segments, and '/' also separates the import id.", kind, v)
	case !namePattern.MatchString(v):
		return fmt.Sprintf("%s %q may only contain letters, digits, '.', '_', ':' and '-' (no whitespace, ';' or '*').", kind, v)
	}
	return ""
}

// nameValidator checks stream prefixes and consumer group names at plan time.
type nameValidator struct{ kind string }

func (v nameValidator) Description(context.Context) string {
	return fmt.Sprintf("%s of 1 to %d letters, digits, '.', '_', ':' or '-'", v.kind, maxNameLength)
}

func (v nameValidator) MarkdownDescription(ctx context.Context) string { return v.Description(ctx) }

func (v nameValidator) ValidateString(_ context.Context, req validator.StringRequest, resp *validator.StringResponse) {
	if req.ConfigValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	if msg := checkName(v.kind, req.ConfigValue.ValueString()); msg != "" {
		resp.Diagnostics.AddAttributeError(req.Path, "Invalid "+v.kind, msg)
	}
}

var (
	streamPrefixValidator  = nameValidator{kind: "stream prefix"}
	consumerGroupValidator = nameValidator{kind: "consumer group"}
)

// groupID is the import id and resource id of a group: "{streamPrefix}/{consumerGroup}".
func groupID(streamPrefix, consumerGroup string) string {
	return streamPrefix + "/" + consumerGroup
}

// parseGroupID splits an import id. Neither part can contain '/', so exactly
// one '/' separates them.
func parseGroupID(id string) (streamPrefix, consumerGroup string, err error) {
	parts := strings.Split(id, "/")
	if len(parts) != 2 {
		return "", "", fmt.Errorf("import id %q must have the form {stream_prefix}/{consumer_group}, for example orders/order-service", id)
	}
	for i, kind := range []string{"stream prefix", "consumer group"} {
		if msg := checkName(kind, parts[i]); msg != "" {
			return "", "", fmt.Errorf("import id %q: %s Expected {stream_prefix}/{consumer_group}, for example orders/order-service", id, msg)
		}
	}
	return parts[0], parts[1], nil
}

// importGroupID imports a resource keyed by "{stream_prefix}/{consumer_group}",
// setting the identity attributes plus the defaults Read cannot infer, so the
// plan after importing with a natural configuration is empty.
func importGroupID(ctx context.Context, id string, resp *resource.ImportStateResponse, defaults map[string]any) {
	p, g, err := parseGroupID(id)
	if err != nil {
		resp.Diagnostics.AddError("Invalid import id", err.Error())
		return
	}
	attrs := map[string]any{"id": groupID(p, g), "stream_prefix": p, "consumer_group": g}
	maps.Copy(attrs, defaults)
	for _, name := range sortedKeys(attrs) {
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root(name), attrs[name])...)
	}
}
