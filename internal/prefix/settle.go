package prefix

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// MaxResends limits re-sends after lost answers whose read-back showed nothing
// happened.
const MaxResends = 2

// Mutation is one coordinator mutation for Settle. ReadBack runs on ctx, Send
// on its send context, which an interrupt's grace ends first, so that a held
// answer leaves time for the read-back.
type Mutation[T any] struct {
	// What names the mutation in logs and errors.
	What string
	// RequestID is carried by every send: a re-send is the same request.
	RequestID string
	// Send sends the mutation once.
	Send func(ctx context.Context) (T, error)
	// ReadBack reads the coordinator after a lost answer. An error wrapped with
	// Decided is the outcome found, returned as it is.
	ReadBack func(ctx context.Context) (result T, applied bool, err error)
	// Idempotent: a second send of an applied mutation is harmless (rollback,
	// delete: CONTRACT §9), so it is re-sent even when the read-back failed. A
	// create is not, nor a scale while its migration is active.
	Idempotent bool
	// Lost reports an answer that is not the coordinator's own decision; nil
	// means client.IsAmbiguous.
	Lost func(error) bool
	// LandedMeanwhile reports a re-send's answer saying the first send may have
	// landed since (a create's 409); it is read back like a lost answer.
	LandedMeanwhile func(error) bool
}

// Journal is what Settle did, for diagnostics.
type Journal struct {
	What, RequestID string
	// Sends is how many times the mutation was sent.
	Sends int
	// SettledBy is the lost answer a read-back showed applied.
	SettledBy error
}

// Unsettled says why Settle could not settle a lost answer.
type Unsettled int

const (
	// LimitReached: every answer lost, and no read-back showed the mutation applied.
	LimitReached Unsettled = iota + 1
	// ReadBackFailed: the read-back failed and the mutation is not idempotent.
	ReadBackFailed
	// NotSentAgain: the interrupt gate refused the re-send.
	NotSentAgain
)

// UnsettledError is Settle's error when a lost answer was not settled. The
// read-back's failure is a field, not in the chain: callers' errorCode checks
// are about the mutation.
type UnsettledError struct {
	Reason          Unsettled
	What, RequestID string
	Sends           int
	Lost            error // the last lost answer
	ReadBack        error // the last read-back's failure, nil when it succeeded
	NotSent         error // NotSentAgain: the client's refusal of the re-send
}

func (e *UnsettledError) Error() string {
	readBack := "reading it back showed it had not happened"
	if e.ReadBack != nil {
		readBack = fmt.Sprintf("reading it back failed (%v)", e.ReadBack)
	}
	switch e.Reason {
	case LimitReached:
		return fmt.Sprintf("the %s (request id %s) was sent %d times and each answer was lost (the last: %v); after each, %s, and it "+
			"was not sent again: %d re-sends is the limit", e.What, e.RequestID, e.Sends, e.Lost, readBackEach(e.ReadBack), MaxResends)
	case ReadBackFailed:
		return fmt.Sprintf("the %s (request id %s) was sent and its answer was lost (%v); %s, so whether it happened is unknown, and it "+
			"was not sent again, because a second send of it is not safe once it may have happened", e.What, e.RequestID, e.Lost, readBack)
	}
	return fmt.Sprintf("the %s (request id %s) was sent and its answer was lost; %s, and nothing more was sent: %v",
		e.What, e.RequestID, readBack, e.NotSent)
}

func readBackEach(last error) string {
	if last != nil {
		return fmt.Sprintf("reading it back showed it had not happened or failed (the last read-back: %v)", last)
	}
	return "reading it back showed it had not happened"
}

func (e *UnsettledError) Unwrap() error {
	if e.Reason == NotSentAgain {
		return e.NotSent
	}
	return e.Lost
}

type decidedError struct{ err error }

func (e *decidedError) Error() string { return e.err.Error() }
func (e *decidedError) Unwrap() error { return e.err }

// Decided marks a ReadBack error as the outcome found: Settle returns it and
// sends nothing more.
func Decided(err error) error { return &decidedError{err: err} }

