package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/hashicorp/terraform-plugin-framework/diag"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// What a resource keeps in Terraform's private state is one versioned JSON
// document under one key (privateRecordKey): privateRecord. Each field is
// one fact a refresh, a plan or an apply recorded for the next step; the
// accessors (readX / setX, beside the rule that owns the fact) read and
// change one field, so a field's meaning lives with its rule while its
// storage, its version and its upgrade live here.
//
// Builds before issue 30 kept each fact under a key of its own
// (legacyPrivateKeys). A private state that has any of them was written by
// such a build (this one deletes them whenever it saves the record), so it
// is read from them, each in its own format, and saved as the record at the
// first change: a workspace applied by an earlier build plans as it did
// (TestAccUpgradePrivateState). A state with both the record and legacy
// keys was last written by an earlier build (after a downgrade): its keys
// are what that build knew, so they are read and the record is not.
//
// An unreadable record (corrupt, a field of the wrong type, a version this
// build does not know: a later build's, after a downgrade) has one rule. A
// refresh drops it with a warning (dropUnreadablePrivate, the top of each
// Read) and records afresh: everything in the record is what a refresh
// records. What the guard loses is said in the warning: its baseline starts
// again from this refresh (a shard count keeps the highest metadataVersion
// in state too, so a regression below it is still found; a group keeps it
// only in the record). Failing every refresh instead would leave no way
// out but removing the resource from state, which loses the same baseline.
// Anywhere else (a plan without refresh, an apply, a destroy) it fails
// closed, with the way out: a refresh.

const (
	privateRecordKey     = "record"
	privateRecordVersion = 1
)

// privateRecord is the record, version privateRecordVersion. The group
// resource uses the metadata guard's fields and its own; the shard count
// resource likewise.
type privateRecord struct {
	V int `json:"v"`

	// The metadata guard (both resources, metadata_guard*.go): a regression
	// Read recorded, and the highest epochs seen at the highest version.
	MetadataRegression *metadataRegression `json:"metadata_regression,omitempty"`
	EpochsSeen         *epochMark          `json:"epochs_seen,omitempty"`

	// redisstreamcoordinator_group (group_import.go, group_plan.go): an
	// import not read yet, a group that vanished (404 on refresh), and what
	// the last refresh saw of the group.
	ImportedNotRead bool           `json:"imported_not_read,omitempty"`
	GroupVanished   *groupVanished `json:"group_vanished,omitempty"`
	GroupHighest    *groupHighest  `json:"group_highest_seen,omitempty"`

	// redisstreamcoordinator_group_shard_count: the prefix and the group as
	// the last refresh (or apply) read them, the basis of the next plan
	// (group_shard_count_under_way.go, group_shard_count_preview.go); an
	// unfinished wait (group_shard_count_resource.go); the provider instance
	// whose import refresh wrote this state (group_shard_count_import.go).
	PrefixSeen  *prefixSeen   `json:"prefix_seen,omitempty"`
	GroupSeen   *client.Group `json:"group_seen,omitempty"`
	PendingWait bool          `json:"pending_wait,omitempty"`
	ImportRead  string        `json:"import_read,omitempty"`
}

// prefixSeen is every group of the prefix as a refresh listed it.
type prefixSeen struct {
	Groups map[string]prefixSeenGroup `json:"groups"`
	// Prefix names the prefix when the record is a group create's basis
	// (the siblings its plan saw): the delete half of a replacement checks
	// it, and a rename may move the group to another prefix.
	Prefix string `json:"prefix,omitempty"`
	// CountsOnly: read from a version-1 siblings_seen key, which held
	// counts and no migrations (prefix.Record.CountsOnly); kept until a
	// refresh records the prefix afresh.
	CountsOnly bool `json:"counts_only,omitempty"`
}

type prefixSeenGroup struct {
	Count     int32             `json:"count"`
	Empty     bool              `json:"empty,omitempty"`
	Migration *client.Migration `json:"migration,omitempty"`
}

// The keys of builds before the record, each with its own format.
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

// A legacy key whose fact the run's own memory now holds
// (legacyGroupRecreated) is dropped with the others, and not read.
var legacyPrivateKeys = []string{
	legacyMetadataRegression, legacyEpochsSeen, legacyImported, legacyGroupVanished, legacyGroupHighest,
	legacySiblingsSeen, legacyGroupSeen, legacyPendingWait, legacyImportRead, legacyGroupRecreated,
}

// privateSetter is the framework's private state as a response offers it
// (Read, ModifyPlan, Create, Update): it holds the request's private state,
// which a change of one field of the record keeps.
type privateSetter interface {
	privateGetter
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
}

type privateGetter interface {
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
}

// readPrivateRecord returns the record in private (the zero record when
// there is none, or private is nil). An unreadable one is an error (the
// rule above): only a refresh goes on, after dropUnreadablePrivate.
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

