package acctest

import (
	"context"
	"fmt"
	"reflect"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

// fullServer is every RPC a terraform-plugin-framework server serves:
// terraform-plugin-go v0.31 keeps the list resource, action and state store
// RPCs out of tfprotov6.ProviderServer, and tf6server serves them only when
// the server implements them.
type fullServer interface {
	tfprotov6.ProviderServer
	tfprotov6.ListResourceServer
	tfprotov6.ActionServer
	tfprotov6.StateStoreServer
}

// So tf6server finds the list resource, action and state store RPCs on it.
var _ fullServer = (*recordingServer)(nil)

// recordingServer forwards every RPC to the provider's server and records
// the diagnostics of every answer, streamed ones included. It holds the
// server in a named field, not an embedded interface, so an RPC a
// terraform-plugin-go release adds cannot reach the provider around it:
// TestRecordingServerForwardsEveryRPC fails until it is added here, and
// TestRecordingServerRecordsEveryRPC fails on one whose diagnostics are lost.
type recordingServer struct {
	provider fullServer
	rec      *Diagnostics
}

func newRecordingServer(s tfprotov6.ProviderServer, rec *Diagnostics) (tfprotov6.ProviderServer, error) {
	full, ok := s.(fullServer)
	if !ok {
		return nil, fmt.Errorf("provider server %T does not serve list resources, actions and state stores", s)
	}
	return &recordingServer{provider: full, rec: rec}, nil
}

// record forwards one RPC and records the diagnostics of its answer.
func record[Req, Resp any](ctx context.Context, s *recordingServer, fn func(context.Context, Req) (Resp, error), req Req) (Resp, error) {
	resp, err := fn(ctx, req)
	s.rec.add(diagnosticsOf(resp))
	return resp, err
}

// diagnosticsOf is the Diagnostics field of an RPC's answer: every answer
// of tfprotov6 that carries diagnostics carries them there.
func diagnosticsOf(resp any) []*tfprotov6.Diagnostic {
	v := reflect.ValueOf(resp)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	f := v.Elem().FieldByName("Diagnostics")
	if !f.IsValid() {
		return nil
	}
	diags, _ := f.Interface().([]*tfprotov6.Diagnostic)
	return diags
}

// The provider's own RPCs.

func (s *recordingServer) GetMetadata(ctx context.Context, req *tfprotov6.GetMetadataRequest) (*tfprotov6.GetMetadataResponse, error) {
	return record(ctx, s, s.provider.GetMetadata, req)
}

func (s *recordingServer) GetProviderSchema(ctx context.Context, req *tfprotov6.GetProviderSchemaRequest) (*tfprotov6.GetProviderSchemaResponse, error) {
	return record(ctx, s, s.provider.GetProviderSchema, req)
}

func (s *recordingServer) GetResourceIdentitySchemas(ctx context.Context, req *tfprotov6.GetResourceIdentitySchemasRequest) (*tfprotov6.GetResourceIdentitySchemasResponse, error) {
	return record(ctx, s, s.provider.GetResourceIdentitySchemas, req)
}

func (s *recordingServer) ValidateProviderConfig(ctx context.Context, req *tfprotov6.ValidateProviderConfigRequest) (*tfprotov6.ValidateProviderConfigResponse, error) {
	return record(ctx, s, s.provider.ValidateProviderConfig, req)
}

func (s *recordingServer) ConfigureProvider(ctx context.Context, req *tfprotov6.ConfigureProviderRequest) (*tfprotov6.ConfigureProviderResponse, error) {
	return record(ctx, s, s.provider.ConfigureProvider, req)
}

func (s *recordingServer) StopProvider(ctx context.Context, req *tfprotov6.StopProviderRequest) (*tfprotov6.StopProviderResponse, error) {
	return record(ctx, s, s.provider.StopProvider, req)
}

// Resources.

func (s *recordingServer) ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	return record(ctx, s, s.provider.ValidateResourceConfig, req)
}

func (s *recordingServer) UpgradeResourceState(ctx context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	return record(ctx, s, s.provider.UpgradeResourceState, req)
}

