package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
)

// A resource's private state is one versioned JSON document (privateRecord).
// Earlier builds' per-fact keys (legacyPrivateKeys) are read and replaced at
// the first save; when both exist an earlier build wrote last, so the keys win.
// An unreadable record is dropped with a warning by a refresh (failing every
// refresh would leave only state rm) and fails closed anywhere else.

const (
	privateRecordKey     = "record"
	privateRecordVersion = 1
)

type privateRecord struct {
	V int `json:"v"`

	// MetadataRegression: a refresh read a metadataVersion below the one
	// recorded (a restored coordinator store); the plan fails closed until
	// the configuration acknowledges it. Both resources.
	MetadataRegression *metadataRegression `json:"metadata_regression,omitempty"`
	// EpochsSeen: the epochs seen at the highest version, since a version
	// unchanged with lower epochs is a regression too. Both resources.
	EpochsSeen *epochMark `json:"epochs_seen,omitempty"`

	// ImportedNotRead: an import whose first Read has not run; a Read that
	// then finds no group removes the resource instead of planning a create.
	ImportedNotRead bool `json:"imported_not_read,omitempty"`
	// GroupVanished: the coordinator answered 404 for the group on refresh;
	// the plan re-creates it (-/+) as a new lifecycle.
	GroupVanished *groupVanished `json:"group_vanished,omitempty"`
	// GroupHighest: the group as the last refresh saw it, since shard_count
	// is not raised by scales; the basis a replacement deletes from.
	GroupHighest *groupHighest `json:"group_highest_seen,omitempty"`

	// PrefixSeen: every group of the prefix as the refresh listed it, since
	// Terraform's re-plan during apply reads nothing and must agree.
	PrefixSeen *prefixSeen `json:"prefix_seen,omitempty"`
	// GroupSeen: the group as the last refresh or apply read it, the basis a
	// saved plan is checked against.
	GroupSeen *client.Group `json:"group_seen,omitempty"`
	// PendingWait: the next apply waits for the migrations in state and
	// sends no scale (an apply's unfinished wait, or a planned wait).
	PendingWait bool `json:"pending_wait,omitempty"`
	// ImportRead: the provider instance whose import refresh wrote this
	// state; only its own plan is the import's, which changes nothing.
	ImportRead string `json:"import_read,omitempty"`
}

type prefixSeen struct {
	Groups map[string]prefixSeenGroup `json:"groups"`
	// Prefix is set when the record is a group create's basis.
	Prefix string `json:"prefix,omitempty"`
	// CountsOnly: read from a version-1 siblings_seen key, which held no migrations.
	CountsOnly bool `json:"counts_only,omitempty"`
}

type prefixSeenGroup struct {
	Count     int32             `json:"count"`
	Empty     bool              `json:"empty,omitempty"`
	Migration *client.Migration `json:"migration,omitempty"`
}

const (
	legacyMetadataRegression = "metadata_regression"
	legacyEpochsSeen         = "epochs_seen"
	legacyImported           = "imported_not_read"
	legacyGroupVanished      = "group_vanished"
	legacyGroupHighest       = "group_highest_seen"
	legacySiblingsSeen       = "siblings_seen"
	legacyGroupSeen          = "group_seen"
	legacyPendingWait        = "pending_wait"
	legacyImportRead         = "import_read"
	legacyGroupRecreated     = "group_recreated"
)

var legacyPrivateKeys = []string{
	legacyMetadataRegression, legacyEpochsSeen, legacyImported, legacyGroupVanished, legacyGroupHighest,
	legacySiblingsSeen, legacyGroupSeen, legacyPendingWait, legacyImportRead, legacyGroupRecreated,
}

type privateSetter interface {
	privateGetter
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
}

type privateGetter interface {
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
}

