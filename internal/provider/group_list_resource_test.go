package provider

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	fwresource "github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/knownvalue"
	"github.com/hashicorp/terraform-plugin-testing/querycheck"
	"github.com/hashicorp/terraform-plugin-testing/querycheck/queryfilter"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
	"github.com/hashicorp/terraform-plugin-testing/tfversion"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// listingServer is a provider server that serves list resources too.
type listingServer interface {
	tfprotov6.ProviderServer
	tfprotov6.ListResourceServer
}

// protoProvider drives the provider server over its protocol, as Terraform
// does, without a Terraform binary.
type protoProvider struct {
	t      *testing.T
	ctx    context.Context
	server listingServer
	schema *tfprotov6.GetProviderSchemaResponse
}

func newProtoProvider(t *testing.T, env *acctest.Env) *protoProvider {
	t.Helper()
	ctx := ctxT(t)
	s, ok := testServer().(listingServer)
	if !ok {
		t.Fatalf("the provider server %T does not serve list resources", testServer())
	}
	schema, err := s.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil || hasErrorDiag(schema.Diagnostics) {
		t.Fatalf("GetProviderSchema: %v %v", err, diagText(schema.Diagnostics))
	}
	p := &protoProvider{t: t, ctx: ctx, server: s, schema: schema}
	cfg := p.object(schema.Provider.ValueType(), map[string]tftypes.Value{
		"endpoint": tftypes.NewValue(tftypes.String, env.Endpoint),
		"username": tftypes.NewValue(tftypes.String, env.Writer.Username),
		"password": tftypes.NewValue(tftypes.String, env.Writer.Password),
	})
	resp, err := s.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{TerraformVersion: "1.16.4", Config: cfg})
	if err != nil || hasErrorDiag(resp.Diagnostics) {
		t.Fatalf("ConfigureProvider: %v %v", err, diagText(resp.Diagnostics))
	}
	return p
}

// object is a DynamicValue of an object type with the given attributes set
// and every other attribute null.
func (p *protoProvider) object(typ tftypes.Type, set map[string]tftypes.Value) *tfprotov6.DynamicValue {
	p.t.Helper()
	obj, ok := typ.(tftypes.Object)
	if !ok {
		p.t.Fatalf("%s is not an object type", typ)
	}
	vals := map[string]tftypes.Value{}
	for name, at := range obj.AttributeTypes {
		if v, ok := set[name]; ok {
			vals[name] = v
		} else {
			vals[name] = tftypes.NewValue(at, nil)
		}
	}
	dv, err := tfprotov6.NewDynamicValue(obj, tftypes.NewValue(obj, vals))
	if err != nil {
		p.t.Fatal(err)
	}
	return &dv
}

func (p *protoProvider) resourceType(typeName string) tftypes.Type {
	return p.schema.ResourceSchemas[typeName].ValueType()
}

// importAndRead imports id into typeName and refreshes it, as `terraform
// plan` with an import block does, returning the state and identity.
func (p *protoProvider) importAndRead(typeName, id string) (tftypes.Value, *tfprotov6.ResourceIdentityData) {
	p.t.Helper()
	imp, err := p.server.ImportResourceState(p.ctx, &tfprotov6.ImportResourceStateRequest{TypeName: typeName, ID: id})
	if err != nil || hasErrorDiag(imp.Diagnostics) || len(imp.ImportedResources) != 1 {
		p.t.Fatalf("ImportResourceState(%s, %s): %v %v", typeName, id, err, diagText(imp.Diagnostics))
	}
	ir := imp.ImportedResources[0]
	read, err := p.server.ReadResource(p.ctx, &tfprotov6.ReadResourceRequest{
		TypeName: typeName, CurrentState: ir.State, Private: ir.Private, CurrentIdentity: ir.Identity,
	})
	if err != nil || hasErrorDiag(read.Diagnostics) {
		p.t.Fatalf("ReadResource(%s, %s): %v %v", typeName, id, err, diagText(read.Diagnostics))
	}
	v, err := read.NewState.Unmarshal(p.resourceType(typeName))
	if err != nil {
		p.t.Fatal(err)
	}
	return v, read.NewIdentity
}

