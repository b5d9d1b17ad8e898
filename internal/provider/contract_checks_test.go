package provider

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-testing/knownvalue"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// Checks of values the contract only orders, never numbers. CONTRACT §4.2
// fixes a new group's epochs and metadataVersion at 1, but a scale or a
// rollback only "bumps" metadataVersion and groupEpoch (§4.6): by how much,
// and whether anything else (a member joining) bumps them, is the
// coordinator's business. An independent coordinator reported a
// metadata_version of 4 where the in-repo one reports 2. So tests compare
// with values read from the coordinator itself through the client.

func readGroup(ctx context.Context, env *acctest.Env, p, g string) (*client.Group, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return env.Client().GetGroup(ctx, p, g)
}

func metadataVersionOf(grp *client.Group) int64 { return grp.MetadataVersion }
func groupEpochOf(grp *client.Group) int64      { return grp.GroupEpoch }

// groupValueNow reads one of the group's counters through the client.
func groupValueNow(t *testing.T, env *acctest.Env, p, g string, field func(*client.Group) int64) int64 {
	t.Helper()
	grp, err := readGroup(context.Background(), env, p, g)
	if err != nil {
		t.Fatalf("reading %s/%s: %v", p, g, err)
	}
	return field(grp)
}

// groupValueSince checks a counter the provider read during a step: not below
// *before (read from the coordinator before the step, in PreConfig), strictly
// above it when the step made a change that bumps it, and not above what the
// coordinator reports now (these counters never go back).
func groupValueSince(env *acctest.Env, p, g, name string, field func(*client.Group) int64, before *int64, bumped bool) knownvalue.Check {
	return knownvalue.Int64Func(func(v int64) error {
		if v < *before || bumped && v == *before {
			return fmt.Errorf("%s %d: want it %s %d, the coordinator's value before the step", name, v,
				map[bool]string{true: "above", false: "at least"}[bumped], *before)
		}
		grp, err := readGroup(context.Background(), env, p, g)
		if err != nil {
			return fmt.Errorf("reading %s/%s to compare %s: %w", p, g, name, err)
		}
		if now := field(grp); v > now {
			return fmt.Errorf("%s %d is above the coordinator's current %d", name, v, now)
		}
		return nil
	})
}