func (s *recordingServer) UpgradeResourceIdentity(ctx context.Context, req *tfprotov6.UpgradeResourceIdentityRequest) (*tfprotov6.UpgradeResourceIdentityResponse, error) {
	return record(ctx, s, s.provider.UpgradeResourceIdentity, req)
}

func (s *recordingServer) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	return record(ctx, s, s.provider.ReadResource, req)
}

func (s *recordingServer) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	return record(ctx, s, s.provider.PlanResourceChange, req)
}

func (s *recordingServer) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	return record(ctx, s, s.provider.ApplyResourceChange, req)
}

func (s *recordingServer) ImportResourceState(ctx context.Context, req *tfprotov6.ImportResourceStateRequest) (*tfprotov6.ImportResourceStateResponse, error) {
	return record(ctx, s, s.provider.ImportResourceState, req)
}

func (s *recordingServer) MoveResourceState(ctx context.Context, req *tfprotov6.MoveResourceStateRequest) (*tfprotov6.MoveResourceStateResponse, error) {
	return record(ctx, s, s.provider.MoveResourceState, req)
}

func (s *recordingServer) GenerateResourceConfig(ctx context.Context, req *tfprotov6.GenerateResourceConfigRequest) (*tfprotov6.GenerateResourceConfigResponse, error) {
	return record(ctx, s, s.provider.GenerateResourceConfig, req)
}

// Data sources.

func (s *recordingServer) ValidateDataResourceConfig(ctx context.Context, req *tfprotov6.ValidateDataResourceConfigRequest) (*tfprotov6.ValidateDataResourceConfigResponse, error) {
	return record(ctx, s, s.provider.ValidateDataResourceConfig, req)
}

func (s *recordingServer) ReadDataSource(ctx context.Context, req *tfprotov6.ReadDataSourceRequest) (*tfprotov6.ReadDataSourceResponse, error) {
	return record(ctx, s, s.provider.ReadDataSource, req)
}

// Functions.

func (s *recordingServer) GetFunctions(ctx context.Context, req *tfprotov6.GetFunctionsRequest) (*tfprotov6.GetFunctionsResponse, error) {
	return record(ctx, s, s.provider.GetFunctions, req)
}

func (s *recordingServer) CallFunction(ctx context.Context, req *tfprotov6.CallFunctionRequest) (*tfprotov6.CallFunctionResponse, error) {
	return record(ctx, s, s.provider.CallFunction, req)
}

// Ephemeral resources.

func (s *recordingServer) ValidateEphemeralResourceConfig(ctx context.Context, req *tfprotov6.ValidateEphemeralResourceConfigRequest) (*tfprotov6.ValidateEphemeralResourceConfigResponse, error) {
	return record(ctx, s, s.provider.ValidateEphemeralResourceConfig, req)
}

func (s *recordingServer) OpenEphemeralResource(ctx context.Context, req *tfprotov6.OpenEphemeralResourceRequest) (*tfprotov6.OpenEphemeralResourceResponse, error) {
	return record(ctx, s, s.provider.OpenEphemeralResource, req)
}

func (s *recordingServer) RenewEphemeralResource(ctx context.Context, req *tfprotov6.RenewEphemeralResourceRequest) (*tfprotov6.RenewEphemeralResourceResponse, error) {
	return record(ctx, s, s.provider.RenewEphemeralResource, req)
}

func (s *recordingServer) CloseEphemeralResource(ctx context.Context, req *tfprotov6.CloseEphemeralResourceRequest) (*tfprotov6.CloseEphemeralResourceResponse, error) {
	return record(ctx, s, s.provider.CloseEphemeralResource, req)
}

// List resources.

func (s *recordingServer) ValidateListResourceConfig(ctx context.Context, req *tfprotov6.ValidateListResourceConfigRequest) (*tfprotov6.ValidateListResourceConfigResponse, error) {
	return record(ctx, s, s.provider.ValidateListResourceConfig, req)
}

// Actions.

func (s *recordingServer) ValidateActionConfig(ctx context.Context, req *tfprotov6.ValidateActionConfigRequest) (*tfprotov6.ValidateActionConfigResponse, error) {
	return record(ctx, s, s.provider.ValidateActionConfig, req)
}

