package testenv

import (
	"context"
	"testing"

	"github.com/pullpath/pullpath/internal/labsvc"
)

// StartStack starts the lab's real registry stack (DNS, registry, token
// and blob hosts, PKI) for t in a temporary directory (unless cfg.Dir is
// set) and stops it when t ends.
func StartStack(t testing.TB, cfg labsvc.StackConfig) *labsvc.Stack {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if cfg.Dir == "" {
		cfg.Dir = t.TempDir()
	}
	st, err := labsvc.StartStack(ctx, cfg)
	if err != nil {
		t.Fatalf("StartStack: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}
