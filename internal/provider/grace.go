package provider

import (
	"context"
	"errors"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/prefix"
)

const (
	// defaultCancelGrace lets a mutation already sent finish or be read back after
	// an interrupt (StopProvider cancels every request context); otherwise a create
	// or scale the coordinator carried out would be lost from state.
	defaultCancelGrace = 10 * time.Second
	// defaultReadBackShare is kept from the grace for a read-back, so a held answer
	// cannot leave the outcome unknown.
	defaultReadBackShare = 4 * time.Second
	// defaultCreateSettleBound: a lost create may still be queued on the coordinator
	// (a lock, then up to 5 s for the state mutex) and be deleted again if
	// provisioning fails.
	defaultCreateSettleBound = 6 * time.Second
)

// settleTiming's zero value is the defaults.
type settleTiming struct {
	cancelGrace, readBackShare, createSettleBound time.Duration
	// after lets tests end the grace phases without a wall-clock delay.
	after func(d time.Duration, end func())
}

func (t settleTiming) grace() time.Duration { return orDefault(t.cancelGrace, defaultCancelGrace) }

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

// graceContext is not cancelled with ctx: it ends the grace period after ctx
// ends, the answer is awaited until only the read-back share is left, then
// read back. Once ctx has ended the client refuses new mutations on it.
func (t settleTiming) graceContext(ctx context.Context, what string) (context.Context, context.CancelFunc) {
	detached := client.WithOperation(context.WithoutCancel(ctx), ctx)
	var gctx context.Context
	var cancel context.CancelFunc
	if deadline, ok := ctx.Deadline(); ok {
		// Retry decisions still see a deadline (a Retry-After past it fails
		// at once); the grace extends it.
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

func interrupted(ctx context.Context) bool {
	return errors.Is(ctx.Err(), context.Canceled)
}
