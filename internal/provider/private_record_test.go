package provider

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// The record is one key; a field's change keeps the others; a record with
// nothing left removes the key.
func TestPrivateRecordOneKey(t *testing.T) {
	ctx := context.Background()
	priv := fakePrivate{}
	if d := setPendingWait(ctx, priv, true); d.HasError() {
		t.Fatal(d)
	}
	if d := updatePrivateRecord(ctx, priv, func(r *privateRecord) {
		r.GroupSeen = &client.Group{StreamPrefix: "p", ConsumerGroup: "g", ShardCount: 4}
	}); d.HasError() {
		t.Fatal(d)
	}
	if keys := slices.Sorted(maps.Keys(priv)); !slices.Equal(keys, []string{privateRecordKey}) {
		t.Fatalf("keys %v, want only %q", keys, privateRecordKey)
	}
	if rec, _ := readPrivateRecord(ctx, priv); !rec.PendingWait {
		t.Error("setting group_seen lost pending_wait")
	}
	if rec, _ := readPrivateRecord(ctx, priv); rec.GroupSeen == nil || rec.GroupSeen.ShardCount != 4 {
		t.Errorf("group_seen read back %+v", rec.GroupSeen)
	}
	_ = setPendingWait(ctx, priv, false)
	_ = updatePrivateRecord(ctx, priv, func(r *privateRecord) { r.GroupSeen = nil })
	if len(priv) != 0 {
		t.Errorf("an empty record must remove the key, have %q", priv[privateRecordKey])
	}
}

// A private state written before the record (one key per fact) is read
// field by field in each key's format, and the first change saves it as
// the record and deletes every legacy key.
func TestPrivateRecordReadsLegacyKeys(t *testing.T) {
	ctx := context.Background()
	priv := fakePrivate{
		legacyMetadataRegression: []byte(`{"seen":7,"reported":1}`),
		legacyEpochsSeen:         []byte(`{"metadata_version":7,"group_epoch":3,"assignment_epoch":2}`),
		legacyImported:           []byte(`true`),
		legacyGroupVanished:      []byte(`{"shard_count":4,"metadata_version":9,"stream_prefix":"p","consumer_group":"g"}`),
		legacyGroupHighest:       []byte(`{"metadata_version":9,"shard_count":4}`),
		legacySiblingsSeen:       []byte(`{"v":2,"groups":{"g":{"count":4},"h":{"count":6,"empty":true}}}`),
		legacyGroupSeen:          []byte(`{"streamPrefix":"p","consumerGroup":"g","shardCount":4}`),
		legacyPendingWait:        []byte(`true`),
		legacyImportRead:         []byte(`"instance-1"`),
		legacyGroupRecreated:     []byte(`true`),
	}
	rec, diags := readPrivateRecord(ctx, priv)
	if diags.HasError() {
		t.Fatal(diags)
	}
	want := func(ok bool, what string) {
		t.Helper()
		if !ok {
			t.Errorf("legacy %s not read: %+v", what, rec)
		}
	}
	want(rec.MetadataRegression != nil && rec.MetadataRegression.Seen == 7, "metadata_regression")
	want(rec.EpochsSeen != nil && rec.EpochsSeen.GroupEpoch == 3, "epochs_seen")
	want(rec.ImportedNotRead, "imported_not_read")
	want(rec.GroupVanished != nil && rec.GroupVanished.MetadataVersion == 9, "group_vanished")
	want(rec.GroupHighest != nil && rec.GroupHighest.ShardCount == 4, "group_highest_seen")
	want(rec.PrefixSeen != nil && rec.PrefixSeen.Groups["h"].Empty && rec.PrefixSeen.Groups["g"].Count == 4, "siblings_seen")
	want(rec.GroupSeen != nil && rec.GroupSeen.ShardCount == 4, "group_seen")
	want(rec.PendingWait, "pending_wait")
	want(rec.ImportRead == "instance-1", "import_read")

	if d := setPendingWait(ctx, priv, false); d.HasError() {
		t.Fatal(d)
	}
	if keys := slices.Sorted(maps.Keys(priv)); !slices.Equal(keys, []string{privateRecordKey}) {
		t.Fatalf("after the first change keys are %v, want only %q", keys, privateRecordKey)
	}
	after, diags := readPrivateRecord(ctx, priv)
	if diags.HasError() {
		t.Fatal(diags)
	}
	rec.PendingWait = false
	if !reflect.DeepEqual(after, rec) {
		t.Errorf("the saved record lost a legacy fact:\n got %+v\nwant %+v", after, rec)
	}
}

