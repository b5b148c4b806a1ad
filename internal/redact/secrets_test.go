package redact

import (
	"encoding/base64"
	"net/url"
	"strings"
	"testing"
)

func TestSecrets(t *testing.T) {
	s := NewSecrets()
	s.AddBasic("puller", "pw-Quartz-91")
	s.AddAuthorization("Bearer opaque-token-4711")
	u, _ := url.Parse("https://blob.example/x?X-Amz-Signature=sigvalue123&X-Amz-Expires=3600&sig=azsig%2Babc")
	s.AddURL(u)
	basic := base64.StdEncoding.EncodeToString([]byte("puller:pw-Quartz-91"))
	tests := []struct {
		name, in string
		gone     []string // must not survive
		kept     []string // evidence that must stay
	}{
		{"password echoed raw", `{"errors":[{"message":"bad password pw-Quartz-91 for puller"}]}`, []string{"pw-Quartz-91"}, []string{"puller"}},
		{"pair and base64", "got puller:pw-Quartz-91 as " + basic, []string{"pw-Quartz-91", basic}, nil},
		{"token without its scheme", "token opaque-token-4711 expired", []string{"opaque-token-4711"}, []string{"expired"}},
		{"url-encoded password", "password=pw-Quartz-91&x", []string{"pw-Quartz-91"}, nil},
		{"signature", "signature sigvalue123 does not match", []string{"sigvalue123"}, []string{"does not match"}},
		{"decoded azure sig", "sig azsig+abc bad", []string{"azsig+abc"}, nil},
		{"expiry is evidence, not a secret", "expires 3600", nil, []string{"3600"}},
	}
	for _, tt := range tests {
		got := s.String(tt.in)
		for _, g := range tt.gone {
			if strings.Contains(got, g) {
				t.Errorf("%s: String(%q) = %q, still holds %q", tt.name, tt.in, got, g)
			}
		}
		for _, k := range tt.kept {
			if !strings.Contains(got, k) {
				t.Errorf("%s: String(%q) = %q, lost %q", tt.name, tt.in, got, k)
			}
		}
	}
	var nilSet *Secrets
	if got := nilSet.String("Authorization: Bearer abcdefghijklmnopqrstuvwxyz"); strings.Contains(got, "abcdefghijklmnop") {
		t.Errorf("nil set: %q, want the pattern redaction still applied", got)
	}
	s.Add("abc") // shorter than MinSecretLen: ignored, ordinary words survive
	if got := s.String("abcdef"); got != "abcdef" {
		t.Errorf("short secret masked ordinary text: %q", got)
	}
}

func TestSecretsScrub(t *testing.T) {
	type inner struct {
		Msg  string
		List []string
	}
	type role string
	type doc struct {
		Role    role
		Summary string
		Inner   *inner
		Items   []inner
		Map     map[string]string
		Any     any
		hidden  string
	}
	s := NewSecrets()
	s.Add("hunter2-secret", "registry")
	d := &doc{
		Role:    "registry",
		Summary: "x hunter2-secret", Inner: &inner{Msg: "hunter2-secret", List: []string{"a hunter2-secret"}},
		Items: []inner{{Msg: "hunter2-secret"}}, Map: map[string]string{"k": "hunter2-secret"}, Any: &inner{Msg: "hunter2-secret"},
		hidden: "hunter2-secret",
	}
	s.Scrub(d)
	for _, got := range []string{d.Summary, d.Inner.Msg, d.Inner.List[0], d.Items[0].Msg, d.Map["k"], d.Any.(*inner).Msg} {
		if strings.Contains(got, "hunter2") {
			t.Errorf("Scrub left %q", got)
		}
	}
	if d.Role != "registry" {
		t.Errorf("Scrub renamed a closed-set field: %q", d.Role)
	}
	if d.hidden != "hunter2-secret" {
		t.Errorf("Scrub touched an unexported field")
	}
}
