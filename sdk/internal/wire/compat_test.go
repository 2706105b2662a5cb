package wire

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/testing/protocmp"

	"github.com/assay-eval/assay/sdk"
	"github.com/assay-eval/assay/sdk/scorerpb"
)

// echoScorer scores a case by what it received, so a field lost or changed
// on the wire changes the result.
type echoScorer struct{}

func (echoScorer) Describe() sdk.Description {
	return sdk.Description{ID: "echo", Version: "1.0.0", Protocols: []int{scorerpb.ProtocolVersion}}
}

func (echoScorer) Score(_ context.Context, c *sdk.Case) (*sdk.Result, error) {
	var parts []string
	for _, e := range c.Turn.Events {
		parts = append(parts, fmt.Sprintf("%d:%s/%s/%s/%s", e.Line, e.Type, e.Phase, e.EventType, e.ToolName))
	}
	for _, tc := range c.Turn.ToolCalls {
		parts = append(parts, fmt.Sprintf("%s%v", tc.Name, tc.Args))
	}
	parts = append(parts, c.Turn.Answer, c.Task.Label, string(c.Task.KPIs["k"]))
	if c.StateAfter != nil {
		parts = append(parts, fmt.Sprintf("after:%d", len(c.StateAfter.Tasks)))
	}
	// Three checks, the first two with the same evidence (sent as a
	// reference to a host that reads one) and the third with other.
	names := []string{c.Task.Label}
	for _, tc := range c.Turn.ToolCalls {
		names = append(names, tc.Name)
	}
	return &sdk.Result{Score: 0.5, Diagnostics: []string{strings.Join(parts, " ")}, Checks: []sdk.Check{
		{KPI: "a", Passed: true, Evidence: names},
		{KPI: "b", Evidence: append([]string(nil), names...), FailureTag: "t"},
		{KPI: "c", Evidence: []string{c.ID}},
	}}, nil
}

func compatCases() []*sdk.Case {
	after := &sdk.Snapshot{Tasks: []sdk.StateTask{{ID: "t1", Title: "new"}}}
	turn := sdk.Turn{
		Events: []sdk.Event{{Line: 1, Type: "phase", Phase: "skill_dispatch"},
			{Line: 2, Type: "runtime", EventType: "tool_start", ToolName: "search"}, {Line: 3, Type: "done"}},
		ToolCalls: []sdk.ToolCall{{Name: "search", Args: map[string]any{"query": "invoices", "limit": 10.0, "deep": map[string]any{"x": []any{"a", true}}}}},
		Answer:    "found them", Finalized: true,
	}
	var cases []*sdk.Case
	for i := range 5 {
		cases = append(cases, &sdk.Case{ID: fmt.Sprint(i), Task: sdk.Task{Label: fmt.Sprintf("task%d", i%2), KPIs: map[string]json.RawMessage{"k": json.RawMessage(`["x"]`)}}, Turn: turn, StateAfter: after})
	}
	return cases
}

// TestProtocolOnePluginsKeepWorking covers issue 16's compatibility rule:
// the direct readers and writers (scorerpb.MarshalCases, UnmarshalCases for
// the request; AppendResult, UnmarshalResults for the response) speak
// protocol 1 unchanged, so a plugin built against the previous SDK
// (the generated ScoreRequest handler) answers a current host, and a
// current plugin answers a host that still sends a generated ScoreRequest;
// every combination gives the same results, batch after batch (a current
// plugin shares decoded tasks and snapshots across batches, and the bytes
// of a request go back to a pool once read). A current host says it reads
// Check.evidence_from, which a previous plugin ignores and a current one
// uses; a previous host does not, and gets every check's evidence. A
// current host and plugin use scorerpb's transport settings, a previous
// one gRPC's defaults.
func TestProtocolOnePluginsKeepWorking(t *testing.T) {
	t.Parallel()
	cases := compatCases()
	// One case larger than HTTP/2's default window of 64 KB, so that a
	// batch crosses flow control between ends with gRPC's default windows
	// and ends with scorerpb.TransportWindow.
	big := *cases[0]
	big.ID, big.Turn.Answer = "big", strings.Repeat("found them ", 20000)
	cases = append(cases, &big)
	p := &Plugin{Impl: echoScorer{}, Desc: echoScorer{}.Describe(), Logger: hclog.NewNullLogger()}
	servers := map[string]func() *grpc.Server{
		"previous plugin": func() *grpc.Server {
			s := grpc.NewServer()
			scorerpb.RegisterScorerServer(s, &server{s: p.Impl, desc: p.Desc, logger: p.Logger})
			return s
		},
		"current plugin": func() *grpc.Server {
			s := GRPCServerFunc(nil)
			if err := p.GRPCServer(nil, s); err != nil {
				t.Fatal(err)
			}
			return s
		},
	}
	hosts := map[string]func(context.Context, *grpc.ClientConn) (*scorerpb.ScoreResponse, error){
		"previous host": func(ctx context.Context, c *grpc.ClientConn) (*scorerpb.ScoreResponse, error) {
			req, err := scorerpb.EncodeScoreRequest(cases)
			if err != nil {
				return nil, err
			}
			return scorerpb.NewScorerClient(c).Score(ctx, req)
		},
		"current host": func(ctx context.Context, c *grpc.ClientConn) (*scorerpb.ScoreResponse, error) {
			req := scorerpb.NewRawMessage(0)
			var err error
			if req.B, err = scorerpb.MarshalCases(req.B, cases); err != nil {
				return nil, err
			}
			req.B = scorerpb.AppendRequestOptions(req.B, scorerpb.RequestOptions{ReadsEvidenceFrom: true})
			res, err := scorerpb.ScoreRawResults(ctx, c, req)
			if err != nil {
				return nil, err
			}
			resp := &scorerpb.ScoreResponse{}
			for _, r := range res {
				resp.Results = append(resp.Results, scorerpb.ResultToProto(r.CaseID, r.Result, r.Err))
			}
			return resp, nil
		},
	}
	var want *scorerpb.ScoreResponse
	for _, sn := range []string{"previous plugin", "current plugin"} {
		for _, hn := range []string{"previous host", "current host"} {
			lis := bufconn.Listen(1 << 20)
			srv := servers[sn]()
			go srv.Serve(lis)
			opts := []grpc.DialOption{grpc.WithContextDialer(func(context.Context, string) (net.Conn, error) { return lis.Dial() }),
				grpc.WithTransportCredentials(insecure.NewCredentials())}
			if hn == "current host" { // the host's transport settings (pluginhost's launch)
				opts = append(opts, scorerpb.TransportDialOptions()...)
			}
			conn, err := grpc.NewClient("passthrough:///bufnet", opts...)
			if err != nil {
				t.Fatal(err)
			}
			// Twice: a current plugin's second batch reuses the tasks and
			// snapshots of its first (scorerpb.Decoder).
			for round := range 2 {
				got, err := hosts[hn](context.Background(), conn)
				if err != nil {
					t.Fatalf("%s to %s, batch %d: Score error = %v", hn, sn, round+1, err)
				}
				if len(got.GetResults()) != len(cases) || got.GetResults()[0].GetError() != "" {
					t.Fatalf("%s to %s, batch %d: Score = %v, want %d results", hn, sn, round+1, got, len(cases))
				}
				if want == nil {
					want = got
					continue
				}
				if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
					t.Errorf("%s to %s, batch %d: results differ from the previous host to the previous plugin (-want +got):\n%s", hn, sn, round+1, diff)
				}
			}
			conn.Close()
			srv.Stop()
		}
	}
}
