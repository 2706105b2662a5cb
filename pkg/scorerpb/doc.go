// Package scorerpb is the generated gRPC protocol assay.scorer.v1 (from
// proto/assay/scorer/v1/scorer.proto, regenerated with `make proto`), the
// go-plugin handshake constants, and the conversions between the wire
// messages and package scorer's model.
package scorerpb
