package scorerpb

import (
	"context"

	"google.golang.org/grpc"
	"google.golang.org/grpc/encoding"
	protocodec "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
)

// RawMessage is a message carried as its protobuf bytes: MarshalCases
// writes a Score request into one on the host, and the plugin's server
// reads one with UnmarshalCases. The bytes are an ordinary protocol-1
// ScoreRequest, so either side may be a plugin or host that uses the
// generated messages.
type RawMessage struct{ B []byte }

// RawCodec is gRPC's protobuf codec, except that a *RawMessage is sent as
// its bytes and received as a copy of them. Its name is "proto", so the
// other side sees the ordinary content type.
type RawCodec struct{}

var _ encoding.CodecV2 = RawCodec{}

func (RawCodec) proto() encoding.CodecV2 { return encoding.GetCodecV2(protocodec.Name) }

// Marshal encodes v.
func (c RawCodec) Marshal(v any) (mem.BufferSlice, error) {
	if r, ok := v.(*RawMessage); ok {
		return mem.BufferSlice{mem.SliceBuffer(r.B)}, nil
	}
	return c.proto().Marshal(v)
}

// Unmarshal decodes data into v.
func (c RawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	if r, ok := v.(*RawMessage); ok {
		r.B = data.Materialize()
		return nil
	}
	return c.proto().Unmarshal(data, v)
}

// Name is the codec's content subtype.
func (RawCodec) Name() string { return protocodec.Name }

// ScoreRaw makes one Score call on conn with a request already written
// (by MarshalCases): the same call as ScorerClient.Score with the request
// EncodeScoreRequest builds, without building it.
func ScoreRaw(ctx context.Context, conn grpc.ClientConnInterface, req []byte, opts ...grpc.CallOption) (*ScoreResponse, error) {
	out := new(ScoreResponse)
	opts = append([]grpc.CallOption{grpc.ForceCodecV2(RawCodec{})}, opts...)
	if err := conn.Invoke(ctx, Scorer_Score_FullMethodName, &RawMessage{B: req}, out, opts...); err != nil {
		return nil, err
	}
	return out, nil
}
