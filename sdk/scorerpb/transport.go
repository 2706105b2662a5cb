package scorerpb

import "google.golang.org/grpc"

// The HTTP/2 flow-control windows of a plugin's connection, on both ends:
// the host dials with TransportDialOptions, the SDK's server serves with
// TransportServerOptions. A batch is tens to hundreds of KB (a 64-case
// tool_sequence batch about 50 KB, its answer about 60 KB; 64 full
// 200-event turns about 400 KB), on a local socket with next to no
// latency. With gRPC's default window (64 KB, grown by BDP pings) a large
// message waited for the receiver's WINDOW_UPDATE frames, and every call
// carried a BDP ping and its ack (docs/performance.md, "The plugin
// boundary", "Eleventh round"; larger read and write buffers were tried
// there too and not kept: they raised the answers run's peak).
//
// Each end sets only the windows it grants (what it receives), so a host
// or plugin built with gRPC's defaults is served as before: the other end
// keeps its defaults for its own side.

// TransportWindow is the flow-control window a receiver grants, for a
// stream and for the connection. It is fixed (gRPC's dynamic window and
// its BDP pings are off) and larger than any batch of ordinary turns, so
// a message is sent without waiting for WINDOW_UPDATE frames. Nothing is
// allocated by the window's size: it is how much a sender may send on a
// stream before the receiver's reader has started on it (once a read
// starts, gRPC opens the window to the whole message whatever its size).
// The connection's window does not bound the streams' total: gRPC gives
// it back as data arrives, not as it is read. So what a host may hold
// unread is at most TransportWindow a call in flight, and only until its
// answer's read starts (the host waits in it for every call it makes).
const TransportWindow = 4 << 20

// TransportDialOptions are the host's transport settings for a plugin's
// connection.
func TransportDialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithInitialWindowSize(TransportWindow),
		grpc.WithInitialConnWindowSize(TransportWindow),
	}
}

// TransportServerOptions are the plugin's transport settings for its
// server.
func TransportServerOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.InitialWindowSize(TransportWindow),
		grpc.InitialConnWindowSize(TransportWindow),
	}
}
