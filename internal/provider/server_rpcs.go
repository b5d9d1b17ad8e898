package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
)

func (s *releasingServer) ConfigureProvider(ctx context.Context, req *tfprotov6.ConfigureProviderRequest) (*tfprotov6.ConfigureProviderResponse, error) {
	s.configure.Lock()
	defer s.configure.Unlock()
	rc := newReleasableContext(ctx)
	defer rc.release()
	return s.framework.ConfigureProvider(rc, req)
}

// StopProvider takes no lock so it can cancel RPCs in flight.
func (s *releasingServer) StopProvider(ctx context.Context, req *tfprotov6.StopProviderRequest) (*tfprotov6.StopProviderResponse, error) {
	rc := newReleasableContext(ctx)
	defer rc.release()
	return s.framework.StopProvider(rc, req)
}

// The provider's own RPCs.

func (s *releasingServer) GetMetadata(ctx context.Context, req *tfprotov6.GetMetadataRequest) (*tfprotov6.GetMetadataResponse, error) {
	return call(ctx, s, s.framework.GetMetadata, req)
}

func (s *releasingServer) GetProviderSchema(ctx context.Context, req *tfprotov6.GetProviderSchemaRequest) (*tfprotov6.GetProviderSchemaResponse, error) {
	return call(ctx, s, s.framework.GetProviderSchema, req)
}

func (s *releasingServer) GetResourceIdentitySchemas(ctx context.Context, req *tfprotov6.GetResourceIdentitySchemasRequest) (*tfprotov6.GetResourceIdentitySchemasResponse, error) {
	return call(ctx, s, s.framework.GetResourceIdentitySchemas, req)
}

func (s *releasingServer) ValidateProviderConfig(ctx context.Context, req *tfprotov6.ValidateProviderConfigRequest) (*tfprotov6.ValidateProviderConfigResponse, error) {
	return call(ctx, s, s.framework.ValidateProviderConfig, req)
}

// Resources.

func (s *releasingServer) ValidateResourceConfig(ctx context.Context, req *tfprotov6.ValidateResourceConfigRequest) (*tfprotov6.ValidateResourceConfigResponse, error) {
	return call(ctx, s, s.framework.ValidateResourceConfig, req)
}

func (s *releasingServer) UpgradeResourceState(ctx context.Context, req *tfprotov6.UpgradeResourceStateRequest) (*tfprotov6.UpgradeResourceStateResponse, error) {
	return call(ctx, s, s.framework.UpgradeResourceState, req)
}

func (s *releasingServer) UpgradeResourceIdentity(ctx context.Context, req *tfprotov6.UpgradeResourceIdentityRequest) (*tfprotov6.UpgradeResourceIdentityResponse, error) {
	return call(ctx, s, s.framework.UpgradeResourceIdentity, req)
}

func (s *releasingServer) ReadResource(ctx context.Context, req *tfprotov6.ReadResourceRequest) (*tfprotov6.ReadResourceResponse, error) {
	return call(ctx, s, s.framework.ReadResource, req)
}

func (s *releasingServer) PlanResourceChange(ctx context.Context, req *tfprotov6.PlanResourceChangeRequest) (*tfprotov6.PlanResourceChangeResponse, error) {
	return call(ctx, s, s.framework.PlanResourceChange, req)
}

func (s *releasingServer) ApplyResourceChange(ctx context.Context, req *tfprotov6.ApplyResourceChangeRequest) (*tfprotov6.ApplyResourceChangeResponse, error) {
	return call(ctx, s, s.framework.ApplyResourceChange, req)
}

func (s *releasingServer) ImportResourceState(ctx context.Context, req *tfprotov6.ImportResourceStateRequest) (*tfprotov6.ImportResourceStateResponse, error) {
	return call(ctx, s, s.framework.ImportResourceState, req)
}

func (s *releasingServer) MoveResourceState(ctx context.Context, req *tfprotov6.MoveResourceStateRequest) (*tfprotov6.MoveResourceStateResponse, error) {
	return call(ctx, s, s.framework.MoveResourceState, req)
}

func (s *releasingServer) GenerateResourceConfig(ctx context.Context, req *tfprotov6.GenerateResourceConfigRequest) (*tfprotov6.GenerateResourceConfigResponse, error) {
	return call(ctx, s, s.framework.GenerateResourceConfig, req)
}

// Data sources.

func (s *releasingServer) ValidateDataResourceConfig(ctx context.Context, req *tfprotov6.ValidateDataResourceConfigRequest) (*tfprotov6.ValidateDataResourceConfigResponse, error) {
	return call(ctx, s, s.framework.ValidateDataResourceConfig, req)
}

