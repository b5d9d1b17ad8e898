package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// The action RPCs, which tf6server only serves when the server implements
// tfprotov6.ProviderServerWithActions: releasingServer must forward them
// explicitly, because its embedded ProviderServer interface does not
// include them (yet).
var _ tfprotov6.ProviderServerWithActions = &releasingServer{}

func (s *releasingServer) actions() tfprotov6.ActionServer {
	//nolint:staticcheck // the temporary interface is the only way to reach the action RPCs in terraform-plugin-go v0.31
	return s.ProviderServer.(tfprotov6.ProviderServerWithActions)
}

func (s *releasingServer) ValidateActionConfig(ctx context.Context, req *tfprotov6.ValidateActionConfigRequest) (*tfprotov6.ValidateActionConfigResponse, error) {
	return call(ctx, s, s.actions().ValidateActionConfig, req)
}

func (s *releasingServer) PlanAction(ctx context.Context, req *tfprotov6.PlanActionRequest) (*tfprotov6.PlanActionResponse, error) {
	return call(ctx, s, s.actions().PlanAction, req)
}

// InvokeAction is a streaming RPC: the framework runs the action while
// Terraform iterates the events, after this method has returned, so the
// RPC's own context is passed through (a released one would cancel the
// action), and the configure lock is held for the iteration.
func (s *releasingServer) InvokeAction(ctx context.Context, req *tfprotov6.InvokeActionRequest) (*tfprotov6.InvokeActionServerStream, error) {
	s.configure.RLock()
	stream, err := s.actions().InvokeAction(ctx, req)
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
