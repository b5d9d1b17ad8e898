package client

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"
)

// fakeSleep records requested waits instead of sleeping.
type fakeSleep struct{ waits []time.Duration }

func (f *fakeSleep) sleep(ctx context.Context, d time.Duration) error {
	f.waits = append(f.waits, d)
	return ctx.Err()
}

var (
	transientErr = &APIError{HTTPStatus: 409, ErrorCode: CodeStateVersionConflict}
	permanentErr = &APIError{HTTPStatus: 404, ErrorCode: CodeGroupNotFound}
)

func TestPollDoneImmediately(t *testing.T) {
	s := &fakeSleep{}
	calls := 0
	err := Poll(context.Background(), PollOptions{Sleep: s.sleep}, func(context.Context) (bool, error) {
		calls++
		return true, nil
	})
	if err != nil || calls != 1 || len(s.waits) != 0 {
		t.Errorf("err %v, calls %d, waits %v", err, calls, s.waits)
	}
}

func TestPollIntervalsGrowToMax(t *testing.T) {
	s := &fakeSleep{}
	calls := 0
	check := func(context.Context) (bool, error) { calls++; return calls == 5, nil }
	if err := Poll(context.Background(), PollOptions{Initial: 100 * time.Millisecond, Max: 350 * time.Millisecond, Factor: 2, Sleep: s.sleep}, check); err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 350 * time.Millisecond, 350 * time.Millisecond}
	if !reflect.DeepEqual(s.waits, want) {
		t.Errorf("waits %v, want %v", s.waits, want)
	}

	s, calls = &fakeSleep{}, 0
	check = func(context.Context) (bool, error) { calls++; return calls == 6, nil }
	if err := Poll(context.Background(), PollOptions{Sleep: s.sleep}, check); err != nil {
		t.Fatal(err)
	}
	want = []time.Duration{250 * time.Millisecond, 375 * time.Millisecond, 562500 * time.Microsecond, 843750 * time.Microsecond, time.Second}
	if !reflect.DeepEqual(s.waits, want) {
		t.Errorf("default waits %v, want %v", s.waits, want)
	}
}

func TestPollToleratesTransientErrorsInARow(t *testing.T) {
	// Three transient errors, a success that is not done, three more, then done.
	script := []error{transientErr, transientErr, transientErr, nil, transientErr, transientErr, transientErr}
	s := &fakeSleep{}
	calls := 0
	err := Poll(context.Background(), PollOptions{Sleep: s.sleep}, func(context.Context) (bool, error) {
		calls++
		if calls <= len(script) {
			return false, script[calls-1]
		}
		return true, nil
	})
	if err != nil || calls != len(script)+1 {
		t.Fatalf("err %v after %d calls", err, calls)
	}
}

func TestPollGivesUpAfterTooManyTransientErrors(t *testing.T) {
	calls := 0
	err := Poll(context.Background(), PollOptions{Sleep: (&fakeSleep{}).sleep}, func(context.Context) (bool, error) {
		calls++
		return false, transientErr
	})
	if calls != 4 || ErrorCode(err) != CodeStateVersionConflict {
		t.Errorf("err %v after %d calls; want the 4th consecutive error to end the poll", err, calls)
	}

	calls = 0
	err = Poll(context.Background(), PollOptions{MaxConsecutiveErrors: -1, Sleep: (&fakeSleep{}).sleep}, func(context.Context) (bool, error) {
		calls++
		return false, transientErr
	})
	if calls != 1 || err == nil {
		t.Errorf("negative tolerance: err %v after %d calls", err, calls)
	}
}

func TestPollStopsAtPermanentError(t *testing.T) {
	calls := 0
	err := Poll(context.Background(), PollOptions{Sleep: (&fakeSleep{}).sleep}, func(context.Context) (bool, error) {
		calls++
		if calls == 1 {
			return false, nil
		}
		return false, permanentErr
	})
	if calls != 2 || !errors.Is(err, permanentErr) {
		t.Errorf("err %v after %d calls", err, calls)
	}
}

func TestPollContextDoneWrapsLastError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	err := Poll(ctx, PollOptions{Sleep: (&fakeSleep{}).sleep}, func(context.Context) (bool, error) {
		calls++
		if calls == 2 {
			cancel() // the deadline hits while waiting to poll again
		}
		return false, transientErr
	})
	if !errors.Is(err, context.Canceled) || ErrorCode(err) != CodeStateVersionConflict {
		t.Errorf("err %v; want context.Canceled and the last check error", err)
	}

	done, cancelDone := context.WithCancel(context.Background())
	cancelDone()
	calls = 0
	err = Poll(done, PollOptions{}, func(context.Context) (bool, error) { calls++; return false, nil })
	if !errors.Is(err, context.Canceled) || calls != 0 {
		t.Errorf("already-done context: err %v, calls %d", err, calls)
	}
}

func TestPollRealTimer(t *testing.T) {
	calls := 0
	err := Poll(context.Background(), PollOptions{Initial: time.Millisecond, Max: time.Millisecond}, func(context.Context) (bool, error) {
		calls++
		return calls == 3, nil
	})
	if err != nil || calls != 3 {
		t.Errorf("err %v, calls %d", err, calls)
	}
}
