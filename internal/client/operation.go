package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// The interrupt rule, in one place: once the operation a request belongs to
// has ended (Terraform cancels an operation's context on an interrupt), a
// request that is already sent may be finished and read back, but nothing new
// is sent: the client refuses to start a mutation, and does not retry one.
//
// Requests already sent run on a context that outlives the operation (the
// provider's grace context). Such a context is made with WithOperation, which
// records the operation it serves: do refuses every mutation on it once that
// operation has ended, while reads (read-backs, polls) go on. A caller cannot
// forget the rule: a grace context without the record is a context the
// client has never seen cancelled, and the provider makes its grace
// contexts only through WithOperation.

type operationKey struct{}

// WithOperation returns ctx recording that its requests serve operation op:
// ctx may outlive op (it is typically detached from it), but no mutation is
// started on ctx, or on a context derived from it, once op is done.
func WithOperation(ctx, op context.Context) context.Context {
	return context.WithValue(ctx, operationKey{}, op)
}

// OperationEnded returns why the operation ctx serves has ended (the
// operation's own context error, for the outermost ended operation), or nil
// while it runs. A ctx made without WithOperation is its own operation.
func OperationEnded(ctx context.Context) error {
	var ended error
	for c := ctx; c != nil; {
		op, _ := c.Value(operationKey{}).(context.Context)
		if op == nil {
			break
		}
		if err := op.Err(); err != nil {
			ended = err
		}
		c = op
	}
	if ended == nil {
		ended = ctx.Err()
	}
	return ended
}

// NotSentError is a mutation the client refused to start, or to retry,
// because the operation it belongs to had ended: this request did not reach
// the coordinator (on a refused retry, the earlier attempts did not either:
// a mutation is retried only after an answer that applied nothing, or a
// connection that never opened).
type NotSentError struct {
	Method, Path, RequestID string
	Err                     error // the operation's end: context.Canceled on an interrupt
	// Last is, for a refused retry, the answer of the attempt before it
	// (already redacted); nil when nothing was sent.
	Last error
}

func (e *NotSentError) Error() string {
	if e.Last != nil {
		return fmt.Sprintf("%s %s (request id %s) was not retried: the operation ended (%v) while waiting to retry, and nothing new is "+
			"sent after an interrupt or a timeout; the last attempt failed: %v", e.Method, e.Path, e.RequestID, e.Err, e.Last)
	}
	return fmt.Sprintf("%s %s (request id %s) was not sent: the operation ended (%v) before it started, and nothing new is sent "+
		"after an interrupt", e.Method, e.Path, e.RequestID, e.Err)
}

// operationDeadline is the earliest deadline of ctx and of the operations it
// serves: a mutation's retry must be sent before its own operation's
// deadline, not the grace-extended one of the context it runs on.
func operationDeadline(ctx context.Context) (time.Time, bool) {
	deadline, ok := ctx.Deadline()
	for c := ctx; c != nil; {
		op, _ := c.Value(operationKey{}).(context.Context)
		if op == nil {
			break
		}
		if d, has := op.Deadline(); has && (!ok || d.Before(deadline)) {
			deadline, ok = d, true
		}
		c = op
	}
	return deadline, ok
}

func (e *NotSentError) Unwrap() error { return e.Err }

// IsNotSent reports whether err is a mutation the client did not send
// because its operation had ended.
func IsNotSent(err error) bool {
	var ns *NotSentError
	return errors.As(err, &ns)
}

// mutation: every request but a read and a login changes the coordinator.
func (cl *call) mutation() bool {
	return cl.method != http.MethodGet && cl.operation != "login"
}
