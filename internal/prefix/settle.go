package prefix

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// MaxResends is how often Settle sends a mutation again after lost answers
// whose read-back showed it had not happened: the one limit for create,
// scale, delete and rollback.
const MaxResends = 2

// Mutation is one coordinator mutation for Settle. ReadBack runs on the
// context Settle gets: the caller's grace context (the provider's
// graceContext), so an interrupt while a request is in flight still ends
// with the outcome known, and the client sends nothing new after it. Send
// runs on its send context (WithSendContext), which an interrupt's grace
// ends first, so that a held answer leaves time for the read-back.
type Mutation[T any] struct {
	// What names the mutation in logs and errors: "delete of group "svc"
	// under stream prefix "orders"".
	What string
	// RequestID is the request id every send carries (a re-send is the
	// same request, for the audit log).
	RequestID string
	// Send sends the mutation once.
	Send func(ctx context.Context) (T, error)
	// ReadBack reads the coordinator after a lost answer. applied: the
	// mutation happened, and result is its outcome. err: the read-back
	// failed, and whether it happened is unknown; an error wrapped with
	// Decided instead is the outcome the read-back found (someone else's
	// group, a create rolled back), returned as it is.
	ReadBack func(ctx context.Context) (result T, applied bool, err error)
	// Idempotent: a re-send is safe even when the read-back failed, because
	// the contract makes a second send of an applied mutation harmless
	// (CONTRACT §9: a rollback answers the same object again; a delete
	// answers 404 GROUP_NOT_FOUND, which §3 says is "already gone"). A
	// create is not (a second send meets 409 GROUP_ALREADY_EXISTS), nor is
	// a scale while its migration is active (§4.6).
	Idempotent bool
	// Lost reports an answer that is not the coordinator's own decision;
	// nil means client.IsAmbiguous.
	Lost func(error) bool
	// LandedMeanwhile reports an answer to a re-send that says the first
	// send may have landed since the read-back (a create's 409
	// GROUP_ALREADY_EXISTS, §9): it is read back like a lost answer. nil:
	// every answer to a re-send that is not lost is the outcome.
	LandedMeanwhile func(error) bool
}

// Journal is what Settle did, for diagnostics.
type Journal struct {
	What, RequestID string
	// Sends is how many times the mutation was sent (a re-send the
	// interrupt gate refused is not counted).
	Sends int
	// LostAnswers is how many answers were lost (or said the first send
	// may have landed meanwhile) and read back.
	LostAnswers int
	// SettledBy is the lost answer a read-back showed applied; nil when the
	// outcome is the coordinator's own answer.
	SettledBy error
}

// Unsettled says why Settle could not settle a lost answer.
type Unsettled int

const (
	// LimitReached: MaxResends re-sends, each answer lost, and no
	// read-back showed the mutation applied.
	LimitReached Unsettled = iota + 1
	// ReadBackFailed: the read-back failed and the mutation is not
	// idempotent, so it was not sent again; whether it happened is
	// unknown.
	ReadBackFailed
	// NotSentAgain: the read-back showed the mutation had not happened (or
	// failed, for an idempotent one), and the interrupt gate refused the
	// re-send (client.IsNotSent): nothing more was sent.
	NotSentAgain
)

// UnsettledError is Settle's error when a lost answer was not settled; its
// text says what is known. It unwraps to the last lost answer
// (client.IsAmbiguous holds: the outcome is unknown), or for NotSentAgain to
// the client's refusal (client.IsNotSent), since the read-back showed that
// nothing was applied. The read-back's failure is a field, not in the chain:
// the caller's errorCode checks and hints are about the mutation.
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

// decidedError is a read-back's finding that is the outcome.
type decidedError struct{ err error }

func (e *decidedError) Error() string { return e.err.Error() }
func (e *decidedError) Unwrap() error { return e.err }

// Decided marks an error a ReadBack returns as the outcome it found, not a
// failure to read: Settle returns it as it is and sends nothing more.
func Decided(err error) error { return &decidedError{err: err} }

// Settle sends m and settles a lost answer, by one rule for every mutation:
//
//   - The mutation is sent. An answer that is the coordinator's own
//     decision (success or error) is the outcome, returned as it is.
//   - A lost answer (m.Lost: no answer, a proxy's 5xx without errorCode, an
//     unreadable 2xx) is read back before anything is re-sent.
//   - Applied: the read-back's result is the outcome, settled by
//     read-back (Journal.SettledBy is the lost answer).
//   - Not applied: the mutation is sent again with the same request id, up
//     to MaxResends times; its answer goes through the same rule. Past the
//     limit: an UnsettledError (LimitReached).
//   - The read-back failed: the mutation is sent again only when
//     m.Idempotent (the contract makes a second send harmless); otherwise
//     an UnsettledError (ReadBackFailed) says what is known.
//   - A re-send the interrupt gate refuses (client.IsNotSent): an
//     UnsettledError (NotSentAgain) says the first send's answer was lost,
//     the read-back showed it had not happened, and nothing more was sent.
//
// Every send is logged with what, the request id and its outcome.
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
		j.LostAnswers++
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

// logSend journals one send and its outcome.
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
