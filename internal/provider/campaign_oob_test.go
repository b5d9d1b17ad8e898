package provider

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"sync/atomic"
	"time"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/acctest"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

// The campaign's consumer churn, out-of-band changes and faults.

func (w *campaignRun) note(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	fmt.Fprintf(w.all, "\n# step %d: %s\n", w.cur+1, msg)
}

// join starts a healthy consumer of p/g.
func (w *campaignRun) join(p, g string) {
	k := p + "/" + g
	w.consumers[k] = append(w.consumers[k], w.env.StartConsumer(w.t, p, g))
}

// churn moves the consumers of p/g: join, leave, restart, stall (silent,
// still live until its lease ends) or expire (silent, its lease ended).
func (w *campaignRun) churn(p, g, what string) {
	k := p + "/" + g
	cs := w.consumers[k]
	if len(cs) == 0 && what != "join" {
		what = "join"
	}
	w.note("consumers of %s: %s", k, what)
	switch what {
	case "join":
		w.join(p, g)
	case "leave":
		cs[len(cs)-1].Stop()
		w.consumers[k] = cs[:len(cs)-1]
	case "restart":
		cs[0].Stop()
		w.consumers[k] = append(cs[1:], w.env.StartConsumer(w.t, p, g))
	case "stall":
		cs[0].Silence()
		w.consumers[k] = cs[1:]
	case "expire":
		cs[0].Silence()
		w.c.ExpireMember(p, g, cs[0].MemberID)
		w.consumers[k] = cs[1:]
	}
}

// joinOnce is a member that joins p/g with one heartbeat and then falls
// silent: safe to call from a fault's OnMatch (no testing.T).
func (w *campaignRun) joinOnce(p, g string) {
	api, err := client.New(client.Config{Endpoint: w.env.Endpoint, Username: w.env.Member.Username, Password: w.env.Member.Password,
		RunID: "campaign", MaxRetries: 1, RetryWaitMin: 20 * time.Millisecond, RetryWaitMax: 50 * time.Millisecond, RequestTimeout: 5 * time.Second})
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = api.Heartbeat(ctx, p, g, client.HeartbeatRequest{MemberID: acctest.RandomName("campaign-joiner"),
		MemberName: "campaign-joiner", RuntimeConsumerCapacity: client.RuntimeConsumerCapacity{RuntimeMaxConcurrency: 2, AvailableConcurrency: 2}})
}

// joinAtGET makes a member join p/g when terraform's n-th GET arrives, so
// churn lands between a plan and its apply, or between a read and a
// mutation. The returned stop ends it.
func (w *campaignRun) joinAtGET(p, g string, n int) (stop func()) {
	var seen atomic.Int32
	var done atomic.Bool
	w.c.InjectFault(coordinator.Fault{Method: http.MethodGet, Kind: coordinator.FaultDelay, Times: n, Until: func() bool { return true },
		OnMatch: func() {
			if int(seen.Add(1)) == n && !done.Load() {
				w.joinOnce(p, g)
			}
		}})
	return func() { done.Store(true); w.c.ClearFaults() }
}

// oob performs an out-of-band change as another actor (the test's client,
// requestedBy tfacc-out-of-band).
func (w *campaignRun) oob(kind, p, g string, count int) {
	w.clean = false
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	api := w.env.Client()
	var err error
	switch kind {
	case "oob_scale":
		_, err = api.ScaleStream(ctx, p, int32(count), client.Mutation{})
	case "oob_group_scale":
		// One group only (CONTRACT §4.7), to another count than it has: a
		// split prefix. Another actor scales a group that is free to: the
		// step's, or else the first of the prefix (name order) without a
		// migration under way.
		g = w.freeGroup(ctx, p, g)
		if cur, gerr := api.GetGroup(ctx, p, g); gerr == nil && cur.ShardCount == int32(count) {
			count = count%6 + 1
		}
		_, err = api.ScaleGroup(ctx, p, g, int32(count), client.Mutation{})
	case "oob_rollback":
		for _, grp := range w.m.inConfig(p) {
			cur, gerr := api.GetGroup(ctx, p, grp.Name)
			if gerr != nil || cur.ActiveMigration == nil || cur.ActiveMigration.State != client.MigrationActive {
				continue
			}
			if _, rerr := api.RollbackMigration(ctx, p, grp.Name, cur.ActiveMigration.ReshardingID, client.Mutation{}); rerr != nil {
				err = rerr
			}
		}
	case "oob_delete":
		_, err = api.DeleteGroup(ctx, p, g, true, client.Mutation{})
		w.deleted[p+"/"+g] = true
	case "oob_recreate":
		cur, gerr := api.GetGroup(ctx, p, g)
		if gerr != nil {
			err = gerr
			break
		}
		if _, err = api.DeleteGroup(ctx, p, g, true, client.Mutation{}); err == nil {
			// Gone until the create lands: a drained group's create at 0 shards is refused.
			w.deleted[p+"/"+g] = true
			n := cur.ShardCount
			_, err = api.CreateGroup(ctx, p, g, &n, client.Mutation{})
		}
		w.regressed[p+"/"+g] = true
	case "oob_restore":
		bs := w.backups[p+"/"+g]
		if len(bs) == 0 {
			err = fmt.Errorf("no backup of %s/%s", p, g)
			break
		}
		w.c.RestoreGroup(bs[0])
		delete(w.deleted, p+"/"+g)
		w.regressed[p+"/"+g] = true
		w.note("restored %s/%s to its backup at metadataVersion %d", p, g, bs[0].MetadataVersion())
	}
	w.note("out of band: %s %s/%s count %d: error %v", kind, p, g, count, err)
}

// faultOn queues the named gateway fault on the first POST to route.
func (w *campaignRun) faultOn(kind, route string) {
	f := coordinator.Fault{Method: http.MethodPost, Route: route}
	switch kind {
	case "respond_502", "respond_504":
		f.Kind, f.Status = coordinator.FaultRespondAfterApply, 502
		if kind == "respond_504" {
			f.Status = 504
		}
		f.Body, f.ContentType = "<html><body><h1>Gateway error</h1></body></html>", "text/html"
	case "reset_before":
		f.Kind = coordinator.FaultResetBeforeApply
	case "reset_after":
		f.Kind = coordinator.FaultResetAfterApply
	case "garble":
		f.Kind = coordinator.FaultGarbleAfterApply
	case "hang":
		f.Kind, f.Delay = coordinator.FaultHangAfterApply, 2*time.Second
	}
	w.c.InjectFault(f)
}

// mutationRoute is the route of the mutation a configuration change sends.
func mutationRoute(change string) string {
	if change == "add" {
		return coordinator.RouteGroup
	}
	return coordinator.RouteStreamScale
}

// freeGroup is g if it has no migration under way, or else the first group
// of p (name order) without one; g if none is free.
func (w *campaignRun) freeGroup(ctx context.Context, p, g string) string {
	groups, err := w.env.Client().Groups(ctx)
	if err != nil {
		return g
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i].ConsumerGroup < groups[j].ConsumerGroup })
	free := ""
	for _, gi := range groups {
		if gi.StreamPrefix != p || !gi.ActiveMigration.Finished() {
			continue
		}
		if gi.ConsumerGroup == g {
			return g
		}
		if free == "" {
			free = gi.ConsumerGroup
		}
	}
	if free == "" {
		return g
	}
	return free
}