// list queries typeName's list resource, returning its results in order.
func (p *protoProvider) list(typeName string, prefix *string, includeResource bool, limit int64) []tfprotov6.ListResourceResult {
	p.t.Helper()
	set := map[string]tftypes.Value{}
	if prefix != nil {
		set["stream_prefix"] = tftypes.NewValue(tftypes.String, *prefix)
	}
	cfg := p.object(p.schema.ListResourceSchemas[typeName].ValueType(), set)
	stream, err := p.server.ListResource(p.ctx, &tfprotov6.ListResourceRequest{TypeName: typeName, Config: cfg, IncludeResource: includeResource, Limit: limit})
	if err != nil {
		p.t.Fatalf("ListResource(%s): %v", typeName, err)
	}
	var out []tfprotov6.ListResourceResult
	for r := range stream.Results {
		if hasErrorDiag(r.Diagnostics) {
			p.t.Fatalf("ListResource(%s): %v", typeName, diagText(r.Diagnostics))
		}
		out = append(out, r)
	}
	return out
}

func (p *protoProvider) identity(typeName string, id *tfprotov6.ResourceIdentityData) map[string]string {
	p.t.Helper()
	if id == nil || id.IdentityData == nil {
		return nil
	}
	typ := p.identityType(typeName)
	v, err := id.IdentityData.Unmarshal(typ)
	if err != nil {
		p.t.Fatal(err)
	}
	var attrs map[string]tftypes.Value
	if err := v.As(&attrs); err != nil {
		p.t.Fatal(err)
	}
	out := map[string]string{}
	for k, a := range attrs {
		var s string
		_ = a.As(&s)
		out[k] = s
	}
	return out
}

func (p *protoProvider) identityType(typeName string) tftypes.Type {
	p.t.Helper()
	resp, err := p.server.GetResourceIdentitySchemas(p.ctx, &tfprotov6.GetResourceIdentitySchemasRequest{})
	if err != nil {
		p.t.Fatal(err)
	}
	return resp.IdentitySchemas[typeName].ValueType()
}

func hasErrorDiag(diags []*tfprotov6.Diagnostic) bool {
	for _, d := range diags {
		if d.Severity == tfprotov6.DiagnosticSeverityError {
			return true
		}
	}
	return false
}

func diagText(diags []*tfprotov6.Diagnostic) string {
	s := ""
	for _, d := range diags {
		s += fmt.Sprintf("[%s] %s: %s; ", d.Severity, d.Summary, d.Detail)
	}
	return s
}

// With include_resource, each result carries the resource exactly as an
// import followed by a refresh records it (both resources, including a
// group whose prefix was scaled after it was created, so its shard count
// and metadata version differ from a new group's), with the identity and
// display name {p}/{g}.
func TestAccGroupList_resourceMatchesImport(t *testing.T) {
	skipUnlessAcc(t)
	env := acctest.New(t, acctest.Options{})
	a := &accTest{env: env}
	p := acctest.RandomName("listed")
	for _, g := range []string{"b-svc", "a-svc", "c-svc"} {
		a.createGroupOutOfBand(t, p, g, 3)
	}
	scaleOutOfBand(t, a, p, 5)
	pp := newProtoProvider(t, env)

	for _, tc := range []struct {
		typeName string
		groups   []string
	}{
		{"redisstreamcoordinator_group", []string{"a-svc", "b-svc", "c-svc"}},
		// One result per prefix: its first group by name.
		{"redisstreamcoordinator_group_shard_count", []string{"a-svc"}},
	} {
		t.Run(tc.typeName, func(t *testing.T) {
			pp.t = t
			results := pp.list(tc.typeName, &p, true, 100)
			if len(results) != len(tc.groups) {
				t.Fatalf("%d results, want %d", len(results), len(tc.groups))
			}
			for i, g := range tc.groups {
				r := results[i]
				if want := p + "/" + g; r.DisplayName != want {
					t.Errorf("result %d: display name %q, want %q", i, r.DisplayName, want)
				}
				state, identity := pp.importAndRead(tc.typeName, p+"/"+g)
				if got, want := pp.identity(tc.typeName, r.Identity), pp.identity(tc.typeName, identity); fmt.Sprint(got) != fmt.Sprint(want) ||
					got["stream_prefix"] != p || got["consumer_group"] != g {
					t.Errorf("result %d: identity %v, want %v (the imported resource's)", i, got, want)
				}
				if r.Resource == nil {
					t.Fatalf("result %d has no resource although include_resource is set", i)
				}
				listed, err := r.Resource.Unmarshal(pp.resourceType(tc.typeName))
				if err != nil {
					t.Fatal(err)
				}
				if !listed.Equal(state) {
					diffs, _ := listed.Diff(state)
					t.Errorf("result %d (%s/%s): the listed resource differs from the imported and refreshed one:\nlisted:   %s\nimported: %s\ndiffs: %v",
						i, p, g, listed, state, diffs)
				}
			}
		})
	}
}

