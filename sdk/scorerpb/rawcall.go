package scorerpb

import (
	"context"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/encoding"
	protocodec "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
)

// RawMessage is a message carried as its protobuf bytes: MarshalCases
// writes a Score request into one on the host, and the plugin's server
// reads one with UnmarshalCases. The bytes are an ordinary protocol-1
// ScoreRequest, so either side may be a plugin or host that uses the
// generated messages.
type RawMessage struct {
	B []byte

	// pooled: B came from the transport's buffer pool (NewRawMessage), and
	// the transport returns it there once it has written it.
	pooled bool
	// buf holds a received B; Free gives it back.
	buf mem.Buffer
}

// NewRawMessage returns a message whose bytes are written into a buffer of
// at least size bytes from the transport's pool: append to B, and send the
// message once; the transport returns the buffer to the pool when it has
// written it, so B must not be used after the call.
func NewRawMessage(size int) *RawMessage {
	p := batchPool.Get(size)
	return &RawMessage{B: (*p)[:0], pooled: true}
}

// batchPool holds the buffers of whole requests. Unlike gRPC's default pool
// it does not clear a buffer it hands out: every byte of it is written
// (MarshalCases appends, MaterializeToBuffer copies) before it is read.
var batchPool mem.BufferPool = &bytePool{}

type bytePool struct{ p sync.Pool }

func (b *bytePool) Get(size int) *[]byte {
	if v, ok := b.p.Get().(*[]byte); ok && cap(*v) >= size {
		*v = (*v)[:size]
		return v
	}
	buf := make([]byte, size)
	return &buf
}

func (b *bytePool) Put(buf *[]byte) { b.p.Put(buf) }

// Free releases the bytes of a received message to the transport's pool;
// B must not be used afterwards. Anything decoded from B must not point
// into it (UnmarshalCases and Decoder copy what they keep).
func (r *RawMessage) Free() {
	if r.buf != nil {
		r.buf.Free()
		r.buf = nil
	}
	r.B = nil
}

// RawCodec is gRPC's protobuf codec, except that a *RawMessage is sent as
// its bytes and received into a buffer it holds until Free. Its name is
// "proto", so the other side sees the ordinary content type.
type RawCodec struct{}

var _ encoding.CodecV2 = RawCodec{}

func (RawCodec) proto() encoding.CodecV2 { return encoding.GetCodecV2(protocodec.Name) }

// Marshal encodes v.
func (c RawCodec) Marshal(v any) (mem.BufferSlice, error) {
	if r, ok := v.(*RawMessage); ok {
		if r.pooled {
			b := r.B
			r.B, r.pooled = nil, false
			return mem.BufferSlice{mem.NewBuffer(&b, batchPool)}, nil
		}
		return mem.BufferSlice{mem.SliceBuffer(r.B)}, nil
	}
	return c.proto().Marshal(v)
}

// Unmarshal decodes data into v.
func (c RawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	if r, ok := v.(*RawMessage); ok {
		r.buf = data.MaterializeToBuffer(batchPool)
		r.B = r.buf.ReadOnlyData()
		return nil
	}
	return c.proto().Unmarshal(data, v)
}

// Name is the codec's content subtype.
func (RawCodec) Name() string { return protocodec.Name }

// ScoreRawResults is ScoreRaw reading the response's bytes straight into
// results (UnmarshalResults). A response it cannot read fails the call as
// one the generated code cannot read does.
func ScoreRawResults(ctx context.Context, conn grpc.ClientConnInterface, req *RawMessage, opts ...grpc.CallOption) ([]WireResult, error) {
	out := new(RawMessage)
	opts = append([]grpc.CallOption{grpc.ForceCodecV2(RawCodec{})}, opts...)
	if err := conn.Invoke(ctx, Scorer_Score_FullMethodName, req, out, opts...); err != nil {
		return nil, err
	}
	defer out.Free()
	res, err := UnmarshalResults(out.B)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "grpc: failed to unmarshal the received message: %v", err)
	}
	return res, nil
}

// ScoreRaw makes one Score call on conn with a request already written
// (by MarshalCases): the same call as ScorerClient.Score with the request
// EncodeScoreRequest builds, without building it. A request from
// NewRawMessage goes back to the pool once written.
func ScoreRaw(ctx context.Context, conn grpc.ClientConnInterface, req *RawMessage, opts ...grpc.CallOption) (*ScoreResponse, error) {
	out := new(ScoreResponse)
	opts = append([]grpc.CallOption{grpc.ForceCodecV2(RawCodec{})}, opts...)
	if err := conn.Invoke(ctx, Scorer_Score_FullMethodName, req, out, opts...); err != nil {
		return nil, err
	}
	return out, nil
}
