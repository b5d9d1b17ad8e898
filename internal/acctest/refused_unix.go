//go:build unix

package acctest

import (
	"fmt"
	"syscall"
	"testing"
)

// RefusedAddr is a loopback host:port where every connection is refused,
// for the test's whole life: a TCP socket bound there and never listening.
// A port merely listened on and closed again can be handed to another
// test's server before the dial (a parallel run's coordinator answered a
// plan meant to fail so); a bound port is not handed out while the socket
// lives (no SO_REUSEADDR), and a connection to it is refused.
func RefusedAddr(t testing.TB) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	in4, ok := sa.(*syscall.SockaddrInet4)
	if !ok {
		t.Fatalf("the reserved socket's address is %T, want an IPv4 one", sa)
	}
	return fmt.Sprintf("127.0.0.1:%d", in4.Port)
}
