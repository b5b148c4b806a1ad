// Package report holds pullpath's machine-readable reports (apiVersion
// pullpath/v1): the types every engine fills, and nothing that prints them
// (internal/printers does; only internal/cli decides which renderer runs),
// no wire codec (the probe Pod's termination message is
// internal/probesummary's) and no exit policy (each engine records its
// report's exit code from internal/exitcode). No secret is ever stored in
// a report: URLs are redacted before they get here.
//
// Words, as every report uses them: a finding is one thing a run found,
// named by a verdict code (explain's ExplainFinding is one message read; a
// probe's finding is its verdict); a warning (Warning) is a finding that
// did not stop the pull but will bite later; a verdict is the one answer.
package report

import (
	"time"

	"github.com/pullpath/pullpath/internal/verdict"
)

// APIVersion of every report.
const APIVersion = "pullpath/v1"

// StepStatus is the outcome of one step of a walk, and of one audit
// check on one subnet: one type and four values, so an audit's check and
// a probe's step compare and print alike.
type StepStatus string

const (
	StepPass StepStatus = "pass"
	StepWarn StepStatus = "warn" // could not decide (a file missing, a permission lacking), or a risk that does not break the pull today
	StepFail StepStatus = "fail"
	StepSkip StepStatus = "skip" // does not apply (an S3 interface endpoint makes the gateway check moot)
)

// ProbeReport is what `pullpath probe` returns.
type ProbeReport struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"` // ProbeReport
	Image      string          `json:"image"`
	Reference  Reference       `json:"reference"`
	Node       string          `json:"node,omitempty"`
	Platform   string          `json:"platform"`
	Mode       string          `json:"mode"` // full | quick
	Resolver   Resolver        `json:"resolver"`
	Endpoints  []*Endpoint     `json:"endpoints"`
	Chain      *HostChain      `json:"chain,omitempty"` // the registry's hosts as containerd walks them, when hosts.toml names a mirror
	Steps      []Step          `json:"steps"`
	Transfer   *Transfer       `json:"transfer,omitempty"`
	Verdict    verdict.Verdict `json:"verdict"`
	Warnings   []Warning       `json:"warnings,omitempty"`
	StartedAt  time.Time       `json:"startedAt"`
	DurationMS float64         `json:"durationMs"`
	Runtime    *RuntimePull    `json:"runtime,omitempty"`  // filled by `lab run --runtime`
	Identity   *ProbeIdentity  `json:"identity,omitempty"` // the kubelet's credentials (plugins, pull secrets), when used
	Proxy      *ProxyConfig    `json:"proxy,omitempty"`    // the runtime's proxy settings, when looked for
	// RuntimeConfig is step 0: the runtime, its config file, how it was
	// found, and where its registry configuration comes from.
	RuntimeConfig *RuntimeConfig `json:"runtimeConfig,omitempty"`
	// Traces are where the packets stop (--trace): to the failing
	// address when the walk failed by a timeout, else to each endpoint's
	// address (what sweep compares a failing node's trace with).
	Traces []*Trace `json:"traces,omitempty"`
}

// Reference is the parsed image reference, as the runtime sees it.
type Reference struct {
	Registry   string `json:"registry"`   // host[:port] as in the reference (docker.io for Docker Hub)
	Host       string `json:"host"`       // the host actually contacted without mirrors (registry-1.docker.io for docker.io)
	Repository string `json:"repository"` // library/nginx
	Tag        string `json:"tag,omitempty"`
	Digest     string `json:"digest,omitempty"`
}

// Resolver is how the node resolves names.
type Resolver struct {
	HostsFile   string   `json:"hostsFile,omitempty"`
	ResolvConf  string   `json:"resolvConf,omitempty"`
	Nameservers []string `json:"nameservers"`
	Search      []string `json:"search,omitempty"`
	Ndots       int      `json:"ndots"`
}

