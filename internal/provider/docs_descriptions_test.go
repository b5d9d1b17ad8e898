package provider

import (
	"context"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// maxDescriptionWords bounds an attribute's or block's description: what it
// is, its default and its constraint. Runbooks belong in the guides and the
// resource pages' templates, not in the schema.
const maxDescriptionWords = 60

// Every attribute and block description of every schema the provider serves
// (the provider's, each resource's, data source's, ephemeral resource's,
// list resource's and action's, nested attributes and blocks included, and
// the resource identities) is at most maxDescriptionWords words, counted as
// strings.Fields.
func TestSchemaDescriptionsAreShort(t *testing.T) {
	ctx := context.Background()
	s := testServer()
	resp, err := s.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil || hasErrorDiag(resp.Diagnostics) {
		t.Fatalf("GetProviderSchema: %v %v", err, diagText(resp.Diagnostics))
	}
	schemas := map[string]*tfprotov6.Schema{"provider": resp.Provider}
	for kind, m := range map[string]map[string]*tfprotov6.Schema{
		"resource":           resp.ResourceSchemas,
		"data source":        resp.DataSourceSchemas,
		"ephemeral resource": resp.EphemeralResourceSchemas,
		"list resource":      resp.ListResourceSchemas,
	} {
		for name, sc := range m {
			schemas[kind+" "+name] = sc
		}
	}
	for name, a := range resp.ActionSchemas {
		schemas["action "+name] = a.Schema
	}
	ids, err := s.GetResourceIdentitySchemas(ctx, &tfprotov6.GetResourceIdentitySchemasRequest{})
	if err != nil || hasErrorDiag(ids.Diagnostics) {
		t.Fatalf("GetResourceIdentitySchemas: %v %v", err, diagText(ids.Diagnostics))
	}
	var names []string
	for name := range schemas {
		names = append(names, name)
	}
	sort.Strings(names)
	checked := 0
	check := func(where, desc string) {
		checked++
		if n := len(strings.Fields(desc)); n > maxDescriptionWords {
			t.Errorf("%s: description has %d words, more than %d: say what it is, its default and its constraint, and move the rest to a guide:\n%s",
				where, n, maxDescriptionWords, desc)
		}
	}
	for _, name := range names {
		if schemas[name] == nil || schemas[name].Block == nil {
			t.Errorf("%s: no schema", name)
			continue
		}
		walkDescriptions(name, schemas[name].Block, check)
	}
	for name, id := range ids.IdentitySchemas {
		for _, a := range id.IdentityAttributes {
			check("identity "+name+"."+a.Name, a.Description)
		}
	}
	if checked < 100 {
		t.Fatalf("checked only %d descriptions: the walk is broken", checked)
	}
}

func walkDescriptions(where string, b *tfprotov6.SchemaBlock, check func(where, desc string)) {
	for _, a := range b.Attributes {
		check(where+"."+a.Name, a.Description)
		if a.NestedType != nil {
			walkObject(where+"."+a.Name, a.NestedType, check)
		}
	}
	for _, nb := range b.BlockTypes {
		if nb.Block == nil {
			continue
		}
		check(where+"."+nb.TypeName, nb.Block.Description)
		walkDescriptions(where+"."+nb.TypeName, nb.Block, check)
	}
}

func walkObject(where string, o *tfprotov6.SchemaObject, check func(where, desc string)) {
	for _, a := range o.Attributes {
		check(where+"."+a.Name, a.Description)
		if a.NestedType != nil {
			walkObject(where+"."+a.Name, a.NestedType, check)
		}
	}
}
