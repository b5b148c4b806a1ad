package netcheck

import "syscall"

// setMSS sets TCP_MAXSEG on a socket before connect: the MSS its SYN
// offers, and so the largest segment the peer sends it.
func setMSS(fd uintptr, mss int) error {
	return syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_MAXSEG, mss)
}
