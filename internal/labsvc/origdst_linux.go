package labsvc

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"

	"golang.org/x/sys/unix"
)

// originalDst is where a connection the router's dnat redirected was
// going: SO_ORIGINAL_DST, a sockaddr_in read through the IPv6Mreq getter
// (the usual way from Go: it reads the 16 bytes of a sockaddr_in).
func originalDst(c net.Conn) (string, error) {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return "", fmt.Errorf("not a TCP connection")
	}
	rc, err := tc.SyscallConn()
	if err != nil {
		return "", err
	}
	var mreq *unix.IPv6Mreq
	var gerr error
	if err := rc.Control(func(fd uintptr) {
		mreq, gerr = unix.GetsockoptIPv6Mreq(int(fd), unix.SOL_IP, unix.SO_ORIGINAL_DST)
	}); err != nil {
		return "", err
	}
	if gerr != nil {
		return "", fmt.Errorf("SO_ORIGINAL_DST: %w", gerr)
	}
	b := mreq.Multiaddr
	port := binary.BigEndian.Uint16(b[2:4])
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[4:8])), port).String(), nil
}
