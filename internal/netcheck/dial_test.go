package netcheck

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

func TestConnectAll(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	open := l.Addr().(*net.TCPAddr).Port
	closed := closedPort(t)
	c := newChecker(t, Config{ConnectTimeout: time.Second})

	tests := []struct {
		name    string
		answers []report.Answer
		port    int
		want    []report.AddrResult // DurationMS and Error not compared
	}{
		{"listener", []report.Answer{{Address: "127.0.0.1", Scope: "loopback"}}, open,
			[]report.AddrResult{{Address: "127.0.0.1:" + strconv.Itoa(open), Scope: "loopback", Result: "ok"}}},
		{"closed port", []report.Answer{{Address: "127.0.0.1"}}, closed,
			[]report.AddrResult{{Address: "127.0.0.1:" + strconv.Itoa(closed), Scope: "loopback", Result: "refused", Code: verdict.ConnectRefused}}},
		{"order kept", []report.Answer{{Address: "127.0.0.2", Scope: "loopback"}, {Address: "127.0.0.1", Scope: "loopback"}}, closed,
			[]report.AddrResult{
				{Address: "127.0.0.2:" + strconv.Itoa(closed), Scope: "loopback", Result: "refused", Code: verdict.ConnectRefused},
				{Address: "127.0.0.1:" + strconv.Itoa(closed), Scope: "loopback", Result: "refused", Code: verdict.ConnectRefused}}},
		{"not an address", []report.Answer{{Address: "registry.example"}}, 443,
			[]report.AddrResult{{Address: "registry.example:443", Result: "error", Code: verdict.ConnectError}}},
		{"bad port", []report.Answer{{Address: "127.0.0.1"}}, 0,
			[]report.AddrResult{{Address: "127.0.0.1:0", Result: "error", Code: verdict.ConnectError}}},
		{"none", nil, open, []report.AddrResult{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := c.ConnectAll(context.Background(), tt.answers, tt.port)
			if len(got) != len(tt.want) {
				t.Fatalf("ConnectAll(%v, %d) = %d results, want %d", tt.answers, tt.port, len(got), len(tt.want))
			}
			for i, g := range got {
				w := tt.want[i]
				if g.Address != w.Address || g.Scope != w.Scope || g.Result != w.Result || g.Code != w.Code {
					t.Errorf("ConnectAll(%v, %d)[%d] = %+v, want %+v", tt.answers, tt.port, i, g, w)
				}
				if (g.Result == "ok") != (g.Error == "") || g.DurationMS < 0 {
					t.Errorf("ConnectAll(%v, %d)[%d] = %+v: want an Error exactly when not ok", tt.answers, tt.port, i, g)
				}
			}
		})
	}
}

// timeoutErr is a net.Error that timed out, as a dial deadline gives.
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestClassifyDialError(t *testing.T) {
	op := func(err error) error {
		return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", err)}
	}
	tests := []struct {
		name   string
		err    error
		result string
		code   verdict.Code
	}{
		{"nil", nil, "ok", ""},
		{"ECONNREFUSED", op(syscall.ECONNREFUSED), "refused", verdict.ConnectRefused},
		{"EHOSTUNREACH", op(syscall.EHOSTUNREACH), "unreachable", verdict.ConnectUnreachable},
		{"ENETUNREACH", op(syscall.ENETUNREACH), "unreachable", verdict.ConnectUnreachable},
		{"ECONNRESET on read", &net.OpError{Op: "read", Net: "tcp", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, "reset", verdict.ConnectReset},
		{"ECONNRESET in an HTTP error", fmt.Errorf(`Get "https://r.example/v2/": %w`, op(syscall.ECONNRESET)), "reset", verdict.ConnectReset},
		{"EOF after connect", fmt.Errorf(`Get "https://r.example/v2/": %w`, io.EOF), "reset", verdict.ConnectReset},
		{"unexpected EOF", io.ErrUnexpectedEOF, "reset", verdict.ConnectReset},
		{"ETIMEDOUT", op(syscall.ETIMEDOUT), "timeout", verdict.ConnectTimeout},
		{"net.Error timeout", &net.OpError{Op: "dial", Net: "tcp", Err: timeoutErr{}}, "timeout", verdict.ConnectTimeout},
		{"deadline exceeded", fmt.Errorf("dial: %w", context.DeadlineExceeded), "timeout", verdict.ConnectTimeout},
		{"os deadline", os.ErrDeadlineExceeded, "timeout", verdict.ConnectTimeout},
		{"cancelled", context.Canceled, "error", verdict.ConnectError},
		{"other", errors.New("connection refused"), "error", verdict.ConnectError}, // the message alone proves nothing
		{"EADDRNOTAVAIL", op(syscall.EADDRNOTAVAIL), "error", verdict.ConnectError},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			result, code := ClassifyDialError(tt.err)
			if result != tt.result || code != tt.code {
				t.Errorf("ClassifyDialError(%v) = %q, %q; want %q, %q", tt.err, result, code, tt.result, tt.code)
			}
		})
	}
}

func TestConnectRespectsContext(t *testing.T) {
	c := newChecker(t, Config{ConnectTimeout: time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	got := c.ConnectAll(ctx, []report.Answer{{Address: "127.0.0.1"}}, closedPort(t))
	if got[0].Result != "error" || got[0].Code != verdict.ConnectError {
		t.Errorf("ConnectAll with a cancelled context = %+v, want error %q", got[0], verdict.ConnectError)
	}
}