func readPrivateRecord(ctx context.Context, private privateGetter) (privateRecord, diag.Diagnostics) {
	rec, why, diags := decodePrivateRecord(ctx, private)
	if why != "" {
		diags.AddError("Cannot read the provider's private state", fmt.Sprintf(
			"The provider's private state of this resource cannot be read: %s. It holds what the last refresh recorded for the next "+
				"plan, the metadata guard's baseline among it, so the provider stops rather than go on without it. A refresh "+
				"records it afresh: run `terraform apply -refresh-only` (or a plan or apply without -refresh=false), then plan "+
				"again. If another build of the provider wrote it, that build reads it too.", why))
	}
	return rec, diags
}

func dropUnreadablePrivate(ctx context.Context, private privateSetter, diags *diag.Diagnostics) {
	_, why, d := decodePrivateRecord(ctx, private) // nil: nothing to read
	diags.Append(d...)
	if why == "" {
		return
	}
	diags.Append(clearPrivateKeys(ctx, private, privateRecordKey)...)
	diags.AddWarning("The provider's private state was recorded afresh", fmt.Sprintf(
		"The provider's private state of this resource could not be read (%s), so this refresh dropped it and recorded the resource "+
			"afresh. The metadata guard's baseline starts again from what this refresh read: a redisstreamcoordinator_group_shard_count "+
			"still compares the coordinator's metadataVersion with the highest one in its state, but a regression of the group "+
			"since the last refresh that could read the record is not reported. If the coordinator's metadata may have been "+
			"restored meanwhile, check the group (its metadataVersion and members) before applying. Another build of the "+
			"provider may have written the record; after a downgrade this is expected once.", why))
}

// clearPrivateKeys removes every legacy key, and extra: deleting an absent key is a no-op.
func clearPrivateKeys(ctx context.Context, private privateSetter, extra ...string) diag.Diagnostics {
	var diags diag.Diagnostics
	for _, k := range append(extra, legacyPrivateKeys...) {
		diags.Append(private.SetKey(ctx, k, nil)...)
	}
	return diags
}

func decodePrivateRecord(ctx context.Context, private privateGetter) (privateRecord, string, diag.Diagnostics) {
	rec := privateRecord{V: privateRecordVersion}
	if private == nil {
		return rec, "", nil
	}
	legacy, found, why, diags := readLegacyPrivate(ctx, private)
	if found || why != "" || diags.HasError() {
		return legacy, why, diags
	}
	b, d := private.GetKey(ctx, privateRecordKey)
	diags.Append(d...)
	if len(b) == 0 || diags.HasError() {
		return rec, "", diags
	}
	var version struct {
		V int `json:"v"`
	}
	if err := json.Unmarshal(b, &version); err != nil {
		return rec, fmt.Sprintf("key %q is not JSON: %v", privateRecordKey, err), diags
	}
	if version.V != privateRecordVersion {
		return rec, fmt.Sprintf("key %q has version %d, this build reads version %d", privateRecordKey, version.V, privateRecordVersion), diags
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		return privateRecord{V: privateRecordVersion}, fmt.Sprintf("key %q is not this build's record: %v", privateRecordKey, err), diags
	}
	return rec, "", diags
}

// updatePrivateRecord removes the key when the record is empty.
func updatePrivateRecord(ctx context.Context, private privateSetter, change func(*privateRecord)) diag.Diagnostics {
	if private == nil {
		return nil
	}
	rec, diags := readPrivateRecord(ctx, private)
	if diags.HasError() {
		return diags // fails closed: only a refresh drops it (dropUnreadablePrivate)
	}
	change(&rec)
	rec.V = privateRecordVersion
	diags.Append(clearPrivateKeys(ctx, private)...)
	if rec == (privateRecord{V: privateRecordVersion}) {
		return append(diags, private.SetKey(ctx, privateRecordKey, nil)...)
	}
	b, err := json.Marshal(rec)
	if err != nil {
		diags.AddError("Cannot record the provider's private state", err.Error())
		return diags
	}
	return append(diags, private.SetKey(ctx, privateRecordKey, b)...)
}

