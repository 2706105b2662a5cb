package scorerpb_test

import (
	"testing"

	"github.com/assay-eval/assay/sdk/scorerpb"
	"github.com/assay-eval/assay/sdk/scorerpb/transporttest"
)

// TestTransportDialOptions checks what a client dialled with
// TransportDialOptions (the host's settings for a plugin's connection)
// tells the plugin in its first frames: a fixed stream window of
// TransportWindow in its SETTINGS and a WINDOW_UPDATE that raises the
// connection's window from HTTP/2's 65,535 to TransportWindow.
func TestTransportDialOptions(t *testing.T) {
	transporttest.CheckClient(t, scorerpb.TransportWindow, scorerpb.TransportDialOptions()...)
}
