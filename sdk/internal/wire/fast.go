package wire

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	protocodec "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"

	"github.com/assay-eval/assay/sdk/scorerpb"
)

// The plugin reads a Score request's bytes straight into cases
// (scorerpb.UnmarshalCases) instead of unmarshalling a ScoreRequest and
// converting it: the bytes on the wire are the same protocol-1 message, so
// hosts need no change. docs/protocol.md ("Performance") has the numbers.

// rawMessage is a message kept as its protobuf bytes.
type rawMessage struct{ b []byte }

// rawCodec is gRPC's protobuf codec, except that a *rawMessage is filled
// with a copy of the bytes received.
type rawCodec struct{}

func (rawCodec) proto() encoding.CodecV2 { return encoding.GetCodecV2(protocodec.Name) }

func (c rawCodec) Marshal(v any) (mem.BufferSlice, error) { return c.proto().Marshal(v) }

func (c rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	if r, ok := v.(*rawMessage); ok {
		r.b = data.Materialize()
		return nil
	}
	return c.proto().Unmarshal(data, v)
}

func (rawCodec) Name() string { return protocodec.Name }

// serviceDesc is the generated Scorer service with Score decoding through
// rawMessage.
func serviceDesc() *grpc.ServiceDesc {
	d := scorerpb.Scorer_ServiceDesc
	d.Methods = append([]grpc.MethodDesc(nil), d.Methods...)
	for i := range d.Methods {
		if d.Methods[i].MethodName == "Score" {
			d.Methods[i].Handler = scoreHandler
		}
	}
	return &d
}

func scoreHandler(srv any, ctx context.Context, dec func(any) error, interceptor grpc.UnaryServerInterceptor) (any, error) {
	in := new(rawMessage)
	if err := dec(in); err != nil {
		return nil, err
	}
	s := srv.(*server)
	if interceptor == nil {
		return s.scoreRaw(ctx, in)
	}
	info := &grpc.UnaryServerInfo{Server: srv, FullMethod: scorerpb.Scorer_Score_FullMethodName}
	return interceptor(ctx, in, info, func(ctx context.Context, req any) (any, error) {
		return s.scoreRaw(ctx, req.(*rawMessage))
	})
}
