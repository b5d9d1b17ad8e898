package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// A create refused because its siblings moved says what the apply sent
// before it: nothing at plan time, and the delete of the group a
// replacement removed when the apply already sent it (issue 43: "Nothing
// was sent" after a DELETE was false).
func TestResolveInitialShardCountSaysWhatTheApplySent(t *testing.T) {
	var reg planRegistry
	siblings := []client.Group{{StreamPrefix: "p", ConsumerGroup: "g1", ShardCount: 6}}
	detail := func() string {
		_, diags := resolveInitialShardCount(context.Background(), siblings, "p", "g2", types.Int64Value(4), sentBefore(&reg, "p"))
		if !diags.HasError() {
			t.Fatal("a configured count unlike the siblings' must be refused")
		}
		return diags.Errors()[0].Detail()
	}
	if d := detail(); !strings.Contains(d, "Nothing was sent to the coordinator.") {
		t.Errorf("before any delete: %s", d)
	}
	reg.note("p", "g2", func(rg *runGroup) { rg.deleted = &client.Group{StreamPrefix: "p", ConsumerGroup: "g2", ShardCount: 4} })
	if d := detail(); strings.Contains(d, "Nothing was sent to the coordinator") || !strings.Contains(d, `already deleted group "g2"`) {
		t.Errorf("after the replacement's delete: %s", d)
	}
}
