package provider

import (
	"context"
	"errors"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// cancelGrace is how long a mutation already sent may still be finished, or
// read back, after Terraform cancels the operation (an interrupt: Terraform
// sends StopProvider, which cancels every request context, and then waits
// for the provider). Without it, a create or scale the coordinator carried
// out would be lost from state together with its answer. It is seconds, not
// the resource's timeout; it covers createSettleBound, the wait before a
// group whose create answer was lost is adopted. A second interrupt still
// stops at once: Terraform then exits and ends the provider process.
var cancelGrace = 10 * time.Second

// graceAfter starts the grace period's timer (time.AfterFunc); tests replace
// it to end the period when they choose, not after a wall-clock delay.
var graceAfter = func(d time.Duration, end func()) { time.AfterFunc(d, end) }

// graceContext returns a context for sending one mutation and settling its
// outcome: it carries ctx's values (loggers), is not cancelled with ctx, and
// ends cancelGrace after ctx ends (cancelled or past its deadline). It records
// ctx as its operation (client.WithOperation), so once ctx has ended the
// client refuses every mutation on it: what was sent is finished or read
// back, and nothing new is sent, on every path that uses it.
func graceContext(ctx context.Context, what string) (context.Context, context.CancelFunc) {
	detached := client.WithOperation(context.WithoutCancel(ctx), ctx)
	var gctx context.Context
	var cancel context.CancelFunc
	if deadline, ok := ctx.Deadline(); ok {
		// Retry decisions still see a deadline (a Retry-After past it
		// fails at once); the grace extends it.
		gctx, cancel = context.WithDeadline(detached, deadline.Add(cancelGrace))
	} else {
		gctx, cancel = context.WithCancel(detached)
	}
	stop := context.AfterFunc(ctx, func() {
		tflog.Warn(gctx, "operation interrupted while a request to the coordinator is in flight; finishing it or reading it back within the grace period", map[string]any{
			"request": what, "grace": cancelGrace.String(), "cause": ctx.Err().Error(),
		})
		graceAfter(cancelGrace, cancel)
	})
	return gctx, func() {
		stop()
		cancel()
	}
}

// interrupted says, for a diagnostic, how ctx ended: "interrupted" (Terraform
// cancelled the operation) or "timed out".
func interrupted(ctx context.Context) bool {
	return errors.Is(ctx.Err(), context.Canceled)
}
