package main

import (
	"io"
	"slices"
	"testing"

	"github.com/ghkdqhrbals/terraform-provider-redisstreamcoordinator/internal/coordinator"
)

func TestParseUser(t *testing.T) {
	u, err := parseUser("ci:pa:ss:read,WRITE")
	if err != nil {
		t.Fatal(err)
	}
	if u.Username != "ci" || u.Password != "pa:ss" || !slices.Equal(u.Roles, []coordinator.Role{coordinator.RoleRead, coordinator.RoleWrite}) {
		t.Fatalf("user = %+v", u)
	}
	for _, bad := range []string{"ci", ":p:READ", "ci:p", "ci:p:OWNER", "ci:p:"} {
		if _, err := parseUser(bad); err == nil {
			t.Errorf("parseUser(%q) accepted", bad)
		}
	}
}

func TestRunRejectsBadFlags(t *testing.T) {
	if err := run([]string{"--user", "nope"}, io.Discard); err == nil {
		t.Fatal("bad --user accepted")
	}
	if err := run([]string{"--addr", "256.0.0.1:1"}, io.Discard); err == nil {
		t.Fatal("unusable --addr accepted")
	}
}
