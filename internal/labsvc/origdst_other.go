//go:build !linux

package labsvc

import (
	"errors"
	"net"
)

// originalDst needs Linux's SO_ORIGINAL_DST.
func originalDst(net.Conn) (string, error) {
	return "", errors.New("the SNI filter needs Linux (SO_ORIGINAL_DST)")
}
