package lab_test

import (
	"context"
	"os"
	"testing"

	"github.com/pullpath/pullpath/internal/cli"
)

// TestMain lets the test binary stand in for pullpath: the lab re-executes
// os.Executable() as `lab serve ...` and `probe ...` inside namespaces.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && (os.Args[1] == "lab" || os.Args[1] == "probe") {
		os.Exit(cli.Run(context.Background(), append([]string{"pullpath"}, os.Args[1:]...),
			cli.Streams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}))
	}
	os.Exit(m.Run())
}
