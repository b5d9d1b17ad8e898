package demo

import (
	"context"
	"time"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// sandboxFleet keeps one fake consumer in every group the sandbox's
// coordinator holds: it starts one when a group appears and stops it when
// the group is deleted.
type sandboxFleet struct {
	mode      ConsumerMode
	endpoint  string
	creds     acctest.Credentials
	p         printer
	consumers map[string]*acctest.Consumer
	joined    map[string]bool
}

// sandboxPoll is how often the fleet lists the groups: a group gets its
// consumer within about this long of its creation.
const sandboxPoll = 100 * time.Millisecond

// watch follows the coordinator's groups until ctx is done.
func (f *sandboxFleet) watch(ctx context.Context, api *client.Client) {
	f.joined = map[string]bool{}
	tick := time.NewTicker(sandboxPoll)
	defer tick.Stop()
	for {
		if groups, err := api.Groups(ctx); err == nil {
			f.sync(groups)
		} else if ctx.Err() == nil {
			f.p.linef("listing the groups: %v", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// sync starts a consumer for each new group, stops those of deleted
// groups, and reports each consumer's join once.
func (f *sandboxFleet) sync(groups []client.Group) {
	seen := map[string]bool{}
	for _, g := range groups {
		id := g.StreamPrefix + "/" + g.ConsumerGroup
		seen[id] = true
		if f.mode == ConsumersNone {
			if !f.joined[id] {
				f.joined[id] = true
				f.p.linef("%s has no consumer (none)", id)
			}
			continue
		}
		c, ok := f.consumers[id]
		if !ok {
			start := acctest.NewConsumer
			if f.mode == ConsumersStuck {
				start = acctest.NewStalledConsumer
			}
			var err error
			if c, err = start(f.endpoint, f.creds, g.StreamPrefix, g.ConsumerGroup); err != nil {
				f.p.linef("starting a consumer of %s: %v", id, err)
				continue
			}
			f.consumers[id] = c
		}
		if !f.joined[id] && c.Joined() {
			f.joined[id] = true
			f.p.linef("%s joined %s (%s)", c.MemberID, id, f.mode)
		}
	}
	for id := range f.joined {
		if !seen[id] && f.consumers[id] == nil {
			delete(f.joined, id)
		}
	}
	for id, c := range f.consumers {
		if !seen[id] {
			c.Stop()
			delete(f.consumers, id)
			delete(f.joined, id)
			f.p.linef("%s was deleted: its consumer %s stopped", id, c.MemberID)
		}
	}
}

// stopAll stops every consumer; each leaves its group.
func (f *sandboxFleet) stopAll() {
	for id, c := range f.consumers {
		c.Stop()
		delete(f.consumers, id)
	}
}
