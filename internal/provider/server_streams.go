package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// The streaming RPCs: the framework produces their results while Terraform
// iterates them, after the method has returned, and reads the RPC's
// context then (a released one would cancel the action or the listing and
// drop the request's logger). So they keep the RPC's own context, and the
// configure lock's read side is held for the call and again for the
// iteration. tf6server ends a stream with its RPC, so nothing is kept past
// Terraform's reading of it.

func (s *releasingServer) InvokeAction(ctx context.Context, req *tfprotov6.InvokeActionRequest) (*tfprotov6.InvokeActionServerStream, error) {
	s.configure.RLock()
	stream, err := s.framework.InvokeAction(ctx, req)
	s.configure.RUnlock()
	if stream == nil || stream.Events == nil {
		return stream, err
	}
	events := stream.Events
	return &tfprotov6.InvokeActionServerStream{Events: func(yield func(tfprotov6.InvokeActionEvent) bool) {
		s.configure.RLock()
		defer s.configure.RUnlock()
		events(yield)
	}}, err
}

func (s *releasingServer) ListResource(ctx context.Context, req *tfprotov6.ListResourceRequest) (*tfprotov6.ListResourceServerStream, error) {
	s.configure.RLock()
	stream, err := s.framework.ListResource(ctx, req)
	s.configure.RUnlock()
	if stream == nil || stream.Results == nil {
		return stream, err
	}
	results := stream.Results
	return &tfprotov6.ListResourceServerStream{Results: func(push func(tfprotov6.ListResourceResult) bool) {
		s.configure.RLock()
		defer s.configure.RUnlock()
		results(push)
	}}, err
}

func (s *releasingServer) ReadStateBytes(ctx context.Context, req *tfprotov6.ReadStateBytesRequest) (*tfprotov6.ReadStateBytesStream, error) {
	s.configure.RLock()
	stream, err := s.framework.ReadStateBytes(ctx, req)
	s.configure.RUnlock()
	if stream == nil || stream.Chunks == nil {
		return stream, err
	}
	chunks := stream.Chunks
	return &tfprotov6.ReadStateBytesStream{Chunks: func(push func(tfprotov6.ReadStateByteChunk) bool) {
		s.configure.RLock()
		defer s.configure.RUnlock()
		chunks(push)
	}}, err
}