// Settle sends m and, after a lost answer, reads back before anything is
// re-sent, up to MaxResends times with the same request id.
func Settle[T any](ctx context.Context, m Mutation[T]) (T, Journal, error) {
	lost := m.Lost
	if lost == nil {
		lost = client.IsAmbiguous
	}
	j := Journal{What: m.What, RequestID: m.RequestID}
	var zero T
	send := SendContextOf(ctx)
	res, err := m.Send(send)
	j.Sends++
	j.logSend(ctx, err, lost(err))
	for {
		landed := j.Sends > 1 && m.LandedMeanwhile != nil && m.LandedMeanwhile(err)
		if !lost(err) && !landed {
			return res, j, err
		}
		read, applied, rerr := m.ReadBack(ctx)
		var decided *decidedError
		switch {
		case errors.As(rerr, &decided):
			j.log(ctx, "the read-back decided the outcome", map[string]any{"outcome": decided.err.Error()})
			return zero, j, decided.err
		case rerr == nil && applied:
			j.SettledBy = err
			j.log(ctx, "settled by read-back: the mutation whose answer was lost had been applied", nil)
			return read, j, nil
		case rerr != nil && !m.Idempotent:
			j.log(ctx, "the read-back failed; not sending the mutation again", map[string]any{"read_back_error": rerr.Error()})
			return zero, j, &UnsettledError{Reason: ReadBackFailed, What: m.What, RequestID: m.RequestID, Sends: j.Sends, Lost: err, ReadBack: rerr}
		case j.Sends > MaxResends:
			j.log(ctx, "the read-back shows the mutation had not happened; the re-send limit is reached", nil)
			return zero, j, &UnsettledError{Reason: LimitReached, What: m.What, RequestID: m.RequestID, Sends: j.Sends, Lost: err, ReadBack: rerr}
		}
		why := "the read-back shows it had not happened"
		if rerr != nil {
			why = "the read-back failed (" + rerr.Error() + "), and a second send of it is harmless"
		}
		j.log(ctx, "sending the mutation again with the same request id: "+why, nil)
		again, aerr := m.Send(send)
		if client.IsNotSent(aerr) {
			j.log(ctx, "the re-send was not sent: the operation ended", map[string]any{"error": aerr.Error()})
			return zero, j, &UnsettledError{Reason: NotSentAgain, What: m.What, RequestID: m.RequestID, Sends: j.Sends, Lost: err, ReadBack: rerr, NotSent: aerr}
		}
		j.Sends++
		res, err = again, aerr
		j.logSend(ctx, err, lost(err))
	}
}

func (j *Journal) logSend(ctx context.Context, err error, lost bool) {
	fields := map[string]any{"what": j.What, "request_id": j.RequestID, "send": j.Sends}
	switch {
	case err == nil:
		fields["outcome"] = "answered"
		tflog.Info(ctx, "coordinator mutation", fields)
		return
	case lost:
		fields["outcome"] = "answer lost; reading it back"
	case client.IsNotSent(err):
		fields["outcome"] = "not sent"
	default:
		fields["outcome"] = "refused by the coordinator"
	}
	fields["error"] = err.Error()
	tflog.Warn(ctx, "coordinator mutation", fields)
}

func (j *Journal) log(ctx context.Context, msg string, extra map[string]any) {
	fields := map[string]any{"what": j.What, "request_id": j.RequestID, "sends": j.Sends}
	for k, v := range extra {
		fields[k] = v
	}
	tflog.Warn(ctx, msg, fields)
}

type sendContextKey struct{}

// WithSendContext records send as the context Settle sends on; it may end
// before ctx so the answer counts as lost while the read-back still has time.
func WithSendContext(ctx, send context.Context) context.Context {
	return context.WithValue(ctx, sendContextKey{}, send)
}

// SendContextOf is the context Settle sends on: the recorded one, or ctx.
func SendContextOf(ctx context.Context) context.Context {
	if send, ok := ctx.Value(sendContextKey{}).(context.Context); ok {
		return send
	}
	return ctx
}
