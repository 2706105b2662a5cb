package wire

import "testing"

func TestRespCap(t *testing.T) {
	for _, tc := range []struct {
		name      string
		perResult int64
		n         int
		want      int
	}{
		{"first response", 0, 64, 0},
		{"from the last response", 300, 64, 300 * 65},
		{"bounded after one large result", 10 << 20, 64, maxRespCap},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := respCap(tc.perResult, tc.n); got != tc.want {
				t.Errorf("respCap(%d, %d) = %d, want %d", tc.perResult, tc.n, got, tc.want)
			}
		})
	}
}