// jsonInto sets *dst only when b decodes.
func jsonInto[T any](dst **T) func([]byte) error {
	return func(b []byte) error {
		var v T
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*dst = &v
		return nil
	}
}

func readLegacyPrivate(ctx context.Context, private privateGetter) (privateRecord, bool, string, diag.Diagnostics) {
	rec := privateRecord{V: privateRecordVersion}
	var diags diag.Diagnostics
	found, why := false, ""
	get := func(k string) []byte {
		b, d := private.GetKey(ctx, k)
		diags.Append(d...)
		found = found || len(b) > 0
		return b
	}
	decode := func(k string, parse func([]byte) error) {
		if b := get(k); len(b) > 0 {
			if err := parse(b); err != nil && why == "" {
				why = fmt.Sprintf("key %q holds %q: %v", k, b, err)
			}
		}
	}
	decode(legacyMetadataRegression, jsonInto(&rec.MetadataRegression))
	decode(legacyEpochsSeen, jsonInto(&rec.EpochsSeen))
	rec.ImportedNotRead = len(get(legacyImported)) > 0
	decode(legacyGroupVanished, jsonInto(&rec.GroupVanished))
	decode(legacyGroupHighest, jsonInto(&rec.GroupHighest))
	decode(legacySiblingsSeen, func(b []byte) error {
		if rec.PrefixSeen = legacySiblingsSeenRecord(b); rec.PrefixSeen == nil {
			return fmt.Errorf("neither version 1 nor 2")
		}
		return nil
	})
	decode(legacyGroupSeen, jsonInto(&rec.GroupSeen))
	rec.PendingWait = string(get(legacyPendingWait)) == "true"
	decode(legacyImportRead, func(b []byte) (err error) {
		rec.ImportRead, err = strconv.Unquote(string(b))
		return err
	})
	if why != "" {
		rec = privateRecord{V: privateRecordVersion}
	}
	return rec, found, why, diags
}

// A version-1 map may have a group named "v" or "groups", so the types decide.
func legacySiblingsSeenRecord(b []byte) *prefixSeen {
	if len(b) == 0 {
		return nil
	}
	var v2 struct {
		V      int                        `json:"v"`
		Groups map[string]prefixSeenGroup `json:"groups"`
	}
	var keys map[string]json.RawMessage
	_ = json.Unmarshal(b, &keys)
	if len(keys) == 2 && keys["groups"] != nil && json.Unmarshal(b, &v2) == nil && v2.V == 2 && v2.Groups != nil {
		return &prefixSeen{Groups: v2.Groups}
	}
	var counts map[string]int32
	if json.Unmarshal(b, &counts) != nil {
		return nil
	}
	seen := &prefixSeen{Groups: map[string]prefixSeenGroup{}, CountsOnly: true}
	for name, c := range counts {
		seen.Groups[name] = prefixSeenGroup{Count: c}
	}
	return seen
}

func readPrefixSeen(ctx context.Context, private privateGetter, p string) (prefix.Record, bool, diag.Diagnostics) {
	rec, diags := readPrivateRecord(ctx, private)
	out, ok := rec.prefix(p)
	return out, ok && !diags.HasError(), diags
}

// prefix is the record of stream prefix p as the refresh read it, if it did.
func (rec privateRecord) prefix(p string) (prefix.Record, bool) {
	if rec.PrefixSeen == nil {
		return prefix.Record{}, false
	}
	var all []client.Group
	for name, g := range rec.PrefixSeen.Groups {
		state := client.GroupStable
		if g.Empty {
			state = client.GroupEmpty
		}
		all = append(all, client.Group{StreamPrefix: p, ConsumerGroup: name, ShardCount: g.Count, State: state, ActiveMigration: g.Migration})
	}
	out := prefix.FromListing(all, p)
	out.CountsOnly = rec.PrefixSeen.CountsOnly
	return out, true
}
