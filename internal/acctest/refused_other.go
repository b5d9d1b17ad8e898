//go:build !unix

package acctest

import (
	"net"
	"testing"
)

// RefusedAddr is a loopback host:port where nothing listens (see the unix
// build's: there the port stays reserved for the test's life; here it is
// only free when returned).
func RefusedAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}
