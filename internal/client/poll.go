package client

import (
	"context"
	"fmt"
	"time"
)

// Poll defaults.
const (
	DefaultPollInitial              = 250 * time.Millisecond
	DefaultPollMax                  = time.Second
	DefaultPollFactor               = 1.5
	DefaultPollMaxConsecutiveErrors = 3
)

// PollOptions tunes Poll. Zero values take the defaults; a negative
// MaxConsecutiveErrors tolerates no transient error at all.
type PollOptions struct {
	Initial, Max         time.Duration
	Factor               float64
	MaxConsecutiveErrors int
	// Sleep waits d or until ctx is done; nil uses a real timer.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Poll calls check at once and then after growing intervals (Initial,
// times Factor, capped at Max) until it reports done. Transient errors
// (IsTransient) are tolerated up to MaxConsecutiveErrors in a row; any other
// error ends the poll at once. When ctx ends, the error wraps ctx.Err() and
// the last check error, if the latest check failed.
func Poll(ctx context.Context, o PollOptions, check func(ctx context.Context) (done bool, err error)) error {
	if o.Initial <= 0 {
		o.Initial = DefaultPollInitial
	}
	if o.Max <= 0 {
		o.Max = DefaultPollMax
	}
	if o.Max < o.Initial {
		o.Max = o.Initial
	}
	if o.Factor < 1 {
		o.Factor = DefaultPollFactor
	}
	if o.MaxConsecutiveErrors == 0 {
		o.MaxConsecutiveErrors = DefaultPollMaxConsecutiveErrors
	}
	if o.Sleep == nil {
		o.Sleep = Sleep
	}

	interval := o.Initial
	consecutive := 0
	var lastErr error
	for {
		if err := ctx.Err(); err != nil {
			return pollStopped(err, lastErr)
		}
		done, err := check(ctx)
		switch {
		case err == nil:
			consecutive, lastErr = 0, nil
			if done {
				return nil
			}
		case ctx.Err() != nil:
			return pollStopped(ctx.Err(), err)
		case !IsTransient(err):
			return err
		default:
			consecutive++
			lastErr = err
			if consecutive > o.MaxConsecutiveErrors {
				return fmt.Errorf("giving up after %d consecutive transient errors: %w", consecutive, err)
			}
		}
		if err := o.Sleep(ctx, interval); err != nil {
			return pollStopped(err, lastErr)
		}
		interval = time.Duration(float64(interval) * o.Factor)
		if interval > o.Max {
			interval = o.Max
		}
	}
}

func pollStopped(ctxErr, lastErr error) error {
	if lastErr == nil {
		return fmt.Errorf("polling stopped: %w", ctxErr)
	}
	return fmt.Errorf("polling stopped: %w; last error: %w", ctxErr, lastErr)
}

// Sleep waits d, or until ctx is done (then it returns ctx.Err()).
func Sleep(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}
