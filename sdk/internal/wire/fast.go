package wire

import (
	"context"

	"google.golang.org/grpc"

	"github.com/assay-eval/assay/sdk/scorerpb"
)

// The plugin reads a Score request's bytes straight into cases
// (scorerpb.UnmarshalCases) instead of unmarshalling a ScoreRequest and
// converting it: the bytes on the wire are the same protocol-1 message, so
// hosts need no change. docs/protocol.md ("Performance") has the numbers.

// serviceDesc is the generated Scorer service with Score reading its
// request as a scorerpb.RawMessage (the server runs scorerpb.RawCodec).
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
	in := new(scorerpb.RawMessage)
	if err := dec(in); err != nil {
		return nil, err
	}
	s := srv.(*server)
	if interceptor == nil {
		return s.scoreRaw(ctx, in)
	}
	info := &grpc.UnaryServerInfo{Server: srv, FullMethod: scorerpb.Scorer_Score_FullMethodName}
	return interceptor(ctx, in, info, func(ctx context.Context, req any) (any, error) {
		return s.scoreRaw(ctx, req.(*scorerpb.RawMessage))
	})
}
