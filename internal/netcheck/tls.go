package netcheck

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"time"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/units"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Handshake dials addr (ip:port) and runs a TLS handshake with cfg (its
// ServerName set to serverName), bounded by TLSTimeout, and reports what the
// certificate shows, verified or not: on a verification failure the peer
// certificate is still read (from the verification error, else a second,
// unverified handshake) so the report names its subject, SANs, issuer and
// validity. A failed dial is reported with its CONNECT_* code.
func (c *Checker) Handshake(ctx context.Context, addr, serverName string, cfg *tls.Config) *report.TLSInfo {
	if _, err := netip.ParseAddrPort(addr); err != nil {
		return &report.TLSInfo{ServerName: serverName, Code: verdict.ConnectError, Error: fmt.Sprintf("cannot dial %q: want IP:PORT", addr)}
	}
	d := net.Dialer{Timeout: c.cfg.ConnectTimeout}
	dial := func(ctx context.Context) (net.Conn, error) { return d.DialContext(ctx, "tcp", addr) }
	return c.HandshakeVia(ctx, dial, addr, serverName, cfg)
}

// HandshakeVia is Handshake over the connections dial opens (a tunnel
// through a proxy: the certificate is then whatever comes through it);
// label names the path in messages. A failed dial is reported with the
// code of its error (CONNECT_* for a TCP dial).
func (c *Checker) HandshakeVia(ctx context.Context, dial func(context.Context) (net.Conn, error), label, serverName string, cfg *tls.Config) *report.TLSInfo {
	info := &report.TLSInfo{ServerName: serverName}
	if cfg == nil {
		cfg = &tls.Config{}
	}
	cfg = cfg.Clone()
	cfg.ServerName = serverName
	info.SkipVerify = cfg.InsecureSkipVerify

	start := time.Now()
	var first *recordingConn
	state, dialErr, err := c.handshake(ctx, func(ctx context.Context) (net.Conn, error) {
		conn, err := dial(ctx)
		if err == nil && first == nil {
			first = &recordingConn{Conn: conn}
			conn = first
		}
		return conn, err
	}, cfg)
	info.DurationMS = units.MS(time.Since(start))
	if dialErr {
		_, info.Code = ClassifyDialError(err)
		info.Error = err.Error()
		return info
	}
	if state.Version != 0 {
		info.Version = tls.VersionName(state.Version)
	}
	certs := state.PeerCertificates
	if err == nil {
		info.Verified = !cfg.InsecureSkipVerify
		describeCert(info, certs)
		return info
	}

	// The handshake failed. A certificate that did not verify is still
	// shown: crypto/tls hands it over with the error; failing that, a
	// second handshake that does not verify reads it.
	info.Code = ClassifyTLSError(err)
	info.Broken, info.Received = brokenBy(err, first)
	var cve *tls.CertificateVerificationError
	if errors.As(err, &cve) {
		certs = cve.UnverifiedCertificates
	}
	if len(certs) == 0 && certCode(info.Code) {
		certs = c.peerCertificates(ctx, dial, cfg)
	}
	describeCert(info, certs)
	switch info.Code {
	case verdict.TLSNameMismatch:
		info.Error = fmt.Sprintf("certificate is not valid for %q: it is valid for %s", serverName, validFor(info))
	case verdict.TLSHandshakeTimeout:
		info.Error = fmt.Sprintf("TLS handshake with %s did not finish within %s", label, c.cfg.TLSTimeout)
	default:
		info.Error = err.Error()
	}
	return info
}

// handshake dials and runs the handshake, both within TLSTimeout.
// dialErr says the connection itself failed.
func (c *Checker) handshake(ctx context.Context, dial func(context.Context) (net.Conn, error), cfg *tls.Config) (state tls.ConnectionState, dialErr bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.TLSTimeout)
	defer cancel()
	raw, err := dial(ctx)
	if err != nil {
		return state, true, err
	}
	defer raw.Close()
	if dl, ok := ctx.Deadline(); ok {
		raw.SetDeadline(dl)
	}
	conn := tls.Client(raw, cfg)
	err = conn.HandshakeContext(ctx)
	return conn.ConnectionState(), false, err
}

// peerCertificates reads the server's certificates without verifying them.
func (c *Checker) peerCertificates(ctx context.Context, dial func(context.Context) (net.Conn, error), cfg *tls.Config) []*x509.Certificate {
	cfg = cfg.Clone()
	cfg.InsecureSkipVerify = true
	cfg.VerifyPeerCertificate, cfg.VerifyConnection = nil, nil
	state, _, _ := c.handshake(ctx, dial, cfg)
	return state.PeerCertificates
}

