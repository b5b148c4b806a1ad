//go:build !linux

package netcheck

import "errors"

// setMSS needs Linux's TCP_MAXSEG here.
func setMSS(uintptr, int) error { return errors.New("clamping the MSS (TCP_MAXSEG) needs Linux") }
