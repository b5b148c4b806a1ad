package pull

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseChallenges(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Challenge
	}{
		{"docker hub", `Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/nginx:pull"`,
			[]Challenge{{"bearer", map[string]string{"realm": "https://auth.docker.io/token", "service": "registry.docker.io", "scope": "repository:library/nginx:pull"}}}},
		{"ecr basic", `Basic realm="https://123456789012.dkr.ecr.ap-northeast-2.amazonaws.com/",service="ecr.amazonaws.com"`,
			[]Challenge{{"basic", map[string]string{"realm": "https://123456789012.dkr.ecr.ap-northeast-2.amazonaws.com/", "service": "ecr.amazonaws.com"}}}},
		{"insufficient scope", `Bearer realm="https://auth.lab.test/token",service="registry.lab.test",scope="repository:app:pull",error="insufficient_scope"`,
			[]Challenge{{"bearer", map[string]string{"realm": "https://auth.lab.test/token", "service": "registry.lab.test", "scope": "repository:app:pull", "error": "insufficient_scope"}}}},
		{"spaces and case", `  BEARER   Realm = "r" ,  Service=s `,
			[]Challenge{{"bearer", map[string]string{"realm": "r", "service": "s"}}}},
		{"two challenges", `Basic realm="x", Bearer realm="https://t/token",service="svc"`,
			[]Challenge{{"basic", map[string]string{"realm": "x"}}, {"bearer", map[string]string{"realm": "https://t/token", "service": "svc"}}}},
		{"escaped quote", `Bearer realm="a\"b",service="c,d"`,
			[]Challenge{{"bearer", map[string]string{"realm": `a"b`, "service": "c,d"}}}},
		{"unterminated", `Bearer realm="https://t/token`,
			[]Challenge{{"bearer", map[string]string{"realm": "https://t/token"}}}},
		{"bare scheme", `Basic`, []Challenge{{"basic", map[string]string{}}}},
		{"empty", ``, nil},
		{"garbage", `"""===,,,`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ParseChallenges(tt.in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseChallenges(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func FuzzParseChallenges(f *testing.F) {
	for _, s := range []string{`Bearer realm="https://auth.docker.io/token",service="registry.docker.io"`, `Basic realm="x"`, `Bearer realm="a\"b"`, `x=,"`, `Negotiate abc==, Basic`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cs := ParseChallenges(s)
		for _, c := range cs {
			if c.Scheme == "" {
				t.Fatalf("ParseChallenges(%q) gave an empty scheme", s)
			}
			if c.Params == nil {
				t.Fatalf("ParseChallenges(%q) gave nil params", s)
			}
		}
		if len(cs) > len(s) {
			t.Fatalf("ParseChallenges(%q) gave %d challenges from %d bytes", s, len(cs), len(s))
		}
	})
}
