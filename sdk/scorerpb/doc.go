// Package scorerpb is the generated gRPC protocol assay.scorer.v1 (from
// proto/assay/scorer/v1/scorer.proto, regenerated with `make proto`), the
// go-plugin handshake constants, the conversions between the wire messages
// and package sdk's model, and the fast JSON codec of tool-call arguments.
// Both sides use it: the SDK's plugin server and the host's client. It is
// not for plugin authors, who import package sdk only (docs/protocol.md
// describes the protocol for authors in other languages).
package scorerpb
