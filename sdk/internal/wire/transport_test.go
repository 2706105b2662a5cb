package wire

import (
	"testing"

	"github.com/assay-eval/assay/sdk/scorerpb"
	"github.com/assay-eval/assay/sdk/scorerpb/transporttest"
)

// TestServerTransportSettings checks what the plugin's server
// (GRPCServerFunc, as go-plugin builds it) tells the host in its first
// frames: a fixed stream window of scorerpb.TransportWindow in its SETTINGS
// and a WINDOW_UPDATE that raises the connection's window from HTTP/2's
// 65,535 to it.
func TestServerTransportSettings(t *testing.T) {
	transporttest.CheckServer(t, scorerpb.TransportWindow, GRPCServerFunc(nil))
}