// Endpoint is one host of the pull.
type Endpoint struct {
	Host      string         `json:"host"`
	Port      int            `json:"port"`
	Scheme    string         `json:"scheme"` // https | http
	Role      verdict.Role   `json:"role"`
	Via       string         `json:"via"` // how pullpath came to it: "image reference", "token realm of HOST", "redirect from HOST", "hosts.toml mirror"
	Resolve   *Resolution    `json:"resolve,omitempty"`
	Addresses []AddrResult   `json:"addresses,omitempty"`
	Families  *Families      `json:"families,omitempty"` // the path per address family (IPv4, IPv6)
	TLS       *TLSInfo       `json:"tls,omitempty"`
	HTTP      []HTTPExchange `json:"http,omitempty"`
	Status    StepStatus     `json:"status"`
	Code      verdict.Code   `json:"code,omitempty"`  // the first failure on this endpoint
	Proxy     *EndpointProxy `json:"proxy,omitempty"` // proxy or direct, when the runtime has proxy settings
	// MTU is the path MTU test, when a hop stalled after TCP connected.
	MTU *MTUTest `json:"mtu,omitempty"`
}

// Resolution is the result of resolving one host name the way the node does.
type Resolution struct {
	Source     string       `json:"source"` // hosts | dns | literal
	Name       string       `json:"name"`   // the name whose answer was used (after search/ndots)
	Nameserver string       `json:"nameserver,omitempty"`
	Rcode      string       `json:"rcode,omitempty"` // NOERROR, NXDOMAIN, SERVFAIL, REFUSED, TIMEOUT
	CNAMEs     []string     `json:"cnames,omitempty"`
	Answers    []Answer     `json:"answers,omitempty"`
	Queries    []DNSQuery   `json:"queries,omitempty"` // every query sent, in order
	DurationMS float64      `json:"durationMs"`
	Code       verdict.Code `json:"code,omitempty"` // set when resolution failed
	Error      string       `json:"error,omitempty"`
}

// DNSQuery is one question to one nameserver.
type DNSQuery struct {
	Name       string  `json:"name"`
	Type       string  `json:"type"` // A | AAAA
	Nameserver string  `json:"nameserver"`
	Rcode      string  `json:"rcode"` // NOERROR, NXDOMAIN, SERVFAIL, REFUSED, TIMEOUT, ERROR
	Answers    int     `json:"answers"`
	DurationMS float64 `json:"durationMs"`
	Error      string  `json:"error,omitempty"`
}

// Answer is one resolved address and its scope.
type Answer struct {
	Address string `json:"address"`
	Scope   string `json:"scope"` // private | public | loopback | link-local | cgnat | documentation | other
}

// AddrResult is one TCP connect attempt to one address.
type AddrResult struct {
	Address    string       `json:"address"` // ip:port
	Scope      string       `json:"scope"`
	Result     string       `json:"result"` // ok | timeout | refused | unreachable | reset | error
	DurationMS float64      `json:"durationMs"`
	Code       verdict.Code `json:"code,omitempty"`
	Error      string       `json:"error,omitempty"`
}

// Families is one endpoint's path per address family: which families the
// host has addresses in, which the node can use towards it, and which one
// a dial by Go's rules (the resolver's RFC 6724 order, then Happy Eyeballs
// as net.Dialer and containerd's registry transport do it) connected over.
type Families struct {
	IPv4 FamilyPath `json:"ipv4"`
	IPv6 FamilyPath `json:"ipv6"`
	// Order is the host's addresses as Go's resolver sorts them (RFC 6724):
	// the dialer tries the family of the first one first.
	Order []string    `json:"order,omitempty"`
	Dial  *FamilyDial `json:"dial,omitempty"`
	// Code is the address-family finding, if any (ADDRESS_FAMILY_UNUSABLE,
	// IPV6_PATH_BROKEN, IPV4_PATH_BROKEN), and Detail says it in one line.
	Code   verdict.Code `json:"code,omitempty"`
	Detail string       `json:"detail,omitempty"`
}

