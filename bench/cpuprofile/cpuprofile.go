// Package cpuprofile gives the benchmarks' pull commands (probeonly and the
// ggcr peer) one way to write a CPU profile of the whole process, so the
// two can be compared with `go tool pprof` from one throughput run. It
// imports only the standard library, so the peer links nothing of
// pullpath's; with no path given it starts nothing.
package cpuprofile

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// Start begins a CPU profile written to path; "" does nothing. The
// returned stop ends the profile and closes the file; call it before the
// process exits (os.Exit skips deferred calls).
func Start(path string) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %v", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile %s: %v", path, err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return fmt.Errorf("--cpuprofile %s: %v", path, err)
		}
		return nil
	}, nil
}
