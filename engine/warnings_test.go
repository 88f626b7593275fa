package engine_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pgxsafety/pgxsafety/engine"
)

func TestCapWarnings(t *testing.T) {
	list := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprint("w", i)
		}
		return out
	}
	for _, n := range []int{0, 1, engine.MaxWarnings} {
		if got := engine.CapWarnings(list(n)); !cmp.Equal(got, list(n)) {
			t.Errorf("%d warnings changed: %v", n, got)
		}
	}
	got := engine.CapWarnings(list(engine.MaxWarnings + 50))
	want := append(list(engine.MaxWarnings-1), fmt.Sprintf("51 more warnings are not shown (at most %d are listed per answer)", engine.MaxWarnings))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cut (-want +got):\n%s", diff)
	}
}