// FamilyPath is one address family of one endpoint.
type FamilyPath struct {
	HostAddresses int `json:"hostAddresses"` // the host's answers of this family
	// NodeAddress is a global or unique-local (IPv6) / non-loopback (IPv4)
	// address of the node in this family, "" when it has none.
	NodeAddress  string `json:"nodeAddress,omitempty"`
	DefaultRoute bool   `json:"defaultRoute"` // the node has ::/0 (0.0.0.0/0) in its main table
	// Source is the address the kernel picks to reach the host's first
	// address of this family (as Go's RFC 6724 sort asks it); "" with
	// NoRoute when the node has no route there.
	Source  string `json:"source,omitempty"`
	NoRoute string `json:"noRoute,omitempty"` // why the kernel gave no source (network is unreachable, ...)
	// Result is the best connect result of this family's addresses (ok,
	// or the first failure: timeout, refused, unreachable, ...); "" when
	// the host has no address of this family.
	Result string       `json:"result,omitempty"`
	Code   verdict.Code `json:"code,omitempty"`
}

// FamilyDial is one dial of the host by name as Go's net.Dialer does it.
type FamilyDial struct {
	Primary         string  `json:"primary"`           // the family tried first (ipv4 | ipv6)
	Address         string  `json:"address,omitempty"` // the address that connected
	Family          string  `json:"family,omitempty"`  // its family
	FellBack        bool    `json:"fellBack"`          // the primary family failed and the other one connected
	FallbackDelayMS float64 `json:"fallbackDelayMs"`   // the delay before the other family is tried (300 ms)
	DurationMS      float64 `json:"durationMs"`
	Error           string  `json:"error,omitempty"`
}

// TLSInfo is what the TLS handshake showed.
type TLSInfo struct {
	ServerName string       `json:"serverName"`
	Version    string       `json:"version,omitempty"`
	Verified   bool         `json:"verified"`
	SkipVerify bool         `json:"skipVerify,omitempty"`
	Subject    string       `json:"subject,omitempty"`
	SANs       []string     `json:"sans,omitempty"`
	Issuer     string       `json:"issuer,omitempty"`
	NotBefore  *time.Time   `json:"notBefore,omitempty"`
	NotAfter   *time.Time   `json:"notAfter,omitempty"`
	DurationMS float64      `json:"durationMs"`
	Code       verdict.Code `json:"code,omitempty"`
	Error      string       `json:"error,omitempty"`
	// Broken says how a handshake that did not finish ended, when the
	// peer ended it: reset (RST), closed (FIN before the server's
	// answer), not-tls (bytes that are no TLS record arrived; Received
	// shows their printable start).
	Broken   string `json:"broken,omitempty"`
	Received string `json:"received,omitempty"`
}

// HTTPExchange is one request and its answer (URL redacted).
type HTTPExchange struct {
	Method     string  `json:"method"`
	URL        string  `json:"url"`
	Status     int     `json:"status,omitempty"`
	DurationMS float64 `json:"durationMs"`
	Error      string  `json:"error,omitempty"`
}

// Step is one step of the walk.
type Step struct {
	Name       string       `json:"name"` // reference, resolve, connect, tls, ping, token, manifest, config, layer
	Endpoint   string       `json:"endpoint,omitempty"`
	Status     StepStatus   `json:"status"`
	Code       verdict.Code `json:"code,omitempty"`
	Detail     string       `json:"detail,omitempty"`
	DurationMS float64      `json:"durationMs"`
	Bytes      int64        `json:"bytes,omitempty"`
}

// Transfer sums up the blob downloads.
type Transfer struct {
	Blobs      int     `json:"blobs"`  // config + layers fetched
	Layers     int     `json:"layers"` // layers in the manifest
	Bytes      int64   `json:"bytes"`
	Verified   bool    `json:"verified"` // every byte hashed and matched
	DurationMS float64 `json:"durationMs"`
	MBps       float64 `json:"mbps"`
	// Pace is the rate per blob host, the longest wait without a byte,
	// and the whole pull's projected time against the limits (pace.go).
	Pace *TransferPace `json:"pace,omitempty"`
}

// Warning is a finding that did not stop the pull but will bite later (a
// hosts-file pin, a public answer that happened to work), with its code.
type Warning struct {
	Code     verdict.Code `json:"code"`
	Endpoint string       `json:"endpoint,omitempty"`
	Message  string       `json:"message"`
	Advice   []string     `json:"advice,omitempty"`
}
