//go:build unix

package client

import (
	"fmt"
	"syscall"
	"testing"
)

// closedPort is a loopback host:port where every connection is refused for
// the test's life: a bound TCP socket that never listens, whose port no
// other server can take meanwhile (acctest.RefusedAddr is the same for the
// acceptance tests; this package cannot import it).
func closedPort(t *testing.T) string {
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
	return fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
}
