package redact

import (
	"net/url"
	"regexp"
	"strings"
)

// reAnyUserinfo is user:password@ in a proxy value, with any scheme or
// none (HTTPS_PROXY=user:pass@proxy:3128 is legal: Go assumes http://).
var reAnyUserinfo = regexp.MustCompile(`((?:^|[\s=,"'(])(?:[A-Za-z][A-Za-z0-9+.-]*://)?[^/\s:@"'=,()]+):[^/\s@"']*@`)

// Userinfo masks the password of every user:password@ in s, whatever the
// scheme (http, https, socks5, none), keeping the user name: a proxy URL
// shown in a report says who authenticates, never with what.
func Userinfo(s string) string {
	if !strings.Contains(s, "@") || !strings.Contains(s, ":") {
		return s
	}
	return reAnyUserinfo.ReplaceAllString(s, "${1}:"+Mask+"@")
}

// ProxyURL is a proxy URL for a report: its password masked, nothing
// else changed. An unparsable value is masked by Userinfo.
func ProxyURL(u *url.URL) string {
	if u == nil {
		return ""
	}
	c := *u
	if p, ok := c.User.Password(); ok && p != "" {
		c.User = url.UserPassword(c.User.Username(), Mask)
	}
	return c.String()
}
