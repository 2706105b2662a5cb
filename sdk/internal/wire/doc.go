// Package wire is the SDK's side of the plugin transport: the batch runner
// every case goes through (bounded concurrency, panic recovery, result
// validation, context cancellation), the gRPC server a plugin serves, and
// the go-plugin plugin value that ties them to the handshake. Only the sdk
// tree imports it, so no transport type reaches a plugin author.
package wire
