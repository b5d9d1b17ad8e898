//go:build !unix

package client

import (
	"net"
	"testing"
)

// closedPort is a loopback host:port where nothing listens when returned.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}
