// Package wire is the SDK's side of the plugin transport: the gRPC server a
// plugin serves (each batch through package batchrun's runner), and the
// go-plugin plugin value that ties it to the handshake. Only the sdk
// tree imports it, so no transport type reaches a plugin author.
package wire
