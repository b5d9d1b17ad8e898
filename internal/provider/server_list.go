package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// terraform-plugin-go v0.31 keeps the list resource RPCs out of
// tfprotov6.ProviderServer (tfprotov6.ProviderServerWithListResource, a
// temporary interface): a wrapper that only embeds ProviderServer hides
// them, and Terraform's query then fails with "unimplemented". So
// releasingServer forwards them explicitly.

var _ tfprotov6.ListResourceServer = &releasingServer{}

func (s *releasingServer) listServer() (tfprotov6.ListResourceServer, error) {
	ls, ok := s.ProviderServer.(tfprotov6.ListResourceServer)
	if !ok {
		return nil, fmt.Errorf("provider server %T does not serve list resources; this is a bug in the provider", s.ProviderServer)
	}
	return ls, nil
}

func (s *releasingServer) ValidateListResourceConfig(ctx context.Context, req *tfprotov6.ValidateListResourceConfigRequest) (*tfprotov6.ValidateListResourceConfigResponse, error) {
	ls, err := s.listServer()
	if err != nil {
		return nil, err
	}
	return call(ctx, s, ls.ValidateListResourceConfig, req)
}

// ListResource keeps the request's own context: the results stream is
// consumed after the call returns and reads it (a released context would
// drop the logger with it).
func (s *releasingServer) ListResource(ctx context.Context, req *tfprotov6.ListResourceRequest) (*tfprotov6.ListResourceServerStream, error) {
	ls, err := s.listServer()
	if err != nil {
		return nil, err
	}
	s.configure.RLock()
	defer s.configure.RUnlock()
	return ls.ListResource(ctx, req)
}
