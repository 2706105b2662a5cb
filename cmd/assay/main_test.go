package main

import "testing"

func TestHeapSampling(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		env        map[string]string
		rate, want int
	}{
		"no profile":              {env: nil, rate: 512 * 1024, want: 0},
		"empty profile path":      {env: map[string]string{"ASSAY_MEMPROFILE": ""}, rate: 512 * 1024, want: 0},
		"profile":                 {env: map[string]string{"ASSAY_MEMPROFILE": "heap.out"}, rate: 512 * 1024, want: 512 * 1024},
		"profile, GODEBUG's rate": {env: map[string]string{"ASSAY_MEMPROFILE": "heap.out"}, rate: 1, want: 1},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if got := heapSampling(func(k string) string { return tc.env[k] }, tc.rate); got != tc.want {
				t.Errorf("heapSampling(%v, %d) = %d, want %d", tc.env, tc.rate, got, tc.want)
			}
		})
	}
}
