package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// Seeding a large workspace.
//
// Creating 5,000 groups and 5,000 shard counts through `terraform apply`
// would take most of the benchmark's time budget and measures nothing the
// apply scenario (50 groups) does not. So a size scenario applies a template
// of two groups for real, creates the remaining groups on the coordinator
// through the API (as a migration into Terraform would find them), and
// writes the state Terraform would have written: every instance is the
// template's first instance with its stream prefix substituted. The
// refreshing plan that follows must report "No changes", which proves the
// seeded state is exactly what the provider reads back.

const templateInstances = 2

// expandState rewrites the workspace's terraform.tfstate so that every
// resource holds n instances (index 0 … n-1), each a copy of instance 0 with
// every string containing prefixName(0) rewritten for its index.
func expandState(dir string, n int) error {
	path := filepath.Join(dir, "terraform.tfstate")
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var state map[string]any
	if err := json.Unmarshal(b, &state); err != nil {
		return fmt.Errorf("state: %w", err)
	}
	resources, _ := state["resources"].([]any)
	for _, r := range resources {
		res, _ := r.(map[string]any)
		instances, _ := res["instances"].([]any)
		if len(instances) == 0 {
			return fmt.Errorf("state: resource %v has no instances to copy", res["name"])
		}
		first := instances[0]
		out := make([]any, n)
		for i := range out {
			inst, ok := substitute(first, prefixName(0), prefixName(i)).(map[string]any)
			if !ok {
				return fmt.Errorf("state: an instance of resource %v is not an object", res["name"])
			}
			inst["index_key"] = i
			out[i] = inst
		}
		res["instances"] = out
	}
	if serial, ok := state["serial"].(float64); ok {
		state["serial"] = serial + 1
	}
	b, err = json.Marshal(state)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o600)
}

// substitute deep-copies v, replacing from with to in every string.
func substitute(v any, from, to string) any {
	switch x := v.(type) {
	case string:
		return strings.ReplaceAll(x, from, to)
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = substitute(e, from, to)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = substitute(e, from, to)
		}
		return s
	}
	return v
}

// createGroups creates groups from..to-1 (prefixName(i)/svc, 4 shards)
// through the API with a few concurrent callers.
func createGroups(ctx context.Context, api *client.Client, from, to int) error {
	const workers = 4
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				shards := int32(4)
				if _, err := api.CreateGroup(ctx, prefixName(i), "svc", &shards, client.Mutation{Reason: "bench seed"}); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("seed group %s: %w", prefixName(i), err)
					}
					mu.Unlock()
				}
			}
		}()
	}
	for i := from; i < to; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	return firstErr
}
