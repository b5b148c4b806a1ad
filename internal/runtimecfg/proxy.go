package runtimecfg

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"

	"golang.org/x/net/http/httpproxy"

	"github.com/pullpath/pullpath/internal/redact"
	"github.com/pullpath/pullpath/internal/verdict"
)

// The runtime's proxy, decided per request the way containerd decides it.
//
// containerd's CRI image pull and its registry client send every request
// (registry, token realm, blob redirect, mirror) on an http.Transport with
// Proxy: http.ProxyFromEnvironment (containerd core/remotes/docker/
// registry.go DefaultHTTPTransport; 1.6: pkg/cri/server/image_pull.go
// newTransport). net/http reads HTTP_PROXY, HTTPS_PROXY and NO_PROXY
// once, upper case first and the lower-case name only when the upper-case
// one is empty (net/http's vendored golang.org/x/net/http/httpproxy
// FromEnvironment, getEnvAny("HTTPS_PROXY", "https_proxy")), and then
// decides each request with httpproxy's ProxyFunc. The walk uses that same
// ProxyFunc on the values chosen the same way. (Newer x/net releases,
// outside the standard library, prefer the lower-case names: the walk
// does not call their FromEnvironment.)
//
// ProxyFunc's rules, per request URL:
//   - https:// uses HTTPS_PROXY only, http:// HTTP_PROXY only;
//   - localhost and loopback addresses are never proxied;
//   - NO_PROXY entries: "*" turns the proxy off; an IP or CIDR matches IP
//     literals only, never a name that resolves into it; "example.com"
//     matches itself and its subdomains, ".example.com" and
//     "*.example.com" its subdomains only; an entry's :port must equal
//     the request's port;
//   - a value without a scheme is taken as http://HOST; a value Go cannot
//     parse is ignored (the request goes direct).

// ProxyValue is one of the three settings and where it came from.
type ProxyValue struct {
	Value string // as set (may hold a password: print RedactProxyValue of it)
	Var   string // the variable or flag that gave it: HTTPS_PROXY, https_proxy, --https-proxy
	From  string // where that variable was set
}

// ProxySettings are the proxy settings a runtime's requests follow.
type ProxySettings struct {
	HTTP, HTTPS, NoProxy ProxyValue
	Origin               string // where the settings as a whole come from
	Disabled             bool   // --no-node-proxy: walk direct on purpose
}

// proxyVarNames are the variables net/http reads, upper case first.
var proxyVarNames = map[string][2]string{
	"HTTP_PROXY":  {"HTTP_PROXY", "http_proxy"},
	"HTTPS_PROXY": {"HTTPS_PROXY", "https_proxy"},
	"NO_PROXY":    {"NO_PROXY", "no_proxy"},
}

// IsProxyVar says whether name is one of the six variables net/http reads.
func IsProxyVar(name string) bool {
	for _, pair := range proxyVarNames {
		if name == pair[0] || name == pair[1] {
			return true
		}
	}
	return false
}

// SettingsFromEnv chooses the settings from an environment as net/http
// does: the upper-case variable when it is not empty, else the lower-case
// one.
func SettingsFromEnv(vars map[string]EnvVar, origin string) ProxySettings {
	pick := func(key string) ProxyValue {
		for _, n := range proxyVarNames[key] {
			if v, ok := vars[n]; ok && v.Value != "" {
				return ProxyValue{Value: v.Value, Var: n, From: v.From}
			}
		}
		return ProxyValue{}
	}
	return ProxySettings{HTTP: pick("HTTP_PROXY"), HTTPS: pick("HTTPS_PROXY"), NoProxy: pick("NO_PROXY"), Origin: origin}
}

// Active says whether any request can go through a proxy.
func (s ProxySettings) Active() bool {
	return !s.Disabled && (s.HTTP.Value != "" || s.HTTPS.Value != "")
}

// ProxyDecision is how the runtime sends one request.
type ProxyDecision struct {
	Proxy        *url.URL // nil: direct
	Var          string   // the variable whose proxy is used (HTTPS_PROXY, ...)
	NoProxyMatch string   // the NO_PROXY entry that sends it direct
	Reason       string   // one line: why proxy or direct
	// IPEntries are the NO_PROXY IP and CIDR entries when the host is a
	// name that goes through the proxy: Go never matches them against a
	// name, whatever it resolves to.
	IPEntries []string
}

// Direct says the request goes straight to its host.
func (d ProxyDecision) Direct() bool { return d.Proxy == nil }

