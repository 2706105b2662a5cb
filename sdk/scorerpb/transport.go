package scorerpb

import "google.golang.org/grpc"

// The HTTP/2 transport settings of a plugin's connection, on both ends: the
// host dials with TransportDialOptions, the SDK's server serves with
// TransportServerOptions. A batch is tens to hundreds of KB (a 64-case
// tool_sequence batch about 50 KB, its answer about 60 KB; 64 full
// 200-event turns about 400 KB), on a local socket with next to no latency.
// With gRPC's defaults (32 KB read and write buffers, a 64 KB window grown
// by BDP pings) each such message took several reads and writes on each
// side, window updates and a BDP ping and its ack; with these a call
// takes about 22 system calls of both processes instead of 37
// (docs/performance.md, "The plugin boundary", "Eleventh round").
//
// Each end sets only what it receives (its windows) and how it reads and
// writes its own socket, so a host or plugin built with gRPC's defaults is
// served as before: the other end keeps its defaults for its own side.
const (
	// TransportWindow is the flow-control window a receiver grants, for a
	// stream and for the connection. It is fixed (gRPC's dynamic window and
	// its BDP pings are off) and larger than any batch of ordinary turns, so
	// a message is sent without waiting for WINDOW_UPDATE frames. It bounds
	// what a sender may have in flight unread, not what is allocated.
	TransportWindow = 4 << 20
	// TransportBuffer is the size of the reads and of the writes gRPC makes
	// on the socket. The buffers are gRPC's pooled ones, taken for a read
	// that has data and for a write until it is flushed, not held by an idle
	// connection.
	TransportBuffer = 256 << 10
)

// TransportDialOptions are the host's transport settings for a plugin's
// connection.
func TransportDialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithInitialWindowSize(TransportWindow),
		grpc.WithInitialConnWindowSize(TransportWindow),
		grpc.WithReadBufferSize(TransportBuffer),
		grpc.WithWriteBufferSize(TransportBuffer),
	}
}

// TransportServerOptions are the plugin's transport settings for its
// server.
func TransportServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.InitialWindowSize(TransportWindow),
		grpc.InitialConnWindowSize(TransportWindow),
		grpc.ReadBufferSize(TransportBuffer),
		grpc.WriteBufferSize(TransportBuffer),
	}
}
