package pluginhost_test

import (
	"io"
	"net"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/assay-eval/assay/host/pluginhost"
	"github.com/assay-eval/assay/sdk/scorerpb"
)

// TestLaunchDialsWithTransportWindows checks that the options the host
// launches a plugin with carry scorerpb's transport settings: a client
// dialled with them announces a stream window of scorerpb.TransportWindow
// in its first SETTINGS frame and raises the connection's window to it.
func TestLaunchDialsWithTransportWindows(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cc, err := grpc.NewClient("unix://"+sock, append(pluginhost.DialOptions(),
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
	if v, ok := sf.Value(http2.SettingInitialWindowSize); !ok || v != scorerpb.TransportWindow {
		t.Errorf("SETTINGS INITIAL_WINDOW_SIZE = %d (set: %v), want %d", v, ok, scorerpb.TransportWindow)
	}
	if f, err = fr.ReadFrame(); err != nil {
		t.Fatalf("reading the second frame: %v", err)
	}
	if wu, ok := f.(*http2.WindowUpdateFrame); !ok || wu.StreamID != 0 || wu.Increment != scorerpb.TransportWindow-65535 {
		t.Errorf("second frame = %v, want the connection's WINDOW_UPDATE to %d", f.Header(), scorerpb.TransportWindow)
	}
}
