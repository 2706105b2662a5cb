package scorerpb

import "github.com/hashicorp/go-plugin"

// The go-plugin handshake every assay scorer plugin and host share. A binary
// started without these values in its environment is not started by assay
// and refuses to serve.
const (
	// ProtocolVersion is the plugin protocol version; additive changes stay in 1.
	ProtocolVersion = 1
	// MagicCookieKey and MagicCookieValue are go-plugin's magic cookie.
	MagicCookieKey   = "ASSAY_SCORER_PLUGIN"
	MagicCookieValue = "4b1d1c5e-assay-scorer-v1-6f0e2a9d"
	// PluginName is the name the one plugin is dispensed under.
	PluginName = "scorer"
	// MaxMessage is the largest gRPC message either side accepts (256 MiB):
	// a batch carries whole turns and snapshots.
	MaxMessage = 256 << 20
)

// Handshake is the go-plugin handshake of the constants above, as the SDK's
// plugin server and the host's client both use it.
var Handshake = plugin.HandshakeConfig{
	ProtocolVersion:  ProtocolVersion,
	MagicCookieKey:   MagicCookieKey,
	MagicCookieValue: MagicCookieValue,
}