// dropUnreadablePrivate is the top of each Read: an unreadable record is
// removed, with a warning, and the refresh records afresh.
func dropUnreadablePrivate(ctx context.Context, private privateSetter, diags *diag.Diagnostics) {
	if private == nil {
		return
	}
	_, why, d := decodePrivateRecord(ctx, private)
	diags.Append(d...)
	if why == "" {
		return
	}
	for _, k := range append([]string{privateRecordKey}, legacyPrivateKeys...) {
		diags.Append(private.SetKey(ctx, k, nil)...)
	}
	diags.AddWarning("The provider's private state was recorded afresh", fmt.Sprintf(
		"The provider's private state of this resource could not be read (%s), so this refresh dropped it and recorded the resource "+
			"afresh. The metadata guard's baseline starts again from what this refresh read: a redisstreamcoordinator_group_shard_count "+
			"still compares the coordinator's metadataVersion with the highest one in its state, but a regression of the group "+
			"since the last refresh that could read the record is not reported. If the coordinator's metadata may have been "+
			"restored meanwhile, check the group (its metadataVersion and members) before applying. Another build of the "+
			"provider may have written the record; after a downgrade this is expected once.", why))
}

// decodePrivateRecord returns the record and, when it cannot be read, why.
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

// updatePrivateRecord changes the record in private by change, and saves it
// (a record with nothing in it removes the key). The legacy keys go with
// the first save.
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
	for _, k := range legacyPrivateKeys {
		if b, _ := private.GetKey(ctx, k); len(b) > 0 {
			diags.Append(private.SetKey(ctx, k, nil)...)
		}
	}
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

// readLegacyPrivate reads the keys of builds before the record, each in
// the format that build wrote; found says whether there was any, why what
// could not be read (the unreadable record's rule).
func readLegacyPrivate(ctx context.Context, private privateGetter) (privateRecord, bool, string, diag.Diagnostics) {
	rec := privateRecord{V: privateRecordVersion}
	var diags diag.Diagnostics
	found := false
	why := ""
	bad := func(k string, b []byte, err error) {
		if why == "" {
			why = fmt.Sprintf("key %q holds %q: %v", k, b, err)
		}
	}
	get := func(k string) []byte {
		b, d := private.GetKey(ctx, k)
		diags.Append(d...)
		if len(b) > 0 {
			found = true
		}
		return b
	}
	if b := get(legacyMetadataRegression); len(b) > 0 {
		var reg metadataRegression
		if err := json.Unmarshal(b, &reg); err != nil {
			bad(legacyMetadataRegression, b, err)
		} else {
			rec.MetadataRegression = &reg
		}
	}
	if b := get(legacyEpochsSeen); len(b) > 0 {
		var m epochMark
		if err := json.Unmarshal(b, &m); err != nil {
			bad(legacyEpochsSeen, b, err)
		} else {
			rec.EpochsSeen = &m
		}
	}
	rec.ImportedNotRead = len(get(legacyImported)) > 0
	if b := get(legacyGroupVanished); len(b) > 0 {
		var v groupVanished
		if err := json.Unmarshal(b, &v); err != nil {
			bad(legacyGroupVanished, b, err)
		} else {
			rec.GroupVanished = &v
		}
	}
	if b := get(legacyGroupHighest); len(b) > 0 {
		var h groupHighest
		if err := json.Unmarshal(b, &h); err != nil {
			bad(legacyGroupHighest, b, err)
		} else {
			rec.GroupHighest = &h
		}
	}
	if b := get(legacySiblingsSeen); len(b) > 0 {
		if rec.PrefixSeen = legacySiblingsSeenRecord(b); rec.PrefixSeen == nil {
			bad(legacySiblingsSeen, b, fmt.Errorf("neither version 1 nor 2"))
		}
	}
	if b := get(legacyGroupSeen); len(b) > 0 {
		var g client.Group
		if err := json.Unmarshal(b, &g); err != nil {
			bad(legacyGroupSeen, b, err)
		} else {
			rec.GroupSeen = &g
		}
	}
	rec.PendingWait = string(get(legacyPendingWait)) == "true"
	if b := get(legacyImportRead); len(b) > 0 {
		if s, err := strconv.Unquote(string(b)); err != nil {
			bad(legacyImportRead, b, err)
		} else {
			rec.ImportRead = s
		}
	}
	if why != "" {
		rec = privateRecord{V: privateRecordVersion}
	}
	return rec, found, why, diags
}

// legacySiblingsSeenRecord reads the legacy siblings_seen key: version 2,
// {"v":2,"groups":{…}}, or version 1, a bare map of counts (no migrations,
// liveness unknown: taken as live). A version-1 map may have a group named
// "v" (or "groups"), so both keys and their types decide.
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
