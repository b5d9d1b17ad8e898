//go:build unix

package acctest

import (
	"errors"
	"net"
	"syscall"
	"testing"
)

// RefusedAddr refuses connections, and no server can take its port while
// the test runs.
func TestRefusedAddr(t *testing.T) {
	addr := RefusedAddr(t)
	if _, err := net.Dial("tcp", addr); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial %s: %v, want connection refused", addr, err)
	}
	if l, err := net.Listen("tcp", addr); err == nil {
		_ = l.Close()
		t.Fatalf("a server could listen on %s while it is reserved", addr)
	}
}