// A query costs the coordinator one GET /monitoring/groups, whatever the
// number of groups, and both list resources of one provider share it; limit
// is honoured, and without include_resource no resource is sent.
func TestAccGroupList_oneListingLimitAndFilter(t *testing.T) {
	skipUnlessAcc(t)
	env := acctest.New(t, acctest.Options{})
	c := env.RequireInRepo(t, "counts the coordinator's requests by route")
	a := &accTest{env: env}
	base := acctest.RandomName("q")
	for i := 0; i < 6; i++ {
		for _, g := range []string{"x", "y"} {
			a.createGroupOutOfBand(t, countedPrefix(base, i), g, 2)
		}
	}
	pp := newProtoProvider(t, env)
	c.ResetRequestCounts()

	all := pp.list("redisstreamcoordinator_group", nil, false, 1000)
	if len(all) < 12 {
		t.Errorf("listing every group: %d results, want at least the test's 12", len(all))
	}
	for _, r := range all {
		if r.Resource != nil {
			t.Errorf("%s: a resource without include_resource", r.DisplayName)
		}
	}
	prefix := countedPrefix(base, 3)
	one := pp.list("redisstreamcoordinator_group", &prefix, true, 1000)
	if len(one) != 2 || one[0].DisplayName != prefix+"/x" || one[1].DisplayName != prefix+"/y" {
		t.Errorf("filtered on %s: %v", prefix, displayNames(one))
	}
	limited := pp.list("redisstreamcoordinator_group", nil, true, 5)
	if len(limited) != 5 {
		t.Errorf("limit 5: %d results", len(limited))
	}
	counts := pp.list("redisstreamcoordinator_group_shard_count", nil, true, 1000)
	if len(counts) < 6 {
		t.Errorf("shard counts: %d results, want one per prefix (at least the test's 6)", len(counts))
	}
	if got := pp.list("redisstreamcoordinator_group", nil, true, 0); len(got) != 0 {
		t.Errorf("limit 0: %d results", len(got))
	}
	if total, listings := totalOf(c.RequestCounts()), c.RequestCount("GET", coordinator.RouteMonitoringGroups); total != 1 || listings != 1 {
		t.Errorf("five queries of one provider sent %d requests (%d listings), want the one listing: %v", total, listings, c.RequestCounts())
	}

	missing := "no-such-prefix"
	if got := pp.list("redisstreamcoordinator_group", &missing, true, 100); len(got) != 1 || got[0].Identity != nil || len(got[0].Diagnostics) != 1 ||
		got[0].Diagnostics[0].Severity != tfprotov6.DiagnosticSeverityWarning {
		t.Errorf("an unknown prefix: want a single warning and no result, got %d results", len(got))
	}
}

// skipUnlessAcc skips a test that needs a coordinator but no Terraform
// unless TF_ACC is set, as the suite's other coordinator tests do.
func skipUnlessAcc(t *testing.T) {
	t.Helper()
	if os.Getenv(resource.EnvTfAcc) == "" {
		t.Skipf("acceptance test: set %s=1", resource.EnvTfAcc)
	}
	t.Parallel()
}

func displayNames(results []tfprotov6.ListResourceResult) []string {
	var out []string
	for _, r := range results {
		out = append(out, r.DisplayName)
	}
	return out
}

