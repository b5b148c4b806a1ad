package verdict

import (
	"regexp"
	"strings"
)

// interceptors are names that TLS-intercepting proxies and secure web
// gateways put in the issuer of the certificates they mint (their
// documented default CA names: "Zscaler Root CA", "Netskope", "FortiGate
// CA", "Palo Alto Networks", "Blue Coat", "Squid", "mitmproxy", ...). A
// public CA's issuer never holds one of them.
var interceptors = []struct{ match, product string }{
	{"zscaler", "Zscaler"},
	{"netskope", "Netskope"},
	{"fortigate", "Fortinet FortiGate"},
	{"fortinet", "Fortinet"},
	{"palo alto", "Palo Alto Networks"},
	{"paloalto", "Palo Alto Networks"},
	{"blue coat", "Blue Coat / Symantec ProxySG"},
	{"bluecoat", "Blue Coat / Symantec ProxySG"},
	{"proxysg", "Symantec ProxySG"},
	{"forcepoint", "Forcepoint"},
	{"websense", "Forcepoint (Websense)"},
	{"mcafee web gateway", "McAfee / Skyhigh Web Gateway"},
	{"skyhigh", "Skyhigh Security"},
	{"cisco umbrella", "Cisco Umbrella"},
	{"sophos", "Sophos"},
	{"check point", "Check Point"},
	{"checkpoint", "Check Point"},
	{"barracuda", "Barracuda"},
	{"watchguard", "WatchGuard"},
	{"sonicwall", "SonicWall"},
	{"kaspersky", "Kaspersky"},
	{"iboss", "iboss"},
	{"untangle", "Untangle"},
	{"squid", "Squid (ssl-bump)"},
	{"mitmproxy", "mitmproxy"},
	{"fiddler", "Fiddler"},
	{"charles proxy", "Charles Proxy"},
	{"portswigger", "Burp Suite"},
}

// InterceptionProduct names the TLS-intercepting product an issuer (a
// certificate's issuer DN) belongs to, or "" when it names none.
func InterceptionProduct(issuer string) string {
	l := strings.ToLower(issuer)
	for _, i := range interceptors {
		if strings.Contains(l, i.match) {
			return i.product
		}
	}
	return ""
}

// InterceptionNames are the lowercase names InterceptionProduct looks
// for, as regexp-quoted alternatives.
func InterceptionNames() []string {
	out := make([]string, len(interceptors))
	for i, x := range interceptors {
		out[i] = regexp.QuoteMeta(x.match)
	}
	return out
}
