package runtimecfg

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const testDigest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestParseReference(t *testing.T) {
	tests := []struct {
		in      string
		want    Ref
		wantRef string // Reference()
		wantStr string // String()
	}{
		{"nginx", Ref{Registry: "docker.io", Host: "registry-1.docker.io", Repository: "library/nginx", Tag: "latest"}, "latest", "docker.io/library/nginx:latest"},
		{"nginx:1.25", Ref{Registry: "docker.io", Host: "registry-1.docker.io", Repository: "library/nginx", Tag: "1.25"}, "1.25", "docker.io/library/nginx:1.25"},
		{"bitnami/redis", Ref{Registry: "docker.io", Host: "registry-1.docker.io", Repository: "bitnami/redis", Tag: "latest"}, "latest", "docker.io/bitnami/redis:latest"},
		{"docker.io/nginx", Ref{Registry: "docker.io", Host: "registry-1.docker.io", Repository: "library/nginx", Tag: "latest"}, "latest", "docker.io/library/nginx:latest"},
		{"index.docker.io/library/nginx", Ref{Registry: "docker.io", Host: "registry-1.docker.io", Repository: "library/nginx", Tag: "latest"}, "latest", "docker.io/library/nginx:latest"},
		{"myacr.azurecr.io/team/app:v1", Ref{Registry: "myacr.azurecr.io", Host: "myacr.azurecr.io", Repository: "team/app", Tag: "v1"}, "v1", "myacr.azurecr.io/team/app:v1"},
		{"reg.lab.test:5443/app", Ref{Registry: "reg.lab.test:5443", Host: "reg.lab.test:5443", Repository: "app", Tag: "latest"}, "latest", "reg.lab.test:5443/app:latest"},
		{"localhost:5000/a/b/c:dev", Ref{Registry: "localhost:5000", Host: "localhost:5000", Repository: "a/b/c", Tag: "dev"}, "dev", "localhost:5000/a/b/c:dev"},
		{"localhost/app", Ref{Registry: "localhost", Host: "localhost", Repository: "app", Tag: "latest"}, "latest", "localhost/app:latest"},
		{"127.0.0.1:5000/app", Ref{Registry: "127.0.0.1:5000", Host: "127.0.0.1:5000", Repository: "app", Tag: "latest"}, "latest", "127.0.0.1:5000/app:latest"},
		{"[::1]:5000/app", Ref{Registry: "[::1]:5000", Host: "[::1]:5000", Repository: "app", Tag: "latest"}, "latest", "[::1]:5000/app:latest"},
		{"123456789012.dkr.ecr.ap-northeast-2.amazonaws.com/api@" + testDigest, Ref{Registry: "123456789012.dkr.ecr.ap-northeast-2.amazonaws.com", Host: "123456789012.dkr.ecr.ap-northeast-2.amazonaws.com", Repository: "api", Digest: testDigest}, testDigest, "123456789012.dkr.ecr.ap-northeast-2.amazonaws.com/api@" + testDigest},
		{"nginx:1.25@" + testDigest, Ref{Registry: "docker.io", Host: "registry-1.docker.io", Repository: "library/nginx", Tag: "1.25", Digest: testDigest}, testDigest, "docker.io/library/nginx:1.25@" + testDigest},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseReference(tt.in)
			if err != nil {
				t.Fatalf("ParseReference(%q) error = %v, want nil", tt.in, err)
			}
			tt.want.Original = tt.in
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseReference(%q) mismatch (-want +got):\n%s", tt.in, diff)
			}
			if r := got.Reference(); r != tt.wantRef {
				t.Errorf("ParseReference(%q).Reference() = %q, want %q", tt.in, r, tt.wantRef)
			}
			if s := got.String(); s != tt.wantStr {
				t.Errorf("ParseReference(%q).String() = %q, want %q", tt.in, s, tt.wantStr)
			}
		})
	}
}

func TestParseReferenceInvalid(t *testing.T) {
	tests := []struct {
		in, wantReason string
	}{
		{"", "repository name is empty"},
		{"Nginx", "must be lowercase"},
		{"myacr.azurecr.io/Team/App:v1", "must be lowercase"},
		{"nginx@sha256:short", "digest"},
		{"nginx@sha256:0123", "digest"},
		{"nginx@md5:0123456789abcdef0123456789abcdef", "digest"},
		{"nginx:tag with space", "invalid reference format"},
		{"nginx:", "invalid reference format"},
		{"https://reg.lab.test/app", "invalid reference format"},
		{"reg.lab.test/app\n:evil", "invalid reference format"},
		{"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "image ID"},
		{"reg.lab.test/" + strings.Repeat("a", 300), "longer than 255"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseReference(tt.in)
			if err == nil {
				t.Fatalf("ParseReference(%q) = %+v, want error containing %q", tt.in, got, tt.wantReason)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "image reference \"") || !strings.Contains(msg, tt.wantReason) {
				t.Errorf("ParseReference(%q) error = %q, want `image reference \"...\": ...%s...`", tt.in, msg, tt.wantReason)
			}
			if strings.ContainsAny(msg, "\r\n") {
				t.Errorf("ParseReference(%q) error = %q, want one line", tt.in, msg)
			}
		})
	}
}

func FuzzParseReference(f *testing.F) {
	for _, s := range []string{"nginx", "nginx:1.25", "reg.lab.test:5443/a/b:c", "nginx@" + testDigest,
		"a:b@" + testDigest, "[::1]:5000/x", "Nginx", "nginx@sha256:short", "localhost/x", "a/b/c/d/e:f-g.h_i", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseReference(s)
		if err != nil {
			if strings.ContainsAny(err.Error(), "\n\r") {
				t.Fatalf("ParseReference(%q) error %q spans lines", s, err)
			}
			return
		}
		again, err := ParseReference(r.String())
		if err != nil {
			t.Fatalf("ParseReference(%q).String() = %q does not parse: %v", s, r.String(), err)
		}
		again.Original = r.Original
		if again != r {
			t.Fatalf("round trip of %q: got %+v, want %+v", s, again, r)
		}
		if r.Registry == "" || r.Host == "" || r.Repository == "" || r.Reference() == "" {
			t.Fatalf("ParseReference(%q) = %+v: empty field", s, r)
		}
	})
}
