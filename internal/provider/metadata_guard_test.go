package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

type fakePrivate map[string][]byte

func (f fakePrivate) SetKey(_ context.Context, key string, value []byte) diag.Diagnostics {
	if len(value) == 0 {
		delete(f, key)
		return nil
	}
	f[key] = value
	return nil
}

func (f fakePrivate) GetKey(_ context.Context, key string) ([]byte, diag.Diagnostics) {
	return f[key], nil
}

func TestObserveMetadataVersion(t *testing.T) {
	cases := []struct {
		name      string
		seen      types.Int64
		reported  int64
		store     int64
		regressed bool
	}{
		{"first read", types.Int64Null(), 3, 3, false},
		{"unknown", types.Int64Unknown(), 3, 3, false},
		{"same", types.Int64Value(3), 3, 3, false},
		{"advanced", types.Int64Value(3), 5, 5, false},
		{"regressed keeps the highest", types.Int64Value(5), 1, 5, true},
	}
	for _, c := range cases {
		store, regressed := observeMetadataVersion(c.seen, c.reported)
		if store.ValueInt64() != c.store || regressed != c.regressed {
			t.Errorf("%s: got (%v, %v), want (%d, %v)", c.name, store, regressed, c.store, c.regressed)
		}
	}
}

func TestMetadataRegressionPrivateRoundTrip(t *testing.T) {
	ctx := context.Background()
	priv := fakePrivate{}
	reg, diags := readMetadataRegression(ctx, priv)
	if reg != nil || diags.HasError() {
		t.Fatalf("empty private state: got %v %v", reg, diags)
	}
	if d := setMetadataRegression(ctx, priv, &metadataRegression{Seen: 7, Reported: 1}); d.HasError() {
		t.Fatal(d)
	}
	if got := string(priv[privateMetadataRegression]); got != `{"seen":7,"reported":1}` {
		t.Fatalf("stored %s", got)
	}
	reg, diags = readMetadataRegression(ctx, priv)
	if diags.HasError() || reg == nil || reg.Seen != 7 || reg.Reported != 1 {
		t.Fatalf("read back %v %v", reg, diags)
	}
	if d := setMetadataRegression(ctx, priv, nil); d.HasError() {
		t.Fatal(d)
	}
	if reg, _ = readMetadataRegression(ctx, priv); reg != nil {
		t.Fatalf("not cleared: %v", reg)
	}
	// Corrupt record: fail closed with an error.
	priv[privateMetadataRegression] = []byte("{not json")
	if _, diags = readMetadataRegression(ctx, priv); !diags.HasError() {
		t.Fatal("corrupt record read without error")
	}
	// nil private (e.g. import): nothing to read or write.
	if reg, diags = readMetadataRegression(ctx, nil); reg != nil || diags.HasError() {
		t.Fatal("nil getter")
	}
	if d := setMetadataRegression(ctx, nil, &metadataRegression{}); d.HasError() {
		t.Fatal("nil setter")
	}
}

func TestCheckMetadataRegression(t *testing.T) {
	reg := &metadataRegression{Seen: 7, Reported: 1}
	var diags diag.Diagnostics
	checkMetadataRegression(&diags, "redisstreamcoordinator_group", "orders", "billing", nil, types.Int64Null())
	if diags.HasError() {
		t.Fatal("no regression must pass")
	}
	checkMetadataRegression(&diags, "redisstreamcoordinator_group", "orders", "billing", reg, types.Int64Value(1))
	if diags.HasError() {
		t.Fatal("acknowledged regression must pass")
	}
	for _, ack := range []types.Int64{types.Int64Null(), types.Int64Unknown(), types.Int64Value(7), types.Int64Value(2)} {
		diags = nil
		checkMetadataRegression(&diags, "redisstreamcoordinator_group", "orders", "billing", reg, ack)
		if !diags.HasError() {
			t.Fatalf("ack %v: regression must fail closed", ack)
		}
		detail := diags[0].Detail()
		for _, want := range []string{"metadataVersion 7", "metadataVersion 1", `"billing"`, `"orders"`,
			"Stop admin mutations", "Restore", "recreate the group explicitly", "new lifecycle",
			"Never rebuild the metadata from clients' caches", "never force clients down", "never repair by bumping",
			"acknowledged_metadata_version = 1", "terraform state rm"} {
			if !strings.Contains(detail, want) {
				t.Errorf("ack %v: detail lacks %q:\n%s", ack, want, detail)
			}
		}
	}
}

func TestCheckPlanBasis(t *testing.T) {
	var diags diag.Diagnostics
	if !checkPlanBasis(&diags, "orders", "billing", 3, &client.Group{MetadataVersion: 3, ShardCount: 4}) || diags.HasError() {
		t.Fatal("same basis must pass")
	}
	if !checkPlanBasis(&diags, "orders", "billing", 3, nil) || diags.HasError() {
		t.Fatal("nil group must pass (nothing to compare)")
	}
	if checkPlanBasis(&diags, "orders", "billing", 3, &client.Group{MetadataVersion: 5, ShardCount: 8, State: "STABLE"}) {
		t.Fatal("higher version must stop")
	}
	if s := diags[0].Summary() + diags[0].Detail(); !strings.Contains(s, "Stale plan") || !strings.Contains(s, "metadataVersion 3") ||
		!strings.Contains(s, "metadataVersion 5") || !strings.Contains(s, "terraform plan") {
		t.Errorf("stale plan diagnostic: %s", s)
	}
	diags = nil
	if checkPlanBasis(&diags, "orders", "billing", 3, &client.Group{MetadataVersion: 1, ShardCount: 4}) {
		t.Fatal("lower version must stop")
	}
	if s := diags[0].Summary() + diags[0].Detail(); !strings.Contains(s, "regressed") || !strings.Contains(s, "acknowledged_metadata_version = 1") ||
		!strings.Contains(s, "Stop admin mutations") {
		t.Errorf("regression diagnostic: %s", s)
	}
}
