package redact

import (
	"strings"
	"testing"
)

func TestURLString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://prod-ap-northeast-2-starport-layer-bucket.s3.ap-northeast-2.amazonaws.com/abc/def?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Signature=deadbeef",
			"https://prod-ap-northeast-2-starport-layer-bucket.s3.ap-northeast-2.amazonaws.com/abc/def?X-Amz-Algorithm=REDACTED&X-Amz-Signature=REDACTED"},
		{"https://user:secret@myacr.azurecr.io/v2/", "https://myacr.azurecr.io/v2/"},
		{"https://myacr.koreacentral.data.azurecr.io/blob?sv=2020&sig=abc%2Bdef", "https://myacr.koreacentral.data.azurecr.io/blob?sig=REDACTED&sv=REDACTED"},
		{"http://blob.lab/docker/registry/v2/blobs/sha256/ab/abcd/data", "http://blob.lab/docker/registry/v2/blobs/sha256/ab/abcd/data"},
	}
	for _, tt := range tests {
		if got := URLString(tt.in); got != tt.want {
			t.Errorf("URLString(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestString(t *testing.T) {
	if got := String("401 with a Bearer challenge"); got != "401 with a Bearer challenge" {
		t.Errorf("String(plain words) = %q, want it unchanged", got)
	}
	if got := String("Authorization: Basic dTpw"); strings.Contains(got, "dTpw") {
		t.Errorf("String(short basic header) = %q, still holds the credentials", got)
	}
	secrets := []string{"deadbeefcafe", "s3cr3tpassw0rd", "eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ1c2VyMSJ9.c2lnbmF0dXJlc2lnbmF0dXJl", "QWxhZGRpbjpvcGVuIHNlc2FtZQ=="}
	in := `Get "https://bucket.s3.amazonaws.com/x?X-Amz-Signature=deadbeefcafe&X-Amz-Date=1": dial; https://u:s3cr3tpassw0rd@reg.example/v2/ ` +
		`Authorization: Bearer eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ1c2VyMSJ9.c2lnbmF0dXJlc2lnbmF0dXJl basic QWxhZGRpbjpvcGVuIHNlc2FtZQ== {"token":"eyJhbGciOiJFUzI1NiJ9.x.y"}`
	got := String(in)
	for _, s := range secrets {
		if strings.Contains(got, s) {
			t.Errorf("String(...) = %q, still holds %q", got, s)
		}
	}
	if !strings.Contains(got, "bucket.s3.amazonaws.com") {
		t.Errorf("String(...) = %q, lost the host", got)
	}
}

func FuzzString(f *testing.F) {
	for _, s := range []string{"Authorization: Bearer abcdefghijklmnopqrstu", "https://u:p@h/x?sig=abc", `{"token":"x"}`, "plain text"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := String(s)
		if String(got) != got {
			t.Fatalf("String is not idempotent on %q: %q then %q", s, got, String(got))
		}
	})
}
