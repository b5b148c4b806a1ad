package netcheck

import (
	"strings"
	"testing"
)

func TestAuthSchemes(t *testing.T) {
	tests := []struct {
		in   []string
		want string
	}{
		{[]string{"NTLM", "Negotiate"}, "NTLM,Negotiate"},
		{[]string{"Negotiate, NTLM"}, "Negotiate,NTLM"},
		{[]string{`Basic realm="corp, proxy", NTLM`}, "Basic,NTLM"},
		{[]string{`Basic realm="x", charset="UTF-8"`}, "Basic"},
		{[]string{"Negotiate YIIabc==", "ntlm", "NTLM"}, "Negotiate,ntlm"},
		{[]string{""}, ""},
	}
	for _, tt := range tests {
		if got := strings.Join(AuthSchemes(tt.in), ","); got != tt.want {
			t.Errorf("AuthSchemes(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
