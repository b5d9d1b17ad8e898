package provider

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

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
	if d := setGroupSeen(ctx, priv, &client.Group{StreamPrefix: "p", ConsumerGroup: "g", ShardCount: 4}); d.HasError() {
		t.Fatal(d)
	}
	if keys := slices.Sorted(maps.Keys(priv)); !slices.Equal(keys, []string{privateRecordKey}) {
		t.Fatalf("keys %v, want only %q", keys, privateRecordKey)
	}
	if pending, _ := readPendingWait(ctx, priv); !pending {
		t.Error("setting group_seen lost pending_wait")
	}
	if g, _ := readGroupSeen(ctx, priv); g == nil || g.ShardCount != 4 {
		t.Errorf("group_seen read back %+v", g)
	}
	_ = setPendingWait(ctx, priv, false)
	_ = setGroupSeen(ctx, priv, nil)
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
	want(rec.GroupRecreated, "group_recreated")

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
		} else if d := diags.Errors()[0].Detail(); !strings.Contains(d, "terraform state rm") {
			t.Errorf("%s: the error names no way out: %s", name, d)
		}
		if d := setPendingWait(ctx, priv, true); !d.HasError() || string(priv[privateRecordKey]) != raw {
			t.Errorf("%s: a change overwrote the unreadable record: %q", name, priv[privateRecordKey])
		}
	}
}
