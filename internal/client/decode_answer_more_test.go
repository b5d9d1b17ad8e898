package client

import (
	"context"
	"errors"
	"net/http"
	"testing"
)

// TestMigrationAndRoutingAnswersAreChecked: a 2xx of a scale, a rollback, a
// migration read or a routing read that is null, lacks a required field, or
// is about another object is refused, naming what came back; a mutation's
// such answer is ambiguous (applied, most likely), so the caller reads back
// instead of trusting it, and nothing is re-sent.
func TestMigrationAndRoutingAnswersAreChecked(t *testing.T) {
	routing := map[string]any{"streamPrefix": "orders", "consumerGroup": "billing", "metadataVersion": 3, "shardCount": 0,
		"streamKeyPattern": "orders:{shardIndex}", "shards": []any{}}
	migration := map[string]any{"reshardingId": "reshard-1", "fromShardCount": 4, "toShardCount": 8, "state": "ACTIVE"}
	scale := map[string]any{"streamPrefix": "orders", "targetShardCount": 8, "affectedConsumerGroups": []any{"billing"},
		"migrations": []any{migration}}
	with := func(m map[string]any, k string, v any) map[string]any {
		out := map[string]any{}
		for kk, vv := range m {
			out[kk] = vv
		}
		if v == nil {
			delete(out, k)
		} else {
			out[k] = v
		}
		return out
	}
	calls := map[string]struct {
		call     func(context.Context, *Client) error
		good     any
		mutation bool
	}{
		"scale-group": {func(ctx context.Context, c *Client) error {
			_, err := c.ScaleGroup(ctx, "orders", "billing", 8, Mutation{})
			return err
		},
			migration, true},
		"rollback": {func(ctx context.Context, c *Client) error {
			_, err := c.RollbackMigration(ctx, "orders", "billing", "reshard-1", Mutation{})
			return err
		}, migration, true},
		"get-migration": {func(ctx context.Context, c *Client) error {
			_, err := c.GetMigration(ctx, "orders", "billing", "reshard-1")
			return err
		}, migration, false},
		"scale-stream": {func(ctx context.Context, c *Client) error {
			_, err := c.ScaleStream(ctx, "orders", 8, Mutation{})
			return err
		},
			scale, true},
		"routing": {func(ctx context.Context, c *Client) error {
			_, err := c.ProducerRouting(ctx, "orders", "billing")
			return err
		},
			routing, false},
	}
	bad := map[string]func(good map[string]any) any{
		"null":    func(map[string]any) any { return nil },
		"missing": func(g map[string]any) any { return with(g, firstRequired(g), nil) },
		"another": func(g map[string]any) any {
			if _, ok := g["reshardingId"]; ok {
				return with(g, "reshardingId", "reshard-other")
			}
			return with(g, "streamPrefix", "payments")
		},
	}
	for name, tc := range calls {
		t.Run(name+"/good", func(t *testing.T) {
			f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) { writeJSON(w, 202, tc.good) })
			if err := tc.call(context.Background(), newTestClient(t, f.URL, nil)); err != nil {
				t.Fatalf("a contract answer is refused: %v", err)
			}
		})
		for kind, mk := range bad {
			if name == "scale-group" && kind == "another" {
				continue // a group scale's answer names no object
			}
			t.Run(name+"/"+kind, func(t *testing.T) {
				body := mk(tc.good.(map[string]any))
				f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) { writeJSON(w, 202, body) })
				err := tc.call(context.Background(), newTestClient(t, f.URL, nil))
				var ue *UnexpectedAnswerError
				if !errors.As(err, &ue) {
					t.Fatalf("err = %v, want an UnexpectedAnswerError", err)
				}
				var amb *AmbiguousError
				if tc.mutation != errors.As(err, &amb) {
					t.Fatalf("mutation %v, but ambiguous %v: %v", tc.mutation, !tc.mutation, err)
				}
				if f.count() != 1 {
					t.Fatalf("requests = %d, want 1", f.count())
				}
			})
		}
	}
}

// firstRequired is a field every checked answer requires.
func firstRequired(m map[string]any) string {
	if _, ok := m["reshardingId"]; ok {
		return "reshardingId"
	}
	return "streamPrefix"
}

// TestListingAnswersAreChecked: the groups listing and a migration history
// that are null, lack their array, or hold an element without its required
// fields are refused; the contract's answers (empty lists included) are not.
func TestListingAnswersAreChecked(t *testing.T) {
	group := map[string]any{"streamPrefix": "orders", "consumerGroup": "billing", "shardCount": 4, "metadataVersion": 1}
	migration := map[string]any{"reshardingId": "reshard-1", "fromShardCount": 4, "toShardCount": 8, "state": "ACTIVE"}
	calls := map[string]func(context.Context, *Client) error{
		"groups": func(ctx context.Context, c *Client) error { _, err := c.Groups(ctx); return err },
		"migrations": func(ctx context.Context, c *Client) error {
			_, err := c.Migrations(ctx, "orders", "billing")
			return err
		},
	}
	bodies := map[string]map[string]struct {
		body any
		ok   bool
	}{
		"groups": {
			"good": {map[string]any{"groups": []any{group}}, true}, "empty": {map[string]any{"groups": []any{}}, true},
			"null": {nil, false}, "no array": {map[string]any{}, false},
			"element lacks shardCount": {map[string]any{"groups": []any{map[string]any{"streamPrefix": "orders", "consumerGroup": "billing", "metadataVersion": 1}}}, false},
		},
		"migrations": {
			"good":  {map[string]any{"migrations": []any{migration}, "activeReshardingId": "reshard-1"}, true},
			"empty": {map[string]any{"migrations": []any{}, "activeReshardingId": nil}, true},
			"null":  {nil, false}, "no array": {map[string]any{"activeReshardingId": nil}, false},
			"element null": {map[string]any{"migrations": []any{nil}}, false},
		},
	}
	for name, call := range calls {
		for kind, tc := range bodies[name] {
			t.Run(name+"/"+kind, func(t *testing.T) {
				f := newFake(t, func(w http.ResponseWriter, r *http.Request, n int) { writeJSON(w, 200, tc.body) })
				err := call(context.Background(), newTestClient(t, f.URL, nil))
				var ue *UnexpectedAnswerError
				if tc.ok != (err == nil) || (!tc.ok && !errors.As(err, &ue)) {
					t.Fatalf("err = %v, want ok %v (else an UnexpectedAnswerError)", err, tc.ok)
				}
			})
		}
	}
}