// describeCert copies what the leaf certificate says into info.
func describeCert(info *report.TLSInfo, certs []*x509.Certificate) {
	if len(certs) == 0 {
		return
	}
	leaf := certs[0]
	info.Subject = leaf.Subject.String()
	info.Issuer = leaf.Issuer.String()
	info.SANs = append([]string(nil), leaf.DNSNames...)
	for _, ip := range leaf.IPAddresses {
		info.SANs = append(info.SANs, ip.String())
	}
	nb, na := leaf.NotBefore.UTC(), leaf.NotAfter.UTC()
	info.NotBefore, info.NotAfter = &nb, &na
}

func validFor(info *report.TLSInfo) string {
	switch {
	case len(info.SANs) > 0:
		return strings.Join(info.SANs, ", ")
	case info.Subject != "":
		return "no name: it has no subject alternative names (subject " + info.Subject + ")"
	}
	return "names that could not be read"
}

// certCode says whether code is about the certificate itself.
func certCode(code verdict.Code) bool {
	switch code {
	case verdict.TLSUnknownAuthority, verdict.TLSNameMismatch, verdict.TLSExpired, verdict.TLSNotYetValid:
		return true
	}
	return false
}

// ClassifyTLSError names a TLS handshake failure (also inside the error of
// an HTTP request): TLS_UNKNOWN_AUTHORITY, TLS_NAME_MISMATCH, TLS_EXPIRED,
// TLS_NOT_YET_VALID, TLS_HANDSHAKE_TIMEOUT, or TLS_HANDSHAKE_FAILED for
// everything else (the port does not speak TLS, a protocol alert, ...). A
// real reset during the handshake (ECONNRESET: what an SNI-filtering
// firewall does after the ClientHello) is CONNECT_RESET, a route problem,
// not a TLS one. It reads the error chain only, never the message; nil
// is "".
func ClassifyTLSError(err error) verdict.Code {
	var (
		ua x509.UnknownAuthorityError
		hn x509.HostnameError
		ci x509.CertificateInvalidError
	)
	switch {
	case err == nil:
		return ""
	case errors.Is(err, syscall.ECONNRESET):
		return verdict.ConnectReset
	case errors.As(err, &ua):
		return verdict.TLSUnknownAuthority
	case errors.As(err, &hn):
		return verdict.TLSNameMismatch
	case errors.As(err, &ci) && ci.Reason == x509.Expired:
		if ci.Cert != nil && time.Now().Before(ci.Cert.NotBefore) {
			return verdict.TLSNotYetValid
		}
		return verdict.TLSExpired
	case isTimeout(err):
		return verdict.TLSHandshakeTimeout
	}
	return verdict.TLSHandshakeFailed
}

// brokenBy says how the peer ended a handshake that failed (reset,
// closed, not-tls: see report.TLSInfo.Broken) and, for bytes that are no
// TLS record, their printable start as conn recorded them.
func brokenBy(err error, conn *recordingConn) (string, string) {
	var rh tls.RecordHeaderError
	switch {
	case errors.Is(err, syscall.ECONNRESET):
		return "reset", ""
	case errors.As(err, &rh):
		got := rh.RecordHeader[:]
		if conn != nil && len(conn.first) > 0 {
			got = conn.first
		}
		text := printable(got)
		if len(text) > maxReceivedText {
			text = text[:maxReceivedText] + "..."
		}
		return "not-tls", text
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "closed", ""
	}
	return "", ""
}

// recordingConn keeps the first bytes read from a connection.
type recordingConn struct {
	net.Conn
	first []byte
}

// maxRecorded bounds what recordingConn keeps, maxReceivedText the
// printable start of it a report shows.
const (
	maxRecorded     = 512
	maxReceivedText = 200
)

func (c *recordingConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if room := maxRecorded - len(c.first); room > 0 && n > 0 {
		c.first = append(c.first, b[:min(n, room)]...)
	}
	return n, err
}

// printable is b as one line of text: control characters and line breaks
// become spaces, runs of spaces one, anything else non-printable a dot.
func printable(b []byte) string {
	var s strings.Builder
	space := false
	for _, c := range b {
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			if !space && s.Len() > 0 {
				s.WriteByte(' ')
			}
			space = true
			continue
		case c < 0x20 || c > 0x7e:
			s.WriteByte('.')
		default:
			s.WriteByte(c)
		}
		space = false
	}
	return strings.TrimSpace(s.String())
}