// Decide is how the runtime sends a request for u: through which proxy, or
// direct and why. The proxy-or-direct answer is httpproxy's ProxyFunc
// itself; the reason and the matching NO_PROXY entry are read next to it.
func (s ProxySettings) Decide(u *url.URL) ProxyDecision {
	if s.Disabled {
		return ProxyDecision{Reason: "direct on purpose (--no-node-proxy)"}
	}
	cfg := httpproxy.Config{HTTPProxy: s.HTTP.Value, HTTPSProxy: s.HTTPS.Value, NoProxy: s.NoProxy.Value}
	p, err := cfg.ProxyFunc()(u)
	if err != nil {
		return ProxyDecision{Reason: "direct: " + err.Error()}
	}
	setting, name := s.HTTP, "HTTP_PROXY"
	if u.Scheme == "https" {
		setting, name = s.HTTPS, "HTTPS_PROXY"
	}
	if setting.Var != "" {
		name = setting.Var
	}
	if p != nil {
		d := ProxyDecision{Proxy: p, Var: name, Reason: fmt.Sprintf("%s=%s", name, redact.ProxyURL(p))}
		if s.NoProxy.Value != "" {
			d.Reason += fmt.Sprintf(", and no NO_PROXY entry matches %s", u.Hostname())
			if _, err := netip.ParseAddr(strings.Trim(u.Hostname(), "[]")); err != nil {
				d.IPEntries = ipEntries(s.NoProxy.Value)
			}
		}
		return d
	}
	host := strings.ToLower(u.Hostname())
	switch {
	case setting.Value == "":
		other := "HTTPS_PROXY"
		if u.Scheme == "https" {
			other = "HTTP_PROXY"
		}
		return ProxyDecision{Reason: fmt.Sprintf("direct: no %s is set (%s applies to %s:// requests only)", name, other, map[string]string{"HTTPS_PROXY": "https", "HTTP_PROXY": "http"}[other])}
	case proxyParseError(setting.Value) != nil:
		return ProxyDecision{Reason: fmt.Sprintf("direct: %s=%s is not a URL Go can use, so Go ignores it (%v)", name, RedactProxyValue(setting.Value), proxyParseError(setting.Value))}
	case host == "localhost" || isLoopback(host):
		return ProxyDecision{Reason: "direct: localhost and loopback addresses are never proxied"}
	}
	if entry := noProxyMatch(s.NoProxy.Value, u); entry != "" {
		return ProxyDecision{NoProxyMatch: entry, Reason: fmt.Sprintf("direct: NO_PROXY entry %q matches %s", entry, u.Host)}
	}
	return ProxyDecision{Reason: "direct: NO_PROXY matches " + u.Host}
}

// proxyParseError is the error Go's httpproxy keeps to itself when it
// ignores a proxy value (parseProxy: the value, or http:// and the value,
// must parse as a URL).
func proxyParseError(v string) error {
	if v == "" {
		return nil
	}
	u, err := url.Parse(v)
	if err == nil && u.Scheme != "" && u.Host != "" {
		return nil
	}
	if _, err2 := url.Parse("http://" + v); err2 == nil {
		return nil
	}
	if err == nil {
		return fmt.Errorf("no scheme or host")
	}
	return err
}

// How Go's httpproxy reads a proxy value (parseProxy).
const (
	proxyAsWritten = iota // a URL with scheme and host
	proxyNoScheme         // HOST[:PORT]: taken as http://HOST[:PORT]
	proxyMangled          // not a URL, but http:// and it parses: Go uses that
	proxyIgnored          // neither parses: Go ignores it (direct)
)

// effectiveProxy is the URL Go makes of a proxy value, and how.
func effectiveProxy(v string) (*url.URL, int) {
	u, err := url.Parse(v)
	if err == nil && u.Scheme != "" && u.Host != "" {
		return u, proxyAsWritten
	}
	w, err2 := url.Parse("http://" + v)
	switch {
	case err2 != nil:
		return nil, proxyIgnored
	case err != nil || strings.Contains(v, "://"):
		return w, proxyMangled
	}
	return w, proxyNoScheme
}

func isLoopback(host string) bool {
	a, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && a.IsLoopback()
}

// noProxyMatch names the NO_PROXY entry that matches u, reading the list
// as httpproxy's config.init and useProxy do; "" when none does.
func noProxyMatch(noProxy string, u *url.URL) string {
	host := strings.ToLower(strings.TrimSpace(u.Hostname()))
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	ip := net.ParseIP(host)
	for _, raw := range strings.Split(noProxy, ",") {
		p := strings.ToLower(strings.TrimSpace(raw))
		if p == "" {
			continue
		}
		if p == "*" {
			return "*"
		}
		if _, cidr, err := net.ParseCIDR(p); err == nil {
			if ip != nil && cidr.Contains(ip) {
				return strings.TrimSpace(raw)
			}
			continue
		}
		phost, pport, err := net.SplitHostPort(p)
		if err != nil {
			phost, pport = p, ""
		}
		phost = strings.TrimSuffix(strings.TrimPrefix(phost, "["), "]")
		if phost == "" {
			continue
		}
		if pip := net.ParseIP(phost); pip != nil {
			if ip != nil && pip.Equal(ip) && (pport == "" || pport == port) {
				return strings.TrimSpace(raw)
			}
			continue
		}
		if ip != nil {
			continue // a domain entry never matches an IP literal
		}
		phost = strings.TrimPrefix(phost, "*")
		matchHost := !strings.HasPrefix(phost, ".")
		if matchHost {
			phost = "." + phost
		}
		if (strings.HasSuffix(host, phost) || matchHost && host == phost[1:]) && (pport == "" || pport == port) {
			return strings.TrimSpace(raw)
		}
	}
	return ""
}

