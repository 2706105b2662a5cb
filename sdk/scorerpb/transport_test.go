package scorerpb_test

import (
	"io"
	"net"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/assay-eval/assay/sdk/scorerpb"
)

// TestTransportDialOptions checks what a client dialled with
// TransportDialOptions (the host's settings for a plugin's connection)
// tells the plugin in its first frames: a fixed stream window of
// TransportWindow in its SETTINGS and a WINDOW_UPDATE that raises the
// connection's window from HTTP/2's 65,535 to TransportWindow.
func TestTransportDialOptions(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cc, err := grpc.NewClient("unix://"+sock, append(scorerpb.TransportDialOptions(),
		grpc.WithTransportCredentials(insecure.NewCredentials()))...)
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
	fr := http2.NewFramer(conn, conn)
	if err := fr.WriteSettings(); err != nil { // so that the client's next frame comes, WINDOW_UPDATE or not
		t.Fatal(err)
	}
	checkTransportFrames(t, fr, scorerpb.TransportWindow)
}

// checkTransportFrames reads a peer's first frames from fr, once the peer
// has had our SETTINGS: its SETTINGS must set INITIAL_WINDOW_SIZE to
// window, and its next frame must be the WINDOW_UPDATE that raises the
// connection's window by window-65535 (not the ACK of our SETTINGS).
func checkTransportFrames(t *testing.T, fr *http2.Framer, window uint32) {
	t.Helper()
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
