package provider

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	fwresource "github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
)

// A list block whose limit cuts the result warns, through terraform query:
// Terraform itself stops at the limit without a word, and a bulk import
// would leave the rest unmanaged. A limit that the result only reaches does
// not warn.
func TestAccGroupList_limitWarning(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: set TF_ACC=1")
	}
	t.Parallel()
	tfBin, err := acctest.FindTerraform()
	if err != nil {
		t.Fatal(err)
	}
	if isTofu, err := acctest.IsOpenTofu(tfBin); err != nil {
		t.Fatal(err)
	} else if isTofu {
		t.Skip("OpenTofu has no list resources and no `query` command (OpenTofu 1.12)")
	}
	skipUnlessTerraform(t, tfBin, tfversion.SkipBelow(tfversion.Version1_14_0))
	a := &accTest{env: acctest.New(t, acctest.Options{})}
	p, other := acctest.RandomName("limit"), acctest.RandomName("limit-other")
	for _, g := range []string{"a", "b", "c"} {
		a.createGroupOutOfBand(t, p, g, 2)
	}
	a.createGroupOutOfBand(t, other, "a", 2)

	tf, ctx := cliTerraform(t, tfBin)
	out := &strings.Builder{}
	tf.Stdout, tf.Stderr = out, out
	query := fmt.Sprintf(`
list "redisstreamcoordinator_group" "cut" {
  provider         = redisstreamcoordinator
  include_resource = true
  limit            = 2
  config {
    stream_prefix = %[1]q
  }
}

list "redisstreamcoordinator_group" "whole" {
  provider = redisstreamcoordinator
  limit    = 3
  config {
    stream_prefix = %[1]q
  }
}

# Every prefix of the coordinator: at least this test's two.
list "redisstreamcoordinator_group_shard_count" "cut" {
  provider = redisstreamcoordinator
  limit    = 1
}
`, p)
	writeWorkFiles(t, tf.Dir, map[string]string{"main.tf": a.env.ProviderConfig(), "limit.tfquery.hcl": query})
	if code := runCLI(ctx, t, tf, "query"); code != 0 {
		t.Fatalf("terraform query exited %d:\n%s", code, out)
	}
	// Terraform wraps the detail: compare with whitespace collapsed.
	text := strings.Join(strings.Fields(out.String()), " ")
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`Warning: Query result cut at limit = 2 with list\.redisstreamcoordinator_group\.cut,`),
		regexp.MustCompile(`The coordinator has 3 matching groups, but the list block's limit \(2; Terraform's default is 100\) returned only the first 2, ` +
			`ordered by stream prefix, then consumer group, up to ` + regexp.QuoteMeta(p) + `/b\. The rest were not listed, ` +
			`and -generate-config-out, if used, generates no configuration for them\. Set limit = 3 or more in the list block`),
		regexp.MustCompile(`Warning: Query result cut at limit = 1 with list\.redisstreamcoordinator_group_shard_count\.cut,`),
		regexp.MustCompile(`The coordinator has [0-9]+ matching stream prefixes, but the list block's limit \(1;`),
		regexp.MustCompile(`or narrow each list block with config \{ stream_prefix = "\.\.\." \} and query the prefixes in turn`),
	} {
		if !want.MatchString(text) {
			t.Errorf("terraform query's output lacks %s", want)
		}
	}
	if n := strings.Count(text, "Warning: Query result cut"); n != 2 {
		t.Errorf("%d limit warnings, want 2 (the list block whose result only reaches its limit does not warn)", n)
	}
	if t.Failed() {
		t.Logf("terraform query:\n%s", out)
	}
}

// The limit warning rides on the last result Terraform reads, and only when
// the limit cut the list: a result of its own after the limit would never
// be read.
func TestStreamResultsWarnsOnlyWhenTheLimitCuts(t *testing.T) {
	ctx := context.Background()
	var rs fwresource.SchemaResponse
	NewGroupResource().Schema(ctx, fwresource.SchemaRequest{}, &rs)
	var is fwresource.IdentitySchemaResponse
	NewGroupResource().(fwresource.ResourceWithIdentity).IdentitySchema(ctx, fwresource.IdentitySchemaRequest{}, &is)
	var groups []*client.Group
	for i := 0; i < 3; i++ {
		groups = append(groups, &client.Group{StreamPrefix: "p", ConsumerGroup: fmt.Sprintf("g%d", i), ShardCount: 1, MetadataVersion: 1})
	}
	for _, tc := range []struct {
		limit      int64
		warnedAt   int // index of the result with the warning, -1 for none
		wantDetail string
	}{
		{limit: 2, warnedAt: 1, wantDetail: "The coordinator has 3 matching groups, but the list block's limit (2; Terraform's default is 100) returned only the first 2, ordered by stream prefix, then consumer group, up to p/g1."},
		{limit: 3, warnedAt: -1},
		{limit: 100, warnedAt: -1},
	} {
		req := list.ListRequest{Limit: tc.limit, ResourceSchema: rs.Schema, ResourceIdentitySchema: is.IdentitySchema}
		n := 0
		for r := range streamResults(ctx, req, groups, types.StringNull(), "groups", func(context.Context, *tfsdk.Resource, *client.Group) diag.Diagnostics { return nil }) {
			warnings := r.Diagnostics.Warnings()
			switch {
			case n == tc.warnedAt && (len(warnings) != 1 || warnings[0].Summary() != fmt.Sprintf("Query result cut at limit = %d", tc.limit) ||
				!strings.HasPrefix(warnings[0].Detail(), tc.wantDetail)):
				t.Errorf("limit %d, result %d: warnings %v, want the limit warning", tc.limit, n, warnings)
			case n != tc.warnedAt && len(warnings) != 0:
				t.Errorf("limit %d, result %d: unexpected warnings %v", tc.limit, n, warnings)
			}
			n++
		}
	}
}
