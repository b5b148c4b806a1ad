package netcheck

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/pullpath/pullpath/internal/report"
)

// RouteTo asks the kernel how it sends to dst, as `ip route get DST`
// does (an RTM_GETROUTE request over netlink, in this thread's network
// namespace): the interface and its MTU, the route's own mtu and advmss
// metrics (a learned path MTU shows there as a cached mtu), the gateway
// and the source address. Nothing is sent to dst.
func RouteTo(dst netip.Addr) *report.RouteFacts {
	dst = dst.Unmap()
	rf := &report.RouteFacts{Destination: dst.String()}
	if err := routeGet(dst, rf); err != nil {
		rf.Error = err.Error()
		return rf
	}
	if rf.InterfaceIndex > 0 {
		if ifc, err := net.InterfaceByIndex(rf.InterfaceIndex); err == nil {
			rf.Interface, rf.InterfaceMTU = ifc.Name, ifc.MTU
		}
	}
	return rf
}

func routeGet(dst netip.Addr, rf *report.RouteFacts) error {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return fmt.Errorf("route get %s: netlink socket: %v", dst, err)
	}
	defer unix.Close(fd)
	tv := unix.NsecToTimeval(int64(2 * time.Second))
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fmt.Errorf("route get %s: netlink bind: %v", dst, err)
	}
	family, bits := unix.AF_INET, 32
	if dst.Is6() {
		family, bits = unix.AF_INET6, 128
	}
	addr := dst.AsSlice()
	// nlmsghdr (16) + rtmsg (12) + rtattr RTA_DST (4 + address)
	attrLen := unix.SizeofRtAttr + len(addr)
	msgLen := unix.SizeofNlMsghdr + unix.SizeofRtMsg + rtaAlign(attrLen)
	b := make([]byte, msgLen)
	ne := binary.NativeEndian
	ne.PutUint32(b[0:], uint32(msgLen))
	ne.PutUint16(b[4:], unix.RTM_GETROUTE)
	ne.PutUint16(b[6:], unix.NLM_F_REQUEST)
	ne.PutUint32(b[8:], 1) // sequence
	rt := b[unix.SizeofNlMsghdr:]
	rt[0] = byte(family)
	rt[1] = byte(bits) // rtm_dst_len
	at := rt[unix.SizeofRtMsg:]
	ne.PutUint16(at[0:], uint16(attrLen))
	ne.PutUint16(at[2:], unix.RTA_DST)
	copy(at[unix.SizeofRtAttr:], addr)
	if err := unix.Sendto(fd, b, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fmt.Errorf("route get %s: netlink send: %v", dst, err)
	}
	buf := make([]byte, 1<<16)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil {
		return fmt.Errorf("route get %s: netlink receive: %v", dst, err)
	}
	msgs, err := syscall.ParseNetlinkMessage(buf[:n])
	if err != nil {
		return fmt.Errorf("route get %s: netlink answer: %v", dst, err)
	}
	for _, m := range msgs {
		switch m.Header.Type {
		case unix.NLMSG_ERROR:
			if len(m.Data) >= 4 {
				if code := int32(ne.Uint32(m.Data)); code != 0 {
					return fmt.Errorf("route get %s: %v", dst, unix.Errno(-code))
				}
			}
		case unix.RTM_NEWROUTE:
			return routeAttrs(&m, rf)
		}
	}
	return fmt.Errorf("route get %s: no route in the kernel's answer", dst)
}

// routeAttrs reads an RTM_NEWROUTE answer into rf.
func routeAttrs(m *syscall.NetlinkMessage, rf *report.RouteFacts) error {
	attrs, err := syscall.ParseNetlinkRouteAttr(m)
	if err != nil {
		return fmt.Errorf("route get %s: %v", rf.Destination, err)
	}
	ne := binary.NativeEndian
	for _, a := range attrs {
		switch a.Attr.Type {
		case unix.RTA_OIF:
			if len(a.Value) >= 4 {
				rf.InterfaceIndex = int(ne.Uint32(a.Value))
			}
		case unix.RTA_GATEWAY:
			if ip, ok := netip.AddrFromSlice(a.Value); ok {
				rf.Gateway = ip.String()
			}
		case unix.RTA_PREFSRC:
			if ip, ok := netip.AddrFromSlice(a.Value); ok {
				rf.Source = ip.String()
			}
		case unix.RTA_METRICS:
			routeMetrics(a.Value, rf)
		}
	}
	return nil
}

// routeMetrics reads the nested RTAX_* attributes of RTA_METRICS.
func routeMetrics(b []byte, rf *report.RouteFacts) {
	ne := binary.NativeEndian
	for len(b) >= unix.SizeofRtAttr {
		l := int(ne.Uint16(b[0:]))
		t := ne.Uint16(b[2:])
		if l < unix.SizeofRtAttr || l > len(b) {
			return
		}
		v := b[unix.SizeofRtAttr:l]
		if len(v) >= 4 {
			switch t {
			case unix.RTAX_MTU:
				rf.MTU = int(ne.Uint32(v))
			case unix.RTAX_ADVMSS:
				rf.AdvMSS = int(ne.Uint32(v))
			}
		}
		b = b[min(rtaAlign(l), len(b)):]
	}
}

func rtaAlign(n int) int { return (n + unix.RTA_ALIGNTO - 1) &^ (unix.RTA_ALIGNTO - 1) }
