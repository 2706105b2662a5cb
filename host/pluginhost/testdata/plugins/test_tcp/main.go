// Command test_tcp serves a scorer on a TCP port of 127.0.0.1, as go-plugin
// does on Windows, although the host asked for a Unix socket: the host must
// refuse to connect.
package main

import (
	"fmt"
	"net"
	"os"
	"time"

	"google.golang.org/grpc"
)

func main() {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("1|1|tcp|%s|grpc\n", l.Addr())
	go grpc.NewServer().Serve(l)
	time.Sleep(time.Minute)
}
