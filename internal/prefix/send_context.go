package prefix

import "context"

type sendContextKey struct{}

// WithSendContext returns ctx recording send as the context Settle sends on:
// it may end before ctx (an interrupt's grace gives up waiting for an answer
// before it ends), so that the answer counts as lost and the read-back, on
// ctx, still has time to settle what was sent.
func WithSendContext(ctx, send context.Context) context.Context {
	return context.WithValue(ctx, sendContextKey{}, send)
}

// SendContextOf is the context Settle sends on: the one WithSendContext
// recorded in ctx, or ctx itself.
func SendContextOf(ctx context.Context) context.Context {
	if send, ok := ctx.Value(sendContextKey{}).(context.Context); ok {
		return send
	}
	return ctx
}
