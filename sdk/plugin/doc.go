// Package plugin serves a scorer as an assay plugin binary. Its Serve is the
// whole main of a plugin:
//
//	func main() { plugin.Serve(myScorer{}) }
//
// It owns the transport (hashicorp/go-plugin over gRPC, protocol 1, see
// docs/protocol.md), batching, panic recovery and logging; no go-plugin or
// protobuf type appears in its API or in package sdk's.
package plugin
