package provider

import (
	"context"
	"fmt"
	"maps"
	"math"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/blank"
)

// MaxShardCount is the coordinator's limit: validators are never stricter than
// the server, so whatever it holds can be imported.
const MaxShardCount = math.MaxInt32

// ConventionalShardCount is the count above which a new count gets a plan-time
// warning (catching typos such as 10000), never an error.
const ConventionalShardCount = 1024

func largeShardCountWarning(diags *diag.Diagnostics, attr string, n int64, what string) {
	if n <= ConventionalShardCount {
		return
	}
	diags.AddAttributeWarning(path.Root(attr), fmt.Sprintf("Unusually large shard count: %d", n), fmt.Sprintf(
		"%s %d shards. The coordinator sets no upper bound, so this is valid, but it is above %d: each shard is a Redis stream "+
			"(with stream provisioning on, the coordinator creates every one of them), every producer routes over all of them, and "+
			"consumers are assigned them one by one. Check that %d is not a typo; this is only a warning.",
		what, n, ConventionalShardCount, n))
}

const (
	kindStreamPrefix  = "stream prefix"
	kindConsumerGroup = "consumer group"
)

// conventionalNameLength: the coordinator sets no limit, so only a warning.
const conventionalNameLength = 200

// conventionalNamePattern is only a warning for new names: existing groups may
// carry any name the server accepted.
var conventionalNamePattern = regexp.MustCompile(`^[A-Za-z0-9._:-]+$`)

// checkName refuses only what cannot round-trip through one URL path segment
// and, for a stream prefix, braces; everything else is percent-encoded.
func checkName(kind, v string) string {
	return nameProblem(kind, v, kind == kindStreamPrefix)
}

func nameProblem(label, v string, isPrefix bool) string {
	switch {
	case v == "":
		return label + " must not be empty."
	case blank.Name(v):
		return fmt.Sprintf("%s %q is blank (only whitespace): the coordinator rejects blank names.", label, v)
	case isPrefix && strings.ContainsAny(v, "{}"):
		return fmt.Sprintf("%s %q contains a brace: braces would make a Redis Cluster hash tag, and the coordinator rejects them.", label, v)
	case strings.Contains(v, "/"):
		return fmt.Sprintf("%s %q contains '/': names are single URL path segments (the coordinator's web server refuses an encoded '/'), "+
			"and '/' also separates the import id.", label, v)
	case strings.Contains(v, ";"):
		return fmt.Sprintf("%s %q contains ';': the coordinator's web framework cuts a path segment at ';' (path parameters), "+
			"so the name cannot be addressed.", label, v)
	case strings.Contains(strings.ToLower(v), "%2f"):
		return fmt.Sprintf("%s %q contains %%2F, an encoded '/': the coordinator's web server refuses it in a path, "+
			"and names are single URL path segments. Write the name itself, without percent-encoding.", label, v)
	case v == "." || v == "..":
		return fmt.Sprintf("%s %q is a dot segment: URLs normalize it away, so the name cannot be addressed.", label, v)
	}
	return ""
}

// unconventionalNameWarning is for creates only. It assumes checkName(kind, v) == "".
func unconventionalNameWarning(kind, v string) string {
	var why []string
	if !conventionalNamePattern.MatchString(v) {
		why = append(why, "it has characters outside letters, digits, '.', '_', ':' and '-'")
	}
	if n := utf8.RuneCountInString(v); n > conventionalNameLength {
		why = append(why, fmt.Sprintf("it is %d characters long (conventionally at most %d)", n, conventionalNameLength))
	}
	if len(why) == 0 {
		return ""
	}
	return fmt.Sprintf("The new %s %q is valid, and the provider percent-encodes it in every request, but %s. Shells, "+
		"redis-cli scripts, Redis tooling and dashboards may need quoting or escaping for it. Prefer letters, digits, '.', '_', "+
		"':' and '-' for new names; this is only a warning, and names of existing groups are never warned about.",
		kind, v, strings.Join(why, " and "))
}

// Unknown values are skipped: Terraform plans again during apply.
func newNameWarnings(streamPrefix, consumerGroup types.String) diag.Diagnostics {
	var diags diag.Diagnostics
	for _, a := range []struct {
		attr, kind string
		v          types.String
	}{{"stream_prefix", kindStreamPrefix, streamPrefix}, {"consumer_group", kindConsumerGroup, consumerGroup}} {
		if a.v.IsNull() || a.v.IsUnknown() || checkName(a.kind, a.v.ValueString()) != "" {
			continue
		}
		if msg := unconventionalNameWarning(a.kind, a.v.ValueString()); msg != "" {
			diags.AddAttributeWarning(path.Root(a.attr), "Unconventional "+a.kind+" name", msg)
		}
	}
	return diags
}

type nameValidator struct{ kind string }

func (v nameValidator) Description(context.Context) string {
	d := fmt.Sprintf("a non-blank %s that fits one URL path segment: no '/', ';' or %%2F, and not '.' or '..'", v.kind)
	if v.kind == kindStreamPrefix {
		d += "; no braces"
	}
	return d
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
	streamPrefixValidator  = nameValidator{kind: kindStreamPrefix}
	consumerGroupValidator = nameValidator{kind: kindConsumerGroup}
)

func groupID(streamPrefix, consumerGroup string) string {
	return streamPrefix + "/" + consumerGroup
}

func parseGroupID(id string) (streamPrefix, consumerGroup string, err error) {
	parts := strings.Split(id, "/")
	if len(parts) != 2 {
		return "", "", fmt.Errorf("import id %q must have the form {stream_prefix}/{consumer_group}, for example orders/order-service", id)
	}
	for i, kind := range []string{kindStreamPrefix, kindConsumerGroup} {
		if msg := checkName(kind, parts[i]); msg != "" {
			return "", "", fmt.Errorf("import id %q: %s Expected {stream_prefix}/{consumer_group}, for example orders/order-service", id, msg)
		}
	}
	return parts[0], parts[1], nil
}

// importGroupID sets the defaults Read cannot infer, so the plan after an
// import is empty.
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
