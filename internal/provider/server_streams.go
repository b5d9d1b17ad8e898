package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// Streaming RPCs produce results after the method returns, so their context is
// released only when the iteration ends or the RPC's own context does.

func streamContext(ctx context.Context) (*releasableContext, func()) {
	rc := newReleasableContext(ctx)
	stop := context.AfterFunc(ctx, rc.release)
	return rc, func() { stop(); rc.release() }
}

func (s *releasingServer) InvokeAction(ctx context.Context, req *tfprotov6.InvokeActionRequest) (*tfprotov6.InvokeActionServerStream, error) {
	rc, release := streamContext(ctx)
	s.configure.RLock()
	stream, err := s.framework.InvokeAction(rc, req)
	s.configure.RUnlock()
	if stream == nil || stream.Events == nil {
		release()
		return stream, err
	}
	events := stream.Events
	return &tfprotov6.InvokeActionServerStream{Events: func(yield func(tfprotov6.InvokeActionEvent) bool) {
		defer release()
		s.configure.RLock()
		defer s.configure.RUnlock()
		events(yield)
	}}, err
}

func (s *releasingServer) ListResource(ctx context.Context, req *tfprotov6.ListResourceRequest) (*tfprotov6.ListResourceServerStream, error) {
	rc, release := streamContext(ctx)
	s.configure.RLock()
	stream, err := s.framework.ListResource(rc, req)
	s.configure.RUnlock()
	if stream == nil || stream.Results == nil {
		release()
		return stream, err
	}
	results := stream.Results
	return &tfprotov6.ListResourceServerStream{Results: func(push func(tfprotov6.ListResourceResult) bool) {
		defer release()
		s.configure.RLock()
		defer s.configure.RUnlock()
		results(push)
	}}, err
}

func (s *releasingServer) ReadStateBytes(ctx context.Context, req *tfprotov6.ReadStateBytesRequest) (*tfprotov6.ReadStateBytesStream, error) {
	rc, release := streamContext(ctx)
	s.configure.RLock()
	stream, err := s.framework.ReadStateBytes(rc, req)
	s.configure.RUnlock()
	if stream == nil || stream.Chunks == nil {
		release()
		return stream, err
	}
	chunks := stream.Chunks
	return &tfprotov6.ReadStateBytesStream{Chunks: func(push func(tfprotov6.ReadStateByteChunk) bool) {
		defer release()
		s.configure.RLock()
		defer s.configure.RUnlock()
		chunks(push)
	}}, err
}
