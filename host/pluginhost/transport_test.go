package pluginhost_test

import (
	"testing"

	"github.com/assay-eval/assay/host/pluginhost"
	"github.com/assay-eval/assay/sdk/scorerpb"
	"github.com/assay-eval/assay/sdk/scorerpb/transporttest"
)

// TestLaunchDialsWithTransportWindows checks that the options the host
// launches a plugin with carry scorerpb's transport settings: a client
// dialled with them announces a stream window of scorerpb.TransportWindow
// in its first SETTINGS frame and raises the connection's window to it.
func TestLaunchDialsWithTransportWindows(t *testing.T) {
	transporttest.CheckClient(t, scorerpb.TransportWindow, pluginhost.DialOptions()...)
}
