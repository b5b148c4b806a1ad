package cluster_test

import (
	"testing"

	"github.com/pullpath/pullpath/internal/lab/labtest"
)

// TestMain lets the test binary stand in for pullpath: the lab re-executes
// os.Executable() as `lab serve ...` and `probe ...` inside namespaces.
func TestMain(m *testing.M) { labtest.Main(m) }
