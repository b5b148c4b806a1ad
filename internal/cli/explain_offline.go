package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/pullpath/pullpath/internal/explain"
	"github.com/pullpath/pullpath/internal/report"
)

// readOffline reads pull-failure messages from a file ('-': stdin) and
// explains them: explain --from, which needs no cluster.
func readOffline(from string, stdin io.Reader) (*report.ExplainReport, error) {
	var (
		in   io.Reader
		name = from
	)
	if from == "-" {
		in, name = stdin, "stdin"
	} else {
		f, err := os.Open(from)
		if err != nil {
			return nil, fmt.Errorf("--from %s: %v", from, errors.Unwrap(err))
		}
		defer f.Close()
		in = f
	}
	format, msgs, err := explain.Parse(in, name)
	if err != nil {
		return nil, err
	}
	r := explain.Analyze(msgs)
	r.Source = fmt.Sprintf("file %s (%s)", name, format)
	return r, nil
}

func oneLineErr(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }
