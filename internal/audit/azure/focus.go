package azure

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// ReadProbeReport reads a `pullpath probe -o json` report into a Focus: the
// probed node (its name gives its pool: aks-POOL-12345678-vmss000000) and
// the host that failed, with the probe's code.
func ReadProbeReport(path string) (*Focus, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--probe-report %s: %v", path, errors.Unwrap(err))
	}
	defer f.Close()
	return ParseProbeReport(f, path)
}

// ParseProbeReport reads a probe report from r; name is for messages.
func ParseProbeReport(r io.Reader, name string) (*Focus, error) {
	var pr report.ProbeReport
	if err := json.NewDecoder(io.LimitReader(r, 64<<20)).Decode(&pr); err != nil {
		return nil, fmt.Errorf("--probe-report %s: not JSON (%s): want `pullpath probe IMAGE -o json`", name, oneLine(err.Error()))
	}
	if pr.Kind != "ProbeReport" {
		return nil, fmt.Errorf("--probe-report %s: kind %q, want ProbeReport (`pullpath probe IMAGE -o json`)", name, pr.Kind)
	}
	fo := &Focus{Node: pr.Node, Pool: PoolOfNode(pr.Node), Code: pr.Verdict.Code, Role: pr.Verdict.Role}
	host := pr.Verdict.Endpoint
	if host == "" {
		host = pr.Reference.Host
	}
	if h, _, ok := strings.Cut(host, ":"); ok {
		host = h
	}
	fo.Host = strings.ToLower(host)
	if pr.Verdict.Status == verdict.StatusOK {
		fo.Code = verdict.OK
	}
	return fo, nil
}
