// Package sdk is the only package a scorer plugin author imports. A plugin is
// a type with two methods, Describe and Score, and a main that calls Serve:
//
//	func main() { sdk.Serve(myScorer{}) }
//
// The SDK owns the transport (hashicorp/go-plugin over gRPC, protocol 1),
// batching, panic recovery and logging; no go-plugin or protobuf type appears
// in its API.
package sdk
