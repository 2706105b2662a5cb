package wire

import (
	"net"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/assay-eval/assay/sdk/scorerpb"
)

// TestServerTransportSettings checks what the plugin's server
// (GRPCServerFunc, as go-plugin builds it) tells the host in its first
// frames: a fixed stream window of scorerpb.TransportWindow in its SETTINGS
// and a WINDOW_UPDATE that raises the connection's window from HTTP/2's
// 65,535 to it.
func TestServerTransportSettings(t *testing.T) {
	ln, err := net.Listen("unix", filepath.Join(t.TempDir(), "s"))
	if err != nil {
		t.Fatal(err)
	}
	s := GRPCServerFunc(nil)
	go s.Serve(ln)
	defer s.Stop()
	conn, err := net.Dial("unix", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(time.Minute)) // never a hang, not a timing
	if _, err := conn.Write([]byte(http2.ClientPreface)); err != nil {
		t.Fatal(err)
	}
	fr := http2.NewFramer(conn, conn)
	if err := fr.WriteSettings(); err != nil { // so that the server's ACK follows what it sends first
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
		t.Fatalf("SETTINGS INITIAL_WINDOW_SIZE = %d (set: %v), want %d", v, ok, scorerpb.TransportWindow)
	}
	f, err = fr.ReadFrame()
	if err != nil {
		t.Fatalf("reading the second frame: %v", err)
	}
	wu, ok := f.(*http2.WindowUpdateFrame)
	if !ok || wu.StreamID != 0 {
		t.Fatalf("second frame = %v, want the connection's WINDOW_UPDATE", f.Header())
	}
	if want := uint32(scorerpb.TransportWindow - 65535); wu.Increment != want {
		t.Errorf("connection WINDOW_UPDATE increment = %d, want %d", wu.Increment, want)
	}
}
