package prefix

import "context"

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
