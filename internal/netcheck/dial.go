package netcheck

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/pullpath/pullpath/internal/addrscope"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/units"
	"github.com/pullpath/pullpath/internal/verdict"
)

// ConnectAll opens a TCP connection to every answer on port, concurrently,
// each with its own ConnectTimeout, and closes it; results keep the order of
// answers.
func (c *Checker) ConnectAll(ctx context.Context, answers []report.Answer, port int) []report.AddrResult {
	results := make([]report.AddrResult, len(answers))
	var wg sync.WaitGroup
	for i, a := range answers {
		wg.Go(func() { results[i] = c.connect(ctx, a, port) })
	}
	wg.Wait()
	return results
}

// connect dials one address. Only IP addresses are dialled: a name here
// would be resolved by this process's resolver, not the node's.
func (c *Checker) connect(ctx context.Context, a report.Answer, port int) report.AddrResult {
	res := report.AddrResult{Address: net.JoinHostPort(a.Address, strconv.Itoa(port)), Scope: a.Scope}
	ip, err := netip.ParseAddr(a.Address)
	if err != nil || port <= 0 || port > 65535 {
		res.Result, res.Code = "error", verdict.ConnectError
		res.Error = fmt.Sprintf("cannot dial %q: want an IP address and a port from 1 to 65535", res.Address)
		return res
	}
	if res.Scope == "" {
		res.Scope = addrscope.Of(ip)
	}
	ctx, cancel := context.WithTimeout(ctx, c.cfg.ConnectTimeout)
	defer cancel()
	d := net.Dialer{Timeout: c.cfg.ConnectTimeout}
	start := time.Now()
	conn, err := d.DialContext(ctx, "tcp", res.Address)
	res.DurationMS = units.MS(time.Since(start))
	if err == nil {
		conn.Close()
		res.Result = "ok"
		return res
	}
	res.Result, res.Code = ClassifyDialError(err)
	res.Error = err.Error()
	if res.Result == "timeout" {
		res.Error = fmt.Sprintf("dial tcp %s: no answer within %s", res.Address, c.cfg.ConnectTimeout)
	}
	return res
}

// ClassifyDialError names the outcome of a dial, or of a request on a
// connection (an HTTP request's error, for one): ok (err is nil), timeout,
// refused, unreachable (no route: EHOSTUNREACH, ENETUNREACH), reset (the
// peer or a middlebox reset or closed the connection) or error, with its
// verdict code. It reads the error chain only, never the message.
func ClassifyDialError(err error) (result string, code verdict.Code) {
	var ne net.Error
	switch {
	case err == nil:
		return "ok", ""
	case errors.Is(err, syscall.ECONNREFUSED):
		return "refused", verdict.ConnectRefused
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH), errors.Is(err, syscall.EHOSTDOWN):
		return "unreachable", verdict.ConnectUnreachable
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "reset", verdict.ConnectReset
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded),
		errors.Is(err, syscall.ETIMEDOUT), errors.As(err, &ne) && ne.Timeout():
		return "timeout", verdict.ConnectTimeout
	}
	return "error", verdict.ConnectError
}
