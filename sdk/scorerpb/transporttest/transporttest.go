// Package transporttest reads the HTTP/2 settings a gRPC peer announces
// in its first frames, for tests of a plugin connection's transport
// settings (scorerpb.TransportDialOptions on the host's side,
// scorerpb.TransportServerOptions on the plugin's): the SDK's own tests
// and the host's use it, so that each checks its end the same way.
package transporttest

import (
	"io"
	"net"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// CheckClient dials a Unix socket of its own with opts (and no TLS), as
// a host dials a plugin, and checks what the client announces first: a
// stream window of window in its SETTINGS and a WINDOW_UPDATE that raises
// the connection's window from HTTP/2's 65,535 to window.
func CheckClient(t testing.TB, window uint32, opts ...grpc.DialOption) {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cc, err := grpc.NewClient("unix://"+sock, append(opts, grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Close()
	cc.Connect()
	conn, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(time.Minute)) // never a hang, not a timing
	preface := make([]byte, len(http2.ClientPreface))
	if _, err := io.ReadFull(conn, preface); err != nil || string(preface) != http2.ClientPreface {
		t.Fatalf("client preface = %q, %v", preface, err)
	}
	checkFrames(t, conn, window)
}

// CheckServer serves srv on a Unix socket of its own, as a plugin serves
// its host, connects, and checks what the server announces first: a
// stream window of window in its SETTINGS and a WINDOW_UPDATE that raises
// the connection's window from HTTP/2's 65,535 to window.
func CheckServer(t testing.TB, window uint32, srv *grpc.Server) {
	t.Helper()
	ln, err := net.Listen("unix", filepath.Join(t.TempDir(), "s"))
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	defer srv.Stop()
	conn, err := net.Dial("unix", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(time.Minute)) // never a hang, not a timing
	if _, err := conn.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	checkFrames(t, conn, window)
}

// checkFrames sends our SETTINGS on conn, so that the peer's next frame
// comes (WINDOW_UPDATE or the ACK of ours), then reads the peer's first
// two frames: its SETTINGS must set INITIAL_WINDOW_SIZE to window, and its
// next frame must be the WINDOW_UPDATE that raises the connection's window
// by window-65535.
func checkFrames(t testing.TB, conn net.Conn, window uint32) {
	t.Helper()
	fr := http2.NewFramer(conn, conn)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	f, err := fr.ReadFrame()
	if err != nil {
		t.Fatalf("reading the first frame: %v", err)
	}
	sf, ok := f.(*http2.SettingsFrame)
	if !ok || sf.IsAck() {
		t.Fatalf("first frame = %v, want SETTINGS", f.Header())
	}
	if v, ok := sf.Value(http2.SettingInitialWindowSize); !ok || v != window {
		t.Fatalf("SETTINGS INITIAL_WINDOW_SIZE = %d (set: %v), want %d", v, ok, window)
	}
	f, err = fr.ReadFrame()
	if err != nil {
		t.Fatalf("reading the second frame: %v", err)
	}
	wu, ok := f.(*http2.WindowUpdateFrame)
	if !ok || wu.StreamID != 0 {
		t.Fatalf("second frame = %v, want the connection's WINDOW_UPDATE", f.Header())
	}
	if want := window - 65535; wu.Increment != want {
		t.Errorf("connection WINDOW_UPDATE increment = %d, want %d", wu.Increment, want)
	}
}
