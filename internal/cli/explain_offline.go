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

var explainLong = `Read what the kubelet and the container runtime say about failed pulls, and
compare the nodes where an image fails with the nodes where it runs.

Each pull-failure message (kubelet event or runtime log line) is read into a
stage, cause, code and repair direction (route, dns, endpoint-set,
tls-identity, image, registry), with the endpoint that failed: the registry,
its token service, or the blob storage it redirects layers to. Messages that
cannot tell two causes apart (pull access denied: missing or unauthorized)
say so.

In a cluster, failing and healthy nodes are compared by subnet, zone, pool
and creation time. A healthy replica on a node that already had the image
proves nothing: its node served the image from cache.

Exit codes: 0 no pull failure found; otherwise the code of the dominant
condition: ` + exitConditions() + `,
2 failures outside these directions (for example only back-off events);
1 usage or input error.`

const explainExample = `  # every pod with a pull failure in a namespace
  pullpath explain -n shop

  # one pod, one deployment (and its pods), every namespace
  pullpath explain pod web-7c9f-abcde -n shop
  pullpath explain deployment web -n shop
  pullpath explain -A -o json

  # offline: a support bundle's events, a describe output, or log lines
  kubectl get events -A -o json > events.json && pullpath explain --from events.json
  kubectl describe pod web-7c9f-abcde | pullpath explain --from -
  pullpath explain --from containerd.log -o yaml`

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
