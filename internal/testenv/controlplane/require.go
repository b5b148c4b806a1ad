package controlplane

import (
	"errors"
	"testing"

	"github.com/pullpath/pullpath/internal/testenv"
)

// Require starts a control plane for t and stops it when t ends, printing
// its logs if t failed. When the binaries are missing it skips t with
// "run hack/controlplane.sh", or fails t when CI=true. Any other start
// error fails t with the reason.
func Require(t testing.TB) *ControlPlane {
	t.Helper()
	c, err := Start(t.Context(), Options{})
	if err != nil {
		if errors.Is(err, ErrBinariesMissing) && !testenv.CI() {
			t.Skipf("real control plane unavailable, run hack/controlplane.sh: %v", err)
		}
		t.Fatalf("start control plane: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("control-plane logs:\n%s", c.Logs())
		}
		if err := c.Stop(); err != nil {
			t.Errorf("stop control plane: %v", err)
		}
	})
	return c
}