// A record this build cannot read (corrupt, or a later build's version)
// fails closed: the metadata guard's baseline may be in it.
func TestPrivateRecordUnreadable(t *testing.T) {
	ctx := context.Background()
	for name, raw := range map[string]string{
		"not json":      `{not json`,
		"later version": `{"v":2,"metadata_regression":{"seen":7,"reported":1}}`,
		"wrong types":   `{"v":1,"pending_wait":"yes"}`,
	} {
		priv := fakePrivate{privateRecordKey: []byte(raw)}
		if _, diags := readMetadataRegression(ctx, priv); !diags.HasError() {
			t.Errorf("%s: read without error", name)
		} else if d := diags.Errors()[0].Detail(); !strings.Contains(d, "terraform apply -refresh-only") {
			t.Errorf("%s: the error names no way out: %s", name, d)
		}
		if d := setPendingWait(ctx, priv, true); !d.HasError() || string(priv[privateRecordKey]) != raw {
			t.Errorf("%s: a change overwrote the unreadable record: %q", name, priv[privateRecordKey])
		}
	}
}

// withPrivate is state with every instance's private state replaced by
// the framework's object of keys (each value as the provider stores it).
func withPrivate(t *testing.T, state []byte, keys map[string]string) []byte {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(state, &doc); err != nil {
		t.Fatal(err)
	}
	obj := map[string][]byte{}
	for k, v := range keys {
		obj[k] = []byte(v)
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	resources, _ := doc["resources"].([]any)
	for _, res := range resources {
		instances, _ := res.(map[string]any)["instances"].([]any)
		for _, in := range instances {
			in.(map[string]any)["private"] = base64.StdEncoding.EncodeToString(raw)
		}
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// withMetadataVersion is the store fixture with group {p, g}'s
// metadataVersion lowered to v: a restore from an older backup.
func withMetadataVersion(t *testing.T, store []byte, p, g string, v int64) []byte {
	return editStoreGroup(t, store, p, g, func(m map[string]any) { m["metadataVersion"] = v })
}

// A private state this build cannot read (a later build's record, after a
// downgrade; a corrupt one) fails closed where no refresh runs, and a
// refresh records it afresh with a warning, so the way out the error names
// works; the metadata guard still finds a regression, from the version in
// state.
func TestAccPrivateRecord_unreadable(t *testing.T) {
	t.Parallel()
	tfBin, providerDir := upgradeCLI(t)
	fx := readUpgradeFixture(t, upgradeFixtureDirs[len(upgradeFixtureDirs)-1])
	for name, keys := range map[string]map[string]string{
		"later_version":  {privateRecordKey: `{"v":2,"metadata_regression":{"seen":9,"reported":4}}`},
		"wrong_types":    {privateRecordKey: `{"v":1,"pending_wait":"yes"}`},
		"legacy_garbage": {legacyGroupVanished: `{"shard_count":"x"}`, legacyMetadataRegression: `"seen"`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := newUpgradeRun(t, tfBin, providerDir)
			r.restore(fx, fx.store, fx.workspace)
			r.write("terraform.tfstate", string(withPrivate(t, fx.state, keys)))

			code, out := r.run("plan", "-input=false", "-refresh=false")
			if code == 0 || !strings.Contains(out, "Cannot read the provider's private state") || !strings.Contains(out, "terraform apply -refresh-only") {
				t.Fatalf("plan -refresh=false exited %d; want it to fail closed, naming the refresh-only apply: %s", code, strings.Join(unexpectedDiagnostics(out), "; "))
			}
			code, out = r.run("apply", "-input=false", "-refresh-only", "-auto-approve")
			if code != 0 || !strings.Contains(out, "Warning: The provider's private state was recorded afresh") {
				t.Fatalf("apply -refresh-only exited %d; want 0 with the warning: %s", code, strings.Join(unexpectedDiagnostics(out), "; "))
			}
			r.mustRun("plan", "-input=false", "-detailed-exitcode")
			r.mustRun("plan", "-input=false", "-refresh=false", "-detailed-exitcode")
			if events := r.coord.AuditEvents(); len(events) != 0 {
				t.Errorf("%d audited mutation(s), want none: first is %s %s", len(events), events[0].Action, events[0].Path)
			}
		})
	}

	// The guard's record is gone with the unreadable state; the refresh
	// finds the regression again from the metadata_version in state.
	t.Run("guard_still_holds", func(t *testing.T) {
		t.Parallel()
		r := newUpgradeRun(t, tfBin, providerDir)
		r.restore(fx, withMetadataVersion(t, fx.store, "upgrade-orders", "billing", 2), fx.workspace)
		r.write("terraform.tfstate", string(withPrivate(t, fx.state, map[string]string{privateRecordKey: `{"v":2}`})))
		code, out := r.run("plan", "-input=false")
		if code == 0 || !strings.Contains(out, "Metadata of group upgrade-orders/billing regressed") {
			t.Fatalf("plan exited %d; want the metadata guard to fail it: %s", code, strings.Join(unexpectedDiagnostics(out), "; "))
		}
		if !strings.Contains(out, "Warning: The provider's private state was recorded afresh") {
			t.Errorf("the refresh did not say it recorded the private state afresh: %s", strings.Join(unexpectedDiagnostics(out), "; "))
		}
	})
}

// A state with the record and legacy keys was last written by an earlier
// build (after a downgrade): its keys are what it knew, absence included.
func TestPrivateRecordLegacyKeysWinOverTheRecord(t *testing.T) {
	ctx := context.Background()
	priv := fakePrivate{
		privateRecordKey:  []byte(`{"v":1,"pending_wait":true,"metadata_regression":{"seen":7,"reported":1}}`),
		legacyGroupSeen:   []byte(`{"streamPrefix":"p","consumerGroup":"g","shardCount":4}`),
		legacyPendingWait: nil,
	}
	rec, diags := readPrivateRecord(ctx, priv)
	if diags.HasError() {
		t.Fatal(diags)
	}
	if rec.PendingWait || rec.MetadataRegression != nil || rec.GroupSeen == nil {
		t.Errorf("want the earlier build's keys only (group_seen, no wait, no regression), got %+v", rec)
	}
}

// A refresh drops an unreadable record with a warning; a readable one, or
// none, is left as it is.
func TestDropUnreadablePrivate(t *testing.T) {
	ctx := context.Background()
	for name, tc := range map[string]struct {
		priv fakePrivate
		drop bool
	}{
		"none":           {fakePrivate{}, false},
		"readable":       {fakePrivate{privateRecordKey: []byte(`{"v":1,"pending_wait":true}`)}, false},
		"readable old":   {fakePrivate{legacyPendingWait: []byte(`true`)}, false},
		"later version":  {fakePrivate{privateRecordKey: []byte(`{"v":2}`)}, true},
		"garbage legacy": {fakePrivate{legacyEpochsSeen: []byte(`[]`), legacyPendingWait: []byte(`true`)}, true},
	} {
		before := maps.Clone(tc.priv)
		var diags diag.Diagnostics
		dropUnreadablePrivate(ctx, tc.priv, &diags)
		if tc.drop {
			if len(tc.priv) != 0 || diags.WarningsCount() != 1 || diags.HasError() {
				t.Errorf("%s: want every key dropped with one warning, have %v, %v", name, tc.priv, diags)
			}
		} else if !maps.EqualFunc(before, tc.priv, func(a, b []byte) bool { return string(a) == string(b) }) || len(diags) != 0 {
			t.Errorf("%s: changed %v → %v (%v)", name, before, tc.priv, diags)
		}
		if _, d := readPrivateRecord(ctx, tc.priv); d.HasError() {
			t.Errorf("%s: unreadable after the refresh's drop: %v", name, d)
		}
	}
}
