package wire

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/batchrun"
	"github.com/assay-eval/assay/sdk/scorerpb"
)

// server serves one scorer over gRPC.
type server struct {
	scorerpb.UnimplementedScorerServer
	s      batchrun.Scorer
	desc   sdk.Description
	logger hclog.Logger
	limit  int
	dec    *scorerpb.Decoder // shares tasks and snapshots across batches
	// perResult is how many bytes a result took in the last response: the
	// next response's buffer is sized from it rather than grown by copies.
	perResult atomic.Int64
}

func (v *server) Describe(context.Context, *scorerpb.DescribeRequest) (*scorerpb.DescribeResponse, error) {
	return scorerpb.DescriptionToProto(v.desc), nil
}

func (v *server) Score(ctx context.Context, req *scorerpb.ScoreRequest) (*scorerpb.ScoreResponse, error) {
	cases, err := scorerpb.DecodeScoreRequest(req)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "decoding batch: %v", err)
	}
	return response(cases, v.score(ctx, cases)), nil
}

// scoreRaw is Score for the request's bytes, read by the server's
// scorerpb.Decoder (see fast.go); the bytes go back to the transport's pool
// once read. The response is written as bytes too (scorerpb.AppendResult),
// or as the generated message when a result holds a string that is not
// UTF-8, so that it fails as it always did.
func (v *server) scoreRaw(ctx context.Context, req *scorerpb.RawMessage) (any, error) {
	dec := v.dec
	if dec == nil {
		dec = new(scorerpb.Decoder)
	}
	cases, opts, err := dec.UnmarshalRequest(req.B)
	req.Free()
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "decoding batch: %v", err)
	}
	outs := v.score(ctx, cases)
	resp := scorerpb.NewRawMessage(respCap(v.perResult.Load(), len(cases)))
	for i, o := range outs {
		var ok bool
		if resp.B, ok = scorerpb.AppendResultFor(resp.B, opts, cases[i].ID, o.Result, o.Err); !ok {
			return response(cases, outs), nil
		}
	}
	v.perResult.Store(int64(len(resp.B) / max(len(cases), 1)))
	return resp, nil
}

// maxRespCap bounds the buffer a response starts with: one batch of large
// results must not make every later batch reserve that much up front (a
// larger response still grows by append).
const maxRespCap = 4 << 20

// respCap is the buffer a response of n results starts with: the last
// response's bytes a result for each of them and one more, at most
// maxRespCap.
func respCap(perResult int64, n int) int {
	return int(min(perResult*int64(n+1), maxRespCap))
}

// score scores the cases and logs the ones that failed.
func (v *server) score(ctx context.Context, cases []*sdk.Case) []batchrun.Outcome {
	outs := batchrun.Score(ctx, v.s, cases, v.limit)
	cancelled := 0
	for i, o := range outs {
		if o.Err != nil && ctx.Err() != nil && errors.Is(o.Err, ctx.Err()) {
			cancelled++
		} else if o.Err != nil {
			args := []any{"case", cases[i].ID, "error", o.Err}
			if p, ok := o.Err.(*batchrun.PanicError); ok {
				args = append(args, "stack", string(p.Stack))
			}
			v.logger.Error("case failed", args...)
		}
	}
	if cancelled > 0 {
		v.logger.Info("batch cancelled by the host", "cases", cancelled, "error", ctx.Err())
	}
	return outs
}

// response is the generated message of the outcomes.
func response(cases []*sdk.Case, outs []batchrun.Outcome) *scorerpb.ScoreResponse {
	resp := &scorerpb.ScoreResponse{Results: make([]*scorerpb.Result, len(cases))}
	for i, o := range outs {
		resp.Results[i] = scorerpb.ResultToProto(cases[i].ID, o.Result, o.Err)
	}
	return resp
}

// Plugin is the go-plugin value for the scorer plugin, on both sides: a
// plugin sets Impl and serves it; a client dispenses a
// scorerpb.ScorerClient.
type Plugin struct {
	plugin.NetRPCUnsupportedPlugin
	Impl   batchrun.Scorer
	Desc   sdk.Description // what Describe answers (Impl's, with the SDK's fields filled in)
	Logger hclog.Logger
	Limit  int // cases scored at once per batch; 0 = batchrun.Limit()
}

// GRPCServer registers the scorer service.
func (p *Plugin) GRPCServer(_ *plugin.GRPCBroker, s *grpc.Server) error {
	logger := p.Logger
	if logger == nil {
		logger = hclog.NewNullLogger()
	}
	dec := &scorerpb.Decoder{NoToolArgs: p.Desc.NeedsPart(sdk.NeedNoToolArgs) || scorerpb.ReadsListedArgs(p.Desc)}
	s.RegisterService(serviceDesc(), &server{s: p.Impl, desc: p.Desc, logger: logger, limit: p.Limit, dec: dec})
	return nil
}

// GRPCClient returns a scorerpb.ScorerClient on the plugin's connection.
func (p *Plugin) GRPCClient(_ context.Context, _ *plugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return scorerpb.NewScorerClient(c), nil
}

// Plugins is the VersionedPlugins map for p.
func Plugins(p *Plugin) map[int]plugin.PluginSet {
	return map[int]plugin.PluginSet{scorerpb.ProtocolVersion: {scorerpb.PluginName: p}}
}

// GRPCServerFunc builds the plugin's gRPC server with message limits large
// enough for big batches and scorerpb's transport settings. Calls run on a
// few long-lived workers rather than a new goroutine each, so the stack a
// batch's decoding grows serves the next batch.
func GRPCServerFunc(opts []grpc.ServerOption) *grpc.Server {
	opts = append(opts, grpc.MaxRecvMsgSize(scorerpb.MaxMessage), grpc.MaxSendMsgSize(scorerpb.MaxMessage), grpc.ForceServerCodecV2(scorerpb.RawCodec{}),
		grpc.NumStreamWorkers(uint32(runtime.GOMAXPROCS(0))))
	return grpc.NewServer(append(opts, scorerpb.TransportServerOptions()...)...)
}