func (s *releasingServer) ReadDataSource(ctx context.Context, req *tfprotov6.ReadDataSourceRequest) (*tfprotov6.ReadDataSourceResponse, error) {
	return call(ctx, s, s.framework.ReadDataSource, req)
}

// Functions.

func (s *releasingServer) GetFunctions(ctx context.Context, req *tfprotov6.GetFunctionsRequest) (*tfprotov6.GetFunctionsResponse, error) {
	return call(ctx, s, s.framework.GetFunctions, req)
}

func (s *releasingServer) CallFunction(ctx context.Context, req *tfprotov6.CallFunctionRequest) (*tfprotov6.CallFunctionResponse, error) {
	return call(ctx, s, s.framework.CallFunction, req)
}

// Ephemeral resources.

func (s *releasingServer) ValidateEphemeralResourceConfig(ctx context.Context, req *tfprotov6.ValidateEphemeralResourceConfigRequest) (*tfprotov6.ValidateEphemeralResourceConfigResponse, error) {
	return call(ctx, s, s.framework.ValidateEphemeralResourceConfig, req)
}

func (s *releasingServer) OpenEphemeralResource(ctx context.Context, req *tfprotov6.OpenEphemeralResourceRequest) (*tfprotov6.OpenEphemeralResourceResponse, error) {
	return call(ctx, s, s.framework.OpenEphemeralResource, req)
}

func (s *releasingServer) RenewEphemeralResource(ctx context.Context, req *tfprotov6.RenewEphemeralResourceRequest) (*tfprotov6.RenewEphemeralResourceResponse, error) {
	return call(ctx, s, s.framework.RenewEphemeralResource, req)
}

func (s *releasingServer) CloseEphemeralResource(ctx context.Context, req *tfprotov6.CloseEphemeralResourceRequest) (*tfprotov6.CloseEphemeralResourceResponse, error) {
	return call(ctx, s, s.framework.CloseEphemeralResource, req)
}

// List resources.

func (s *releasingServer) ValidateListResourceConfig(ctx context.Context, req *tfprotov6.ValidateListResourceConfigRequest) (*tfprotov6.ValidateListResourceConfigResponse, error) {
	return call(ctx, s, s.framework.ValidateListResourceConfig, req)
}

// Actions.

func (s *releasingServer) ValidateActionConfig(ctx context.Context, req *tfprotov6.ValidateActionConfigRequest) (*tfprotov6.ValidateActionConfigResponse, error) {
	return call(ctx, s, s.framework.ValidateActionConfig, req)
}

func (s *releasingServer) PlanAction(ctx context.Context, req *tfprotov6.PlanActionRequest) (*tfprotov6.PlanActionResponse, error) {
	return call(ctx, s, s.framework.PlanAction, req)
}

// State stores: this provider has none; the framework answers them.

func (s *releasingServer) ValidateStateStoreConfig(ctx context.Context, req *tfprotov6.ValidateStateStoreConfigRequest) (*tfprotov6.ValidateStateStoreConfigResponse, error) {
	return call(ctx, s, s.framework.ValidateStateStoreConfig, req)
}

func (s *releasingServer) ConfigureStateStore(ctx context.Context, req *tfprotov6.ConfigureStateStoreRequest) (*tfprotov6.ConfigureStateStoreResponse, error) {
	return call(ctx, s, s.framework.ConfigureStateStore, req)
}

func (s *releasingServer) GetStates(ctx context.Context, req *tfprotov6.GetStatesRequest) (*tfprotov6.GetStatesResponse, error) {
	return call(ctx, s, s.framework.GetStates, req)
}

func (s *releasingServer) DeleteState(ctx context.Context, req *tfprotov6.DeleteStateRequest) (*tfprotov6.DeleteStateResponse, error) {
	return call(ctx, s, s.framework.DeleteState, req)
}

func (s *releasingServer) LockState(ctx context.Context, req *tfprotov6.LockStateRequest) (*tfprotov6.LockStateResponse, error) {
	return call(ctx, s, s.framework.LockState, req)
}

func (s *releasingServer) UnlockState(ctx context.Context, req *tfprotov6.UnlockStateRequest) (*tfprotov6.UnlockStateResponse, error) {
	return call(ctx, s, s.framework.UnlockState, req)
}

// WriteStateBytes reads its chunks while it runs, so it can be released.
func (s *releasingServer) WriteStateBytes(ctx context.Context, req *tfprotov6.WriteStateBytesStream) (*tfprotov6.WriteStateBytesResponse, error) {
	return call(ctx, s, s.framework.WriteStateBytes, req)
}
