package controlplane

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/pullpath/pullpath/internal/testenv"
)

// Shared is one control plane for every test of a package, started from
// TestMain:
//
//	var shared controlplane.Shared
//	func TestMain(m *testing.M) { os.Exit(shared.Main(m)) }
//	func TestX(t *testing.T) { c := shared.Client(t); ... }
//
// When the binaries are missing, each test that asks for it skips with
// "run hack/controlplane.sh", or fails under CI=true.
type Shared struct {
	// CP is the running control plane (nil when it could not start).
	CP     *ControlPlane
	err    error
	skip   string
	client kubernetes.Interface
}

// Main starts the control plane, runs the tests, stops it, and returns the
// exit code for os.Exit.
func (s *Shared) Main(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	s.CP, s.err = Start(ctx, Options{})
	cancel()
	if s.err != nil && errors.Is(s.err, ErrBinariesMissing) && !testenv.CI() {
		s.skip, s.err = s.err.Error(), nil
	}
	if s.CP != nil {
		s.client, s.err = s.CP.Client()
	}
	code := m.Run()
	if s.CP != nil {
		if err := s.CP.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "stop control plane: %v\n", err)
		}
	}
	return code
}

// Client is the admin clientset, or skips (fails under CI=true) t when the
// control plane could not start.
func (s *Shared) Client(t testing.TB) kubernetes.Interface {
	t.Helper()
	if s.skip != "" {
		t.Skipf("real control plane unavailable, run hack/controlplane.sh: %s", s.skip)
	}
	if s.err != nil {
		t.Fatalf("control plane: %v", s.err)
	}
	return s.client
}
