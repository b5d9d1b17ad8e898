package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// The action RPCs, which tf6server only serves when the server implements
// them (tfprotov6.ProviderServerWithActions): releasingServer must forward
// them explicitly, because its embedded ProviderServer interface does not
// include them (yet).
var _ tfprotov6.ActionServer = &releasingServer{}

// actions is the framework server's action side; the framework has served
// actions since v1.16, so its absence is a bug in this provider.
func (s *releasingServer) actions() (tfprotov6.ActionServer, error) {
	if a, ok := s.ProviderServer.(tfprotov6.ActionServer); ok {
		return a, nil
	}
	return nil, fmt.Errorf("%T serves no actions; this is a bug in the provider", s.ProviderServer)
}

func (s *releasingServer) ValidateActionConfig(ctx context.Context, req *tfprotov6.ValidateActionConfigRequest) (*tfprotov6.ValidateActionConfigResponse, error) {
	a, err := s.actions()
	if err != nil {
		return nil, err
	}
	return call(ctx, s, a.ValidateActionConfig, req)
}

func (s *releasingServer) PlanAction(ctx context.Context, req *tfprotov6.PlanActionRequest) (*tfprotov6.PlanActionResponse, error) {
	a, err := s.actions()
	if err != nil {
		return nil, err
	}
	return call(ctx, s, a.PlanAction, req)
}

// InvokeAction is a streaming RPC: the framework runs the action while
// Terraform iterates the events, after this method has returned, so the
// RPC's own context is passed through (a released one would cancel the
// action), and the configure lock is held for the iteration.
func (s *releasingServer) InvokeAction(ctx context.Context, req *tfprotov6.InvokeActionRequest) (*tfprotov6.InvokeActionServerStream, error) {
	a, err := s.actions()
	if err != nil {
		return nil, err
	}
	s.configure.RLock()
	stream, err := a.InvokeAction(ctx, req)
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
