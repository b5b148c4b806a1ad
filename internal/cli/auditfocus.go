package cli

import "github.com/pullpath/pullpath/internal/audit"

// probeFocus is an audit's focus: the flags' own (f), with what
// --probe-report FILE says when given (the probed node, the failing host
// and code, the bytes it downloaded, unless --image-size says otherwise).
func probeFocus(file string, f audit.Focus) (audit.Focus, error) {
	if file == "" {
		return f, nil
	}
	p, err := audit.ReadProbeReport(file)
	if err != nil {
		return f, err
	}
	p.Subnets, p.Image, p.PullsPerDay = f.Subnets, f.Image, f.PullsPerDay
	if f.ImageBytes > 0 {
		p.ImageBytes = f.ImageBytes
	}
	return p, nil
}
