package provider

import (
	"context"
	"errors"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
)

// Defaults of settleTiming.
const (
	// defaultCancelGrace is how long a mutation already sent may still be
	// finished, or read back, after Terraform cancels the operation (an
	// interrupt: Terraform sends StopProvider, which cancels every request
	// context, and then waits for the provider). Without it, a create or
	// scale the coordinator carried out would be lost from state together
	// with its answer. It is seconds, not the resource's timeout. A second
	// interrupt still stops at once: Terraform then exits and ends the
	// provider process.
	defaultCancelGrace = 10 * time.Second
	// defaultReadBackShare is the part of the grace kept for settling what
	// was sent: an answer still outstanding when only this much is left is
	// given up, and the outcome is read back (a read, never a new mutation).
	// Spending the whole grace on a held answer would leave the read-back
	// "not sent: context canceled", and the group out of state.
	defaultReadBackShare = 4 * time.Second
	// defaultCreateSettleBound is how long a create whose response was lost
	// may still be queued or running on the coordinator: critical sections
	// queue on a JVM lock and then wait up to 5 s for the state mutex
	// (CONTRACT §4.2). A group seen during that window may still be deleted
	// again if provisioning fails, so it is adopted only if it is still there
	// after the bound (not after an interrupt: see confirmSettled).
	defaultCreateSettleBound = 6 * time.Second
)

// settleTiming is how long the provider waits to settle what it sent. It
// lives on the configured provider's data (providerData.timing); tests set
// it on the provider they serve. The zero value is the defaults.
type settleTiming struct {
	cancelGrace, readBackShare, createSettleBound time.Duration
	// after starts a timer (time.AfterFunc when nil); tests end the grace
	// period's phases when they choose, not after a wall-clock delay.
	after func(d time.Duration, end func())
}

func (t settleTiming) grace() time.Duration { return orDefault(t.cancelGrace, defaultCancelGrace) }

// readBack is the grace's share kept for the read-back, at most the grace.
func (t settleTiming) readBack() time.Duration {
	return min(orDefault(t.readBackShare, defaultReadBackShare), t.grace())
}

func (t settleTiming) settleBound() time.Duration {
	return orDefault(t.createSettleBound, defaultCreateSettleBound)
}

func (t settleTiming) startTimer(d time.Duration, end func()) {
	if t.after != nil {
		t.after(d, end)
		return
	}
	time.AfterFunc(d, end)
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// graceContext returns a context for sending one mutation and settling its
// outcome: it carries ctx's values (loggers), is not cancelled with ctx, and
// ends the grace period after ctx ends (cancelled or past its deadline). It
// records ctx as its operation (client.WithOperation), so once ctx has ended
// the client refuses every mutation on it: what was sent is finished or read
// back, and nothing new is sent, on every path that uses it.
//
// The grace has two phases. The answer to what was sent is awaited until
// only the read-back's share is left; then the request is given up (its
// send context, prefix.WithSendContext, ends: the answer counts as lost) and
// the remaining share settles it with a read-back (prefix.Settle).
func (t settleTiming) graceContext(ctx context.Context, what string) (context.Context, context.CancelFunc) {
	detached := client.WithOperation(context.WithoutCancel(ctx), ctx)
	var gctx context.Context
	var cancel context.CancelFunc
	if deadline, ok := ctx.Deadline(); ok {
		// Retry decisions still see a deadline (a Retry-After past it
		// fails at once); the grace extends it.
		gctx, cancel = context.WithDeadline(detached, deadline.Add(t.grace()))
	} else {
		gctx, cancel = context.WithCancel(detached)
	}
	sendCtx, giveUp := context.WithCancel(gctx)
	stop := context.AfterFunc(ctx, func() {
		tflog.Warn(gctx, "operation interrupted while a request to the coordinator is in flight; finishing it or reading it back within the grace period", map[string]any{
			"request": what, "grace": t.grace().String(), "read_back_share": t.readBack().String(), "cause": ctx.Err().Error(),
		})
		t.startTimer(t.grace()-t.readBack(), func() {
			giveUp()
			t.startTimer(t.readBack(), cancel)
		})
	})
	return prefix.WithSendContext(gctx, sendCtx), func() {
		stop()
		giveUp()
		cancel()
	}
}

// interrupted says, for a diagnostic, how ctx ended: "interrupted" (Terraform
// cancelled the operation) or "timed out".
func interrupted(ctx context.Context) bool {
	return errors.Is(ctx.Err(), context.Canceled)
}
