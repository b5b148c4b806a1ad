package redact

import (
	"net/url"
	"strings"
	"testing"
)

func TestUserinfo(t *testing.T) {
	tests := []struct{ in, want string }{
		{"http://proxy:3128", "http://proxy:3128"},
		{"http://bob:s3cret@proxy:3128", "http://bob:REDACTED@proxy:3128"},
		{"bob:s3cret@proxy:3128", "bob:REDACTED@proxy:3128"},
		{"HTTPS_PROXY=bob:s3cret@proxy:3128", "HTTPS_PROXY=bob:REDACTED@proxy:3128"},
		{"socks5://bob:p%40ss@proxy:1080", "socks5://bob:REDACTED@proxy:1080"},
		{`Environment="HTTPS_PROXY=http://u:pw@p:3128" "NO_PROXY=a,b"`, `Environment="HTTPS_PROXY=http://u:REDACTED@p:3128" "NO_PROXY=a,b"`},
		{"proxyconnect tcp: dial tcp 10.0.0.1:3128: connect: connection refused", "proxyconnect tcp: dial tcp 10.0.0.1:3128: connect: connection refused"},
		{"user@example.com", "user@example.com"},
	}
	for _, tt := range tests {
		if got := Userinfo(tt.in); got != tt.want {
			t.Errorf("Userinfo(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestProxyURL(t *testing.T) {
	u, _ := url.Parse("http://bob:s3cret@proxy.corp:3128")
	got := ProxyURL(u)
	if strings.Contains(got, "s3cret") || !strings.Contains(got, "bob:REDACTED@proxy.corp:3128") {
		t.Errorf("ProxyURL = %q, want the password masked and the rest kept", got)
	}
	if u.User.String() != "bob:s3cret" {
		t.Errorf("ProxyURL changed its argument: %v", u.User)
	}
	if ProxyURL(nil) != "" {
		t.Error("ProxyURL(nil) is not empty")
	}
}