// ipEntries are the IP and CIDR entries of a NO_PROXY list.
func ipEntries(noProxy string) []string {
	var out []string
	for _, raw := range strings.Split(noProxy, ",") {
		p := strings.TrimSpace(raw)
		if _, _, err := net.ParseCIDR(p); err == nil {
			out = append(out, p)
			continue
		}
		h := p
		if hh, _, err := net.SplitHostPort(p); err == nil {
			h = hh
		}
		if net.ParseIP(strings.Trim(h, "[]")) != nil {
			out = append(out, p)
		}
	}
	return out
}

// EntryCovers says whether a NO_PROXY IP or CIDR entry contains addr: what
// the entry's author meant for a name resolving to addr, and what Go never
// checks for a name.
func EntryCovers(entry, addr string) bool {
	ip := net.ParseIP(strings.Trim(addr, "[]"))
	if ip == nil {
		return false
	}
	if _, cidr, err := net.ParseCIDR(strings.TrimSpace(entry)); err == nil {
		return cidr.Contains(ip)
	}
	h := strings.TrimSpace(entry)
	if hh, _, err := net.SplitHostPort(h); err == nil {
		h = hh
	}
	e := net.ParseIP(strings.Trim(h, "[]"))
	return e != nil && e.Equal(ip)
}

// RedactProxyValue masks the password of any proxy URL in s.
func RedactProxyValue(s string) string { return redact.Userinfo(s) }

// ProxyWarning is something about the settings that does not stop a pull
// today but misleads or will bite.
type ProxyWarning struct {
	Code    verdict.Code
	Message string // no secret: passwords are masked
}

// Warnings are what is off in the environment vars the settings s were
// chosen from.
func (s ProxySettings) Warnings(vars map[string]EnvVar) []ProxyWarning {
	if s.Disabled {
		return nil
	}
	var out []ProxyWarning
	for _, key := range []string{"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY"} {
		names := proxyVarNames[key]
		up, low := vars[names[0]], vars[names[1]]
		if up.Value != "" && low.Value != "" && up.Value != low.Value {
			out = append(out, ProxyWarning{Code: verdict.ProxyEnvCaseConflict, Message: fmt.Sprintf(
				"%s=%s (%s) and %s=%s (%s) differ: containerd (Go's net/http) uses %s; curl, wget and other tools on the node prefer %s, so they test another proxy setting than the runtime's",
				names[0], RedactProxyValue(up.Value), up.From, names[1], RedactProxyValue(low.Value), low.From, names[0], names[1])})
		}
	}
	for _, v := range []ProxyValue{s.HTTPS, s.HTTP} {
		if v.Value == "" {
			continue
		}
		switch eff, how := effectiveProxy(v.Value); how {
		case proxyIgnored:
			out = append(out, ProxyWarning{Code: verdict.ProxyURLInvalid, Message: fmt.Sprintf(
				"%s=%s (%s) is not a URL Go can use (%v): containerd ignores it and goes direct", v.Var, RedactProxyValue(v.Value), v.From, proxyParseError(v.Value))})
		case proxyMangled:
			out = append(out, ProxyWarning{Code: verdict.ProxyURLInvalid, Message: fmt.Sprintf(
				"%s=%s (%s) is not a valid URL: Go reads it as %s, so containerd dials proxy host %q", v.Var, RedactProxyValue(v.Value), v.From, RedactProxyValue(eff.String()), eff.Host)})
		case proxyNoScheme:
			out = append(out, ProxyWarning{Code: verdict.ProxyURLNoScheme, Message: fmt.Sprintf(
				"%s=%s (%s) has no scheme: Go assumes http://%s, other tools may not; write the scheme", v.Var, RedactProxyValue(v.Value), v.From, RedactProxyValue(v.Value))})
		}
	}
	if s.HTTP.Value != "" && s.HTTPS.Value == "" {
		out = append(out, ProxyWarning{Code: verdict.ProxyHTTPSMissing, Message: fmt.Sprintf(
			"%s is set (%s) but HTTPS_PROXY is not: registries are https://, so containerd pulls direct, not through %s", s.HTTP.Var, s.HTTP.From, RedactProxyValue(s.HTTP.Value))})
	}
	return out
}
