package nodecli

import (
	"io"

	"github.com/pullpath/pullpath/internal/probeopts"
)

// ParseProbe is parseProbe for the tests.
func ParseProbe(args []string) (*probeopts.Options, error) {
	return parseProbe("pullpath-agent", args, nil, io.Discard)
}
