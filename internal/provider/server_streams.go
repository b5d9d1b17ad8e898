package provider

import (
	"context"
	"iter"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// Streaming RPCs produce results after the method returns, so their context is
// released only when the iteration ends or the RPC's own context does.

func streamContext(ctx context.Context) (*releasableContext, func()) {
	rc := newReleasableContext(ctx)
	stop := context.AfterFunc(ctx, rc.release)
	return rc, func() { stop(); rc.release() }
}

// callStream opens the stream under the configure lock and runs its iterator,
// which seq names in the answer, under it again.
func callStream[Req, Resp, T any](ctx context.Context, s *releasingServer, open func(context.Context, Req) (*Resp, error), req Req,
	seq func(*Resp) *iter.Seq[T],
) (*Resp, error) {
	rc, release := streamContext(ctx)
	s.configure.RLock()
	stream, err := open(rc, req)
	s.configure.RUnlock()
	if stream == nil || *seq(stream) == nil {
		release()
		return stream, err
	}
	inner := *seq(stream)
	*seq(stream) = func(yield func(T) bool) {
		defer release()
		s.configure.RLock()
		defer s.configure.RUnlock()
		inner(yield)
	}
	return stream, err
}

func (s *releasingServer) InvokeAction(ctx context.Context, req *tfprotov6.InvokeActionRequest) (*tfprotov6.InvokeActionServerStream, error) {
	return callStream(ctx, s, s.framework.InvokeAction, req,
		func(st *tfprotov6.InvokeActionServerStream) *iter.Seq[tfprotov6.InvokeActionEvent] { return &st.Events })
}

func (s *releasingServer) ListResource(ctx context.Context, req *tfprotov6.ListResourceRequest) (*tfprotov6.ListResourceServerStream, error) {
	return callStream(ctx, s, s.framework.ListResource, req,
		func(st *tfprotov6.ListResourceServerStream) *iter.Seq[tfprotov6.ListResourceResult] {
			return &st.Results
		})
}

func (s *releasingServer) ReadStateBytes(ctx context.Context, req *tfprotov6.ReadStateBytesRequest) (*tfprotov6.ReadStateBytesStream, error) {
	return callStream(ctx, s, s.framework.ReadStateBytes, req,
		func(st *tfprotov6.ReadStateBytesStream) *iter.Seq[tfprotov6.ReadStateByteChunk] { return &st.Chunks })
}
