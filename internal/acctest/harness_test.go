package acctest

import (
	"context"
	"testing"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/client"
)

// metadataVersionAfterOneScale creates a group on a fresh in-repo
// coordinator, scales it once and returns its metadataVersion.
func metadataVersionAfterOneScale(t *testing.T) int64 {
	t.Helper()
	t.Setenv(EnvEndpoint, "")
	env := New(t, Options{})
	c, ctx := env.Client(), context.Background()
	n := int32(2)
	if _, err := c.CreateGroup(ctx, "orders", "svc", &n, client.Mutation{Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ScaleStream(ctx, "orders", 3, client.Mutation{Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	g, err := c.GetGroup(ctx, "orders", "svc")
	if err != nil {
		t.Fatal(err)
	}
	return g.MetadataVersion
}

func TestNumberingFromTheEnvironment(t *testing.T) {
	t.Setenv(EnvNumbering, "")
	if v := metadataVersionAfterOneScale(t); v != 2 {
		t.Errorf("default numbering: metadataVersion %d after one scale, want 2", v)
	}
	t.Setenv(EnvNumbering, "alternative")
	if v := metadataVersionAfterOneScale(t); v != 4 {
		t.Errorf("%s=alternative: metadataVersion %d after one scale, want 4 (stride 3)", EnvNumbering, v)
	}
}
