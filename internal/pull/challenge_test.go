package pull

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The expectations are what containerd's parser
// (core/remotes/docker/auth/parse.go) gives for the same bytes.
func TestParseAuthHeader(t *testing.T) {
	tests := []struct {
		name string
		in   []string // WWW-Authenticate values
		want []Challenge
	}{
		{"docker hub", []string{`Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/nginx:pull"`},
			[]Challenge{{"bearer", map[string]string{"realm": "https://auth.docker.io/token", "service": "registry.docker.io", "scope": "repository:library/nginx:pull"}}}},
		{"ecr basic", []string{`Basic realm="https://123456789012.dkr.ecr.ap-northeast-2.amazonaws.com/",service="ecr.amazonaws.com"`},
			[]Challenge{{"basic", map[string]string{"realm": "https://123456789012.dkr.ecr.ap-northeast-2.amazonaws.com/", "service": "ecr.amazonaws.com"}}}},
		{"insufficient scope", []string{`Bearer realm="https://auth.lab.test/token",service="registry.lab.test",scope="repository:app:pull",error="insufficient_scope"`},
			[]Challenge{{"bearer", map[string]string{"realm": "https://auth.lab.test/token", "service": "registry.lab.test", "scope": "repository:app:pull", "error": "insufficient_scope"}}}},
		{"case of scheme and keys", []string{`BEARER Realm="r", Service=s`},
			[]Challenge{{"bearer", map[string]string{"realm": "r", "service": "s"}}}},
		{"space before = ends the params", []string{`Bearer realm = "r"`}, []Challenge{{"bearer", map[string]string{}}}},
		{"two challenges in one value: the first only", []string{`Basic realm="x", Bearer realm="https://t/token",service="svc"`},
			[]Challenge{{"basic", map[string]string{"realm": "x"}}}},
		{"two values: bearer first", []string{`Basic realm="x"`, `Bearer realm="https://t/token",service="svc"`},
			[]Challenge{{"bearer", map[string]string{"realm": "https://t/token", "service": "svc"}}, {"basic", map[string]string{"realm": "x"}}}},
		{"escaped quote", []string{`Bearer realm="a\"b",service="c,d"`},
			[]Challenge{{"bearer", map[string]string{"realm": `a"b`, "service": "c,d"}}}},
		{"unterminated quote is an empty value", []string{`Bearer realm="https://t/token`},
			[]Challenge{{"bearer", map[string]string{"realm": ""}}}},
		{"unterminated after an escape", []string{`Bearer realm="a\"b`}, []Challenge{{"bearer", map[string]string{"realm": ""}}}},
		{"unquoted realm stops at the colon", []string{`Bearer realm=https://t/token`}, []Challenge{{"bearer", map[string]string{"realm": "https"}}}},
		{"bare scheme", []string{`Basic`}, []Challenge{{"basic", map[string]string{}}}},
		{"unknown scheme dropped", []string{`Negotiate abc==`}, []Challenge{}},
		{"empty", []string{``}, []Challenge{}},
		{"garbage", []string{`"""===,,,`}, []Challenge{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{"Www-Authenticate": tt.in}
			got := ParseAuthHeader(h)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseAuthHeader(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func FuzzParseChallenges(f *testing.F) {
	for _, s := range []string{`Bearer realm="https://auth.docker.io/token",service="registry.docker.io"`, `Basic realm="x"`, `Bearer realm="a\"b"`, `x=,"`, `Negotiate abc==, Basic`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, ok := ParseChallenge(s)
		if !ok {
			return
		}
		if c.Scheme != "basic" && c.Scheme != "bearer" && c.Scheme != "digest" {
			t.Fatalf("ParseChallenge(%q) gave scheme %q", s, c.Scheme)
		}
		if c.Params == nil {
			t.Fatalf("ParseChallenge(%q) gave nil params", s)
		}
		for k, v := range c.Params {
			if len(k)+len(v) > len(s) {
				t.Fatalf("ParseChallenge(%q) gave a param longer than the input", s)
			}
		}
	})
}
