package clouds

import (
	"testing"

	"github.com/pullpath/pullpath/internal/nodeplace"
)

// Every cloud of the vocabulary has one provider, whole, in the same order.
func TestEveryCloudHasOneProvider(t *testing.T) {
	if len(All) != len(nodeplace.Clouds) {
		t.Fatalf("%d providers for %d clouds (%v)", len(All), len(nodeplace.Clouds), nodeplace.Clouds)
	}
	for i, c := range nodeplace.Clouds {
		p := All[i]
		if p.Cloud != c {
			t.Errorf("All[%d].Cloud = %q, want %q (nodeplace.Clouds' order)", i, p.Cloud, c)
		}
		if p.FromFolder == nil || p.Live == nil || len(p.Permissions) == 0 || p.Outputs == "" || p.Objects == "" {
			t.Errorf("provider %s is not whole: %+v", c, p)
		}
		if got, ok := Of(c); !ok || got.Cloud != c {
			t.Errorf("Of(%q) = %q, %v", c, got.Cloud, ok)
		}
	}
}