// TestAccGroupList_query runs both list resources through `terraform query`
// (terraform-plugin-testing's query mode): a prefix filter, identities,
// display names, and with include_resource the resource's values.
func TestAccGroupList_query(t *testing.T) {
	a := newAccTest(t, acctest.Options{})
	p := acctest.RandomName("tfquery")
	for _, g := range []string{"beta", "alpha"} {
		a.createGroupOutOfBand(t, p, g, 5)
	}
	ident := func(g string) map[string]knownvalue.Check {
		return map[string]knownvalue.Check{"stream_prefix": knownvalue.StringExact(p), "consumer_group": knownvalue.StringExact(g)}
	}
	resource.ParallelTest(t, resource.TestCase{
		ProtoV6ProviderFactories: a.factories(),
		TerraformVersionChecks: []tfversion.TerraformVersionCheck{
			tfversion.SkipBelow(tfversion.Version1_14_0), // list resources; OpenTofu (1.12) reports its own version and skips
		},
		Steps: []resource.TestStep{
			{Config: a.env.ProviderConfig()},
			{
				// The query file holds only the list blocks: the provider block
				// is the previous step's configuration, which stays.
				Query: true,
				Config: fmt.Sprintf(`
list "redisstreamcoordinator_group" "prefix" {
  provider         = redisstreamcoordinator
  include_resource = true
  config {
    stream_prefix = %[1]q
  }
}

list "redisstreamcoordinator_group_shard_count" "prefix" {
  provider = redisstreamcoordinator
  config {
    stream_prefix = %[1]q
  }
}
`, p),
				QueryResultChecks: []querycheck.QueryResultCheck{
					querycheck.ExpectLength("redisstreamcoordinator_group.prefix", 2),
					querycheck.ExpectIdentity("redisstreamcoordinator_group.prefix", ident("alpha")),
					querycheck.ExpectIdentity("redisstreamcoordinator_group.prefix", ident("beta")),
					querycheck.ExpectResourceDisplayName("redisstreamcoordinator_group.prefix", queryfilter.ByResourceIdentity(ident("beta")),
						knownvalue.StringExact(p+"/beta")),
					querycheck.ExpectResourceKnownValues("redisstreamcoordinator_group.prefix", queryfilter.ByResourceIdentity(ident("alpha")),
						[]querycheck.KnownValueCheck{
							{Path: tfjsonpath.New("initial_shard_count"), KnownValue: knownvalue.Int64Exact(5)},
							{Path: tfjsonpath.New("deletion_policy"), KnownValue: knownvalue.StringExact("ABANDON")},
							{Path: tfjsonpath.New("metadata_version"), KnownValue: knownvalue.NotNull()},
						}),
					// One shard count per prefix: its first group by name.
					querycheck.ExpectLength("redisstreamcoordinator_group_shard_count.prefix", 1),
					querycheck.ExpectIdentity("redisstreamcoordinator_group_shard_count.prefix", ident("alpha")),
				},
			},
		},
	})
}

// streamResults honours limit and stops building results as soon as
// Terraform stops reading (push returns false).
func TestStreamResultsHonoursLimitAndStops(t *testing.T) {
	ctx := context.Background()
	var rs fwresource.SchemaResponse
	NewGroupResource().Schema(ctx, fwresource.SchemaRequest{}, &rs)
	var is fwresource.IdentitySchemaResponse
	NewGroupResource().(fwresource.ResourceWithIdentity).IdentitySchema(ctx, fwresource.IdentitySchemaRequest{}, &is)
	var groups []*client.Group
	for i := 0; i < 5; i++ {
		groups = append(groups, &client.Group{StreamPrefix: "p", ConsumerGroup: fmt.Sprintf("g%d", i), ShardCount: 1, MetadataVersion: 1})
	}
	for _, tc := range []struct {
		limit       int64
		stopAfter   int
		wantPushed  int
		wantBuilt   int
		description string
	}{
		{limit: 3, stopAfter: 100, wantPushed: 3, wantBuilt: 3, description: "limit 3"},
		{limit: 100, stopAfter: 2, wantPushed: 2, wantBuilt: 2, description: "Terraform stops reading after 2"},
		{limit: 0, stopAfter: 100, wantPushed: 0, wantBuilt: 0, description: "limit 0"},
	} {
		built, pushed := 0, 0
		req := list.ListRequest{IncludeResource: true, Limit: tc.limit, ResourceSchema: rs.Schema, ResourceIdentitySchema: is.IdentitySchema}
		results := streamResults(ctx, req, groups, types.StringNull(), "groups", func(ctx context.Context, res *tfsdk.Resource, grp *client.Group) diag.Diagnostics {
			built++
			return fillImportedGroup(ctx, res, grp)
		})
		for r := range results {
			if r.Diagnostics.HasError() {
				t.Fatalf("%s: %v", tc.description, r.Diagnostics)
			}
			pushed++
			if pushed == tc.stopAfter {
				break
			}
		}
		if pushed != tc.wantPushed || built != tc.wantBuilt {
			t.Errorf("%s: %d results pushed, %d resources built; want %d and %d", tc.description, pushed, built, tc.wantPushed, tc.wantBuilt)
		}
	}
}
