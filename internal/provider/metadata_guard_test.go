package provider

import (
	"context"
	"regexp"
	"strconv"
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
	setMetadataRegression := func(ctx context.Context, private privateSetter, reg *metadataRegression) diag.Diagnostics {
		return updatePrivateRecord(ctx, private, func(r *privateRecord) { r.MetadataRegression = reg })
	}
	reg, diags := readMetadataRegression(ctx, priv)
	if reg != nil || diags.HasError() {
		t.Fatalf("empty private state: got %v %v", reg, diags)
	}
	if d := setMetadataRegression(ctx, priv, &metadataRegression{Seen: 7, Reported: 1}); d.HasError() {
		t.Fatal(d)
	}
	if got := string(priv[privateRecordKey]); got != `{"v":1,"metadata_regression":{"seen":7,"reported":1}}` {
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
	// Corrupt record, legacy or not: fail closed with an error.
	priv[legacyMetadataRegression] = []byte("{not json")
	if _, diags = readMetadataRegression(ctx, priv); !diags.HasError() {
		t.Fatal("corrupt legacy record read without error")
	}
	delete(priv, legacyMetadataRegression)
	priv[privateRecordKey] = []byte(`{"v":1,"metadata_regression":"seen"}`)
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

// TestAddBasisRegression: the apply-time regression error. At apply time
// the value to acknowledge is not yet known to be one the next plan accepts
// (churn moves it on, the record is saved later): the error points to the
// next plan's error, which names one that works.
func TestAddBasisRegression(t *testing.T) {
	var diags diag.Diagnostics
	addBasisRegression(&diags, "orders", "billing", 3, &client.Group{MetadataVersion: 1, ShardCount: 4})
	if len(diags) != 1 || !diags.HasError() {
		t.Fatalf("want one error, got %v", diags)
	}
	if s := diags[0].Summary() + diags[0].Detail(); !strings.Contains(s, "regressed") || !strings.Contains(s, "acknowledged_metadata_version value that works") ||
		strings.Contains(s, "acknowledged_metadata_version = 1") ||
		!strings.Contains(s, "Stop admin mutations") {
		t.Errorf("regression diagnostic: %s", s)
	}
}

func TestObserveEpochs(t *testing.T) {
	grp := func(v, ge, ae int64) *client.Group {
		return &client.Group{MetadataVersion: v, GroupEpoch: ge, AssignmentEpoch: ae}
	}
	mark := func(v, ge, ae int64) *epochMark {
		return &epochMark{MetadataVersion: v, GroupEpoch: ge, AssignmentEpoch: ae}
	}
	cases := []struct {
		name      string
		prev      *epochMark
		now       *client.Group
		next      epochMark
		regressed bool
	}{
		{"first read", nil, grp(1, 1, 1), *mark(1, 1, 1), false},
		{"higher epochs at the same version are kept (no conformant server sends them, but they are no regression)", mark(1, 1, 1), grp(1, 3, 4), *mark(1, 3, 4), false},
		{"a higher version is a new baseline, whatever its epochs", mark(1, 5, 5), grp(2, 2, 2), *mark(2, 2, 2), false},
		{"a lower version is the version rule's", mark(3, 5, 5), grp(1, 1, 1), *mark(3, 5, 5), false},
		{"groupEpoch back at the same version", mark(1, 3, 4), grp(1, 1, 4), *mark(1, 3, 4), true},
		{"assignmentEpoch back at the same version", mark(1, 3, 4), grp(1, 3, 2), *mark(1, 3, 4), true},
	}
	for _, c := range cases {
		next, reg := observeEpochs(c.prev, c.now)
		if next != c.next || (reg != nil) != c.regressed {
			t.Errorf("%s: got %+v %+v, want %+v regressed=%v", c.name, next, reg, c.next, c.regressed)
		}
		if reg != nil && (reg.Seen != c.now.MetadataVersion || reg.Reported != c.now.MetadataVersion || reg.Epochs == nil ||
			reg.Epochs.ReportedGroupEpoch != c.now.GroupEpoch || reg.Epochs.SeenGroupEpoch != c.prev.GroupEpoch) {
			t.Errorf("%s: regression %+v %+v", c.name, reg, reg.Epochs)
		}
	}
	// The way out: the acknowledged regression's reported epochs are the new baseline.
	_, reg := observeEpochs(mark(1, 3, 4), grp(1, 1, 1))
	if got := acknowledgedMark(reg); got == nil || *got != *mark(1, 1, 1) {
		t.Errorf("acknowledgedMark = %+v", got)
	}
	if got := acknowledgedMark(&metadataRegression{Seen: 5, Reported: 1}); got != nil {
		t.Errorf("a version regression leaves the epochs to the next refresh, got %+v", got)
	}
}

func TestEpochRegressionMessage(t *testing.T) {
	var diags diag.Diagnostics
	reg := &metadataRegression{Seen: 4, Reported: 4, Epochs: &epochRegression{SeenGroupEpoch: 7, ReportedGroupEpoch: 3, SeenAssignmentEpoch: 9, ReportedAssignmentEpoch: 5}}
	checkMetadataRegression(&diags, "redisstreamcoordinator_group", "orders", "svc", reg, types.Int64Null())
	if !diags.HasError() {
		t.Fatal("an epoch regression must fail closed")
	}
	detail := diags[0].Detail()
	for _, want := range []string{"groupEpoch 7 → 3", "assignmentEpoch 9 → 5", "metadataVersion 4", "Runbook", "acknowledged_metadata_version = 4", "terraform state rm"} {
		if !strings.Contains(detail, want) {
			t.Errorf("message lacks %q:\n%s", want, detail)
		}
	}
	diags = nil
	checkMetadataRegression(&diags, "redisstreamcoordinator_group", "orders", "svc", reg, types.Int64Value(4))
	if diags.HasError() {
		t.Error("acknowledging the reported version is the way out")
	}
}

// TestAcknowledgingARegression: the record a refresh keeps, and which
// acknowledgements accept it (metadata_guard_ack.go).
func TestAcknowledgingARegression(t *testing.T) {
	null := types.Int64Null()
	if reg := nextRegression(nil, 7, 9, null); reg != nil {
		t.Fatalf("a higher version is no regression: %+v", reg)
	}
	reg := nextRegression(nil, 7, 2, types.Int64Value(1))
	if reg == nil || reg.Seen != 7 || reg.Reported != 2 || reg.latest() != 2 || reg.StaleAck == nil || *reg.StaleAck != 1 {
		t.Fatalf("first record = %+v", reg)
	}
	// Churn after the restore: a saved record keeps the first reported
	// version and follows the latest, even above the old high-water mark.
	next := nextRegression(reg, 7, 11, null)
	if next.Reported != 2 || next.latest() != 11 || next.Seen != 7 {
		t.Fatalf("after churn = %+v", next)
	}
	// Lower again than the latest: a new regression starts over.
	again := nextRegression(next, 11, 3, null)
	if again.Reported != 3 || again.Seen != 11 {
		t.Fatalf("a second regression = %+v", again)
	}
	for _, tc := range []struct {
		ack  types.Int64
		want bool
	}{
		{null, false}, {types.Int64Unknown(), false},
		{types.Int64Value(2), true},  // the value from the error
		{types.Int64Value(0), false}, // from before this regression
		{types.Int64Value(11), true}, // the latest reported
		{types.Int64Value(12), false},
		{types.Int64Value(1), false}, // applied for an earlier regression
	} {
		if got := next.acknowledges(tc.ack); got != tc.want {
			t.Errorf("acknowledges(%v) = %v, want %v", tc.ack, got, tc.want)
		}
	}
}

// TestAcknowledgingARegression_unappliedAckForAnEarlierOneIsStale: an
// acknowledgement written for regression #1 (recorded by `apply
// -refresh-only`, churn since) and not applied yet does not accept regression
// #2 (the same backup restored again before the apply).
func TestAcknowledgingARegression_unappliedAckForAnEarlierOneIsStale(t *testing.T) {
	first := nextRegression(nil, 20, 7, types.Int64Null())
	first = nextRegression(first, 7, 12, types.Int64Null())
	second := nextRegression(first, 12, 7, types.Int64Null())
	if second == first || second.Reported != 7 {
		t.Fatalf("want a new regression recorded: %+v", second)
	}
	for _, a := range []int64{7, 12} {
		if second.acknowledges(types.Int64Value(a)) {
			t.Errorf("acknowledged_metadata_version = %d, written for regression #1, accepts regression #2: %+v", a, second)
		}
	}
	var diags diag.Diagnostics
	checkMetadataRegression(&diags, "redisstreamcoordinator_group", "p", "g", second, types.Int64Value(7))
	if !diags.HasError() || !strings.Contains(diags[0].Detail(), "written for an earlier regression (metadataVersion 7 to 12)") {
		t.Fatalf("want the plan to fail and say why the value is stale: %v", diags)
	}
	// Churn after the second restore: the new versions acknowledge it.
	third := nextRegression(second, 12, 13, types.Int64Null())
	if !third.acknowledges(types.Int64Value(13)) || third.acknowledges(types.Int64Value(12)) {
		t.Fatalf("after churn past regression #1's range: %+v", third)
	}
}

// TestAcknowledgingARegression_wayOutIsAccepted: the way out the error
// names always works: a value acknowledges accepts, or state rm and import
// when none exists (ack 7 applied for regression #1, the same backup restored
// again, nothing reported since but 7).
func TestAcknowledgingARegression_wayOutIsAccepted(t *testing.T) {
	for name, reg := range map[string]*metadataRegression{
		"applied ack is the only version": nextRegression(nil, 30, 7, types.Int64Value(7)),
		"churn since":                     nextRegression(nextRegression(nil, 30, 7, types.Int64Value(7)), 30, 9, types.Int64Null()),
		"stale range covers all": nextRegression(nextRegression(nextRegression(nil, 20, 7, types.Int64Null()), 7, 12, types.Int64Null()),
			12, 7, types.Int64Null()),
		"fresh": nextRegression(nil, 30, 7, types.Int64Null()),
	} {
		t.Run(name, func(t *testing.T) {
			var diags diag.Diagnostics
			checkMetadataRegression(&diags, "redisstreamcoordinator_group", "p", "g", reg, types.Int64Null())
			detail := diags[0].Detail()
			m := regexp.MustCompile(`set acknowledged_metadata_version = (\d+)`).FindStringSubmatch(detail)
			if m == nil {
				if !strings.Contains(detail, "No acknowledged_metadata_version can acknowledge") || !strings.Contains(detail, "terraform state rm") {
					t.Fatalf("no way out named:\n%s", detail)
				}
				if _, ok := reg.acceptableAck(); ok {
					t.Fatalf("state rm named although a value is accepted:\n%s", detail)
				}
				return
			}
			a, _ := strconv.ParseInt(m[1], 10, 64)
			var after diag.Diagnostics
			checkMetadataRegression(&after, "redisstreamcoordinator_group", "p", "g", reg, types.Int64Value(a))
			if after.HasError() {
				t.Fatalf("the value the error tells the user to set (%d) is refused:\n%s", a, after[0].Detail())
			}
		})
	}
}