func (s *recordingServer) PlanAction(ctx context.Context, req *tfprotov6.PlanActionRequest) (*tfprotov6.PlanActionResponse, error) {
	return record(ctx, s, s.provider.PlanAction, req)
}

// State stores.

func (s *recordingServer) ValidateStateStoreConfig(ctx context.Context, req *tfprotov6.ValidateStateStoreConfigRequest) (*tfprotov6.ValidateStateStoreConfigResponse, error) {
	return record(ctx, s, s.provider.ValidateStateStoreConfig, req)
}

func (s *recordingServer) ConfigureStateStore(ctx context.Context, req *tfprotov6.ConfigureStateStoreRequest) (*tfprotov6.ConfigureStateStoreResponse, error) {
	return record(ctx, s, s.provider.ConfigureStateStore, req)
}

func (s *recordingServer) GetStates(ctx context.Context, req *tfprotov6.GetStatesRequest) (*tfprotov6.GetStatesResponse, error) {
	return record(ctx, s, s.provider.GetStates, req)
}

func (s *recordingServer) DeleteState(ctx context.Context, req *tfprotov6.DeleteStateRequest) (*tfprotov6.DeleteStateResponse, error) {
	return record(ctx, s, s.provider.DeleteState, req)
}

func (s *recordingServer) LockState(ctx context.Context, req *tfprotov6.LockStateRequest) (*tfprotov6.LockStateResponse, error) {
	return record(ctx, s, s.provider.LockState, req)
}

func (s *recordingServer) UnlockState(ctx context.Context, req *tfprotov6.UnlockStateRequest) (*tfprotov6.UnlockStateResponse, error) {
	return record(ctx, s, s.provider.UnlockState, req)
}

func (s *recordingServer) WriteStateBytes(ctx context.Context, req *tfprotov6.WriteStateBytesStream) (*tfprotov6.WriteStateBytesResponse, error) {
	return record(ctx, s, s.provider.WriteStateBytes, req)
}

// The streaming RPCs: what Terraform receives is recorded as it reads it.

// InvokeAction records the invocation's progress messages and the
// diagnostics of its completed event.
func (s *recordingServer) InvokeAction(ctx context.Context, req *tfprotov6.InvokeActionRequest) (*tfprotov6.InvokeActionServerStream, error) {
	stream, err := s.provider.InvokeAction(ctx, req)
	if stream == nil || stream.Events == nil {
		return stream, err
	}
	events := stream.Events
	return &tfprotov6.InvokeActionServerStream{Events: func(yield func(tfprotov6.InvokeActionEvent) bool) {
		for ev := range events {
			switch e := ev.Type.(type) {
			case tfprotov6.ProgressInvokeActionEventType:
				s.rec.mu.Lock()
				s.rec.progress = append(s.rec.progress, e.Message)
				s.rec.mu.Unlock()
			case tfprotov6.CompletedInvokeActionEventType:
				s.rec.add(e.Diagnostics)
			}
			if !yield(ev) {
				return
			}
		}
	}}, err
}

func (s *recordingServer) ListResource(ctx context.Context, req *tfprotov6.ListResourceRequest) (*tfprotov6.ListResourceServerStream, error) {
	stream, err := s.provider.ListResource(ctx, req)
	if stream == nil || stream.Results == nil {
		return stream, err
	}
	results := stream.Results
	return &tfprotov6.ListResourceServerStream{Results: func(push func(tfprotov6.ListResourceResult) bool) {
		for r := range results {
			s.rec.add(r.Diagnostics)
			if !push(r) {
				return
			}
		}
	}}, err
}

func (s *recordingServer) ReadStateBytes(ctx context.Context, req *tfprotov6.ReadStateBytesRequest) (*tfprotov6.ReadStateBytesStream, error) {
	stream, err := s.provider.ReadStateBytes(ctx, req)
	if stream == nil || stream.Chunks == nil {
		return stream, err
	}
	chunks := stream.Chunks
	return &tfprotov6.ReadStateBytesStream{Chunks: func(push func(tfprotov6.ReadStateByteChunk) bool) {
		for c := range chunks {
			s.rec.add(c.Diagnostics)
			if !push(c) {
				return
			}
		}
	}}, err
}
