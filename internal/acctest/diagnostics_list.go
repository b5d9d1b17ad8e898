package acctest

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// recordingServer forwards the list resource RPCs, which terraform-plugin-go
// v0.31 keeps out of tfprotov6.ProviderServer (an embedding wrapper would
// hide them from terraform query), recording their diagnostics.

var _ tfprotov6.ListResourceServer = &recordingServer{}

func (s *recordingServer) listServer() (tfprotov6.ListResourceServer, error) {
	ls, ok := s.ProviderServer.(tfprotov6.ListResourceServer)
	if !ok {
		return nil, fmt.Errorf("provider server %T does not serve list resources", s.ProviderServer)
	}
	return ls, nil
}

func (s *recordingServer) ValidateListResourceConfig(ctx context.Context, req *tfprotov6.ValidateListResourceConfigRequest) (*tfprotov6.ValidateListResourceConfigResponse, error) {
	ls, err := s.listServer()
	if err != nil {
		return nil, err
	}
	resp, err := ls.ValidateListResourceConfig(ctx, req)
	if resp != nil {
		s.rec.add(resp.Diagnostics)
	}
	return resp, err
}

func (s *recordingServer) ListResource(ctx context.Context, req *tfprotov6.ListResourceRequest) (*tfprotov6.ListResourceServerStream, error) {
	ls, err := s.listServer()
	if err != nil {
		return nil, err
	}
	stream, err := ls.ListResource(ctx, req)
	if stream == nil || stream.Results == nil {
		return stream, err
	}
	results := stream.Results
	stream.Results = func(push func(tfprotov6.ListResourceResult) bool) {
		for r := range results {
			s.rec.add(r.Diagnostics)
			if !push(r) {
				return
			}
		}
	}
	return stream, err
}
