package netcheck

import (
	"context"
	"errors"
	"net/netip"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/units"
)

// traceProbe sends one TCP SYN to dst with the given TTL (hop limit) and
// reads what came back: a connection or a reset from dst, or the ICMP
// error of the router where the TTL ran out (or that found no route), from
// the socket's error queue. A connect(2) with IP_TTL and IP_RECVERR needs
// no privilege (traceroute's tcpconn method): no raw socket, no
// CAP_NET_RAW. The socket sends only SYNs (and a reset when connected).
func traceProbe(ctx context.Context, dst netip.AddrPort, ttl int, wait time.Duration) report.TraceHop {
	h := report.TraceHop{TTL: ttl, Result: report.HopSilent}
	a := dst.Addr().Unmap()
	family, level, ttlOpt, errOpt := unix.AF_INET, unix.IPPROTO_IP, unix.IP_TTL, unix.IP_RECVERR
	var sa unix.Sockaddr = &unix.SockaddrInet4{Port: int(dst.Port()), Addr: a.As4()}
	if a.Is6() {
		family, level, ttlOpt, errOpt = unix.AF_INET6, unix.IPPROTO_IPV6, unix.IPV6_UNICAST_HOPS, unix.IPV6_RECVERR
		sa = &unix.SockaddrInet6{Port: int(dst.Port()), Addr: a.As16()}
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		h.Result, h.Error = report.HopError, err.Error()
		return h
	}
	defer unix.Close(fd)
	if err := unix.SetsockoptInt(fd, level, ttlOpt, ttl); err != nil {
		h.Result, h.Error = report.HopError, "setting the TTL: "+err.Error()
		return h
	}
	if err := unix.SetsockoptInt(fd, level, errOpt, 1); err != nil {
		h.Result, h.Error = report.HopError, "asking for ICMP errors: "+err.Error()
		return h
	}
	// no lingering: closing a connected probe sends a reset, not a FIN
	unix.SetsockoptLinger(fd, unix.SOL_SOCKET, unix.SO_LINGER, &unix.Linger{Onoff: 1, Linger: 0})
	start := time.Now()
	if err := unix.Connect(fd, sa); err != nil && !errors.Is(err, unix.EINPROGRESS) {
		h.Result, h.Error = report.HopError, err.Error()
		if errors.Is(err, unix.ENETUNREACH) || errors.Is(err, unix.EHOSTUNREACH) {
			h.Result = report.HopUnreachable
		}
		return h
	}
	deadline := start.Add(wait)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	for {
		left := time.Until(deadline)
		if left <= 0 || ctx.Err() != nil {
			return h
		}
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT | unix.POLLERR}}
		n, err := unix.Poll(pfd, int(min(left, 50*time.Millisecond).Milliseconds())+1)
		if errors.Is(err, unix.EINTR) || n == 0 {
			continue
		}
		if err != nil {
			h.Result, h.Error = report.HopError, err.Error()
			return h
		}
		break
	}
	h.RTTMS = units.MS(time.Since(start))
	if icmp, ok := readErrQueue(fd, a.Is6()); ok {
		h.Address = icmp.from.String()
		switch {
		case icmp.timeExceeded:
			h.Result = report.HopTimeExceeded
		default:
			h.Result = report.HopUnreachable
			h.Error = icmp.what
		}
		return h
	}
	soerr, _ := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR)
	switch unix.Errno(soerr) {
	case 0:
		h.Result, h.Address = report.HopReached, a.String()
	case unix.ECONNREFUSED:
		h.Result, h.Address = report.HopRefused, a.String()
	default:
		h.Result, h.Error = report.HopError, unix.Errno(soerr).Error()
	}
	return h
}

// icmpAnswer is one ICMP error from the socket's error queue.
type icmpAnswer struct {
	from         netip.Addr
	timeExceeded bool
	what         string
}

// readErrQueue reads an ICMP error queued on the socket (IP_RECVERR):
// the offender's address, and whether it said time exceeded.
func readErrQueue(fd int, v6 bool) (icmpAnswer, bool) {
	buf := make([]byte, 64)
	oob := make([]byte, 512)
	_, oobn, _, _, err := unix.Recvmsg(fd, buf, oob, unix.MSG_ERRQUEUE|unix.MSG_DONTWAIT)
	if err != nil {
		return icmpAnswer{}, false
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil {
		return icmpAnswer{}, false
	}
	for _, m := range msgs {
		isErr := m.Header.Level == unix.IPPROTO_IP && m.Header.Type == unix.IP_RECVERR ||
			m.Header.Level == unix.IPPROTO_IPV6 && m.Header.Type == unix.IPV6_RECVERR
		if !isErr || len(m.Data) < int(unsafe.Sizeof(unix.SockExtendedErr{})) {
			continue
		}
		ee := (*unix.SockExtendedErr)(unsafe.Pointer(&m.Data[0]))
		off := m.Data[unsafe.Sizeof(*ee):]
		var from netip.Addr
		switch {
		case ee.Origin == unix.SO_EE_ORIGIN_ICMP && len(off) >= 8:
			from = netip.AddrFrom4([4]byte(off[4:8]))
		case ee.Origin == unix.SO_EE_ORIGIN_ICMP6 && len(off) >= 24:
			from = netip.AddrFrom16([16]byte(off[8:24])).Unmap()
		default:
			continue
		}
		ans := icmpAnswer{from: from}
		switch {
		case ee.Origin == unix.SO_EE_ORIGIN_ICMP && ee.Type == 11, ee.Origin == unix.SO_EE_ORIGIN_ICMP6 && ee.Type == 3:
			ans.timeExceeded = true
		default:
			ans.what = unix.Errno(ee.Errno).Error()
		}
		return ans, true
	}
	return icmpAnswer{}, false
}

// traceSupported is "" where Trace can run.
func traceSupported() string { return "" }
