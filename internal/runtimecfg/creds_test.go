package runtimecfg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// secrets are every password and token in the fixtures and helpers.
var secrets = []string{
	"s3cret-pass-alice", "s3cret-pass-hub", "s3cret-identity-token", "s3cret-registry-token", "s3cret-pass-bob",
	"s3cret-pass:with:colons", "s3cret-pass-dd", "s3cret-file-pass", "s3cret-pass-helper", "s3cret-helper-idtoken",
	"s3cret-pass-hubhelper", "s3cret-pass-leak", "czNjcmV0LXBhc3MtZmFpbA==", "s3cret-pass-raw", "s3cret-pass-nocolon",
	"s3cret-pass-store",
	// base64 forms of the auth fields
	"YWxpY2U6czNjcmV0LXBhc3MtYWxpY2U=", "aHVidXNlcjpzM2NyZXQtcGFzcy1odWI=", "ZmlsZTpzM2NyZXQtZmlsZS1wYXNz",
}

const helperTest = `#!/bin/sh
[ "$1" = get ] || { echo "want get, got $1" >&2; exit 2; }
server=$(cat)
case "$server" in
  helper.lab.test) printf '{"ServerURL":"%s","Username":"helperuser","Secret":"s3cret-pass-helper"}' "$server" ;;
  token.lab.test) printf '{"ServerURL":"%s","Username":"<token>","Secret":"s3cret-helper-idtoken"}' "$server" ;;
  https://index.docker.io/v1/) printf '{"ServerURL":"%s","Username":"hubhelper","Secret":"s3cret-pass-hubhelper"}' "$server" ;;
  reg.lab.test) printf '{"ServerURL":"%s","Username":"storeuser","Secret":"s3cret-pass-store"}' "$server" ;;
  notfound.lab.test|other.lab.test) echo "credentials not found in native keychain"; exit 1 ;;
  empty.lab.test) printf '{"ServerURL":"","Username":"","Secret":""}' ;;
  badjson.lab.test) echo 'Username: x Secret: s3cret-pass-leak' ;;
  *) echo "unexpected server [$server]" >&2; exit 3 ;;
esac
`

const helperFail = `#!/bin/sh
cat >/dev/null
echo "error getting credentials - err: exit status 1, out: Basic czNjcmV0LXBhc3MtZmFpbA== rejected" >&2
echo "second line" >&2
exit 1
`

const helperSlow = `#!/bin/sh
exec sleep 30
`

// installHelpers puts docker-credential-test, -testfail and -testslow on PATH.
func installHelpers(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Fatalf("credential helper tests need /bin/sh: %v", err)
	}
	dir := t.TempDir()
	for name, body := range map[string]string{"test": helperTest, "testfail": helperFail, "testslow": helperSlow} {
		if err := os.WriteFile(filepath.Join(dir, "docker-credential-"+name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// testHelperTimeout bounds the helpers of the error tests.
var testHelperTimeout = CredentialOptions{HelperTimeout: 500 * time.Millisecond}

// A hanging helper stops when the context is cancelled (Ctrl-C), long
// before its timeout.
func TestHelperCancelled(t *testing.T) {
	installHelpers(t)
	helpers := filepath.Join(testdataDir(t), "valid-helpers.json")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	_, err := LoadCredentialsWith(ctx, helpers, "slow.lab.test", CredentialOptions{HelperTimeout: time.Minute})
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("LoadCredentialsWith(cancelled) took %v, want the helper killed on cancel", took)
	}
	if err == nil || !strings.Contains(err.Error(), "docker-credential-testslow: cancelled") || !errors.Is(err, context.Canceled) {
		t.Errorf("LoadCredentialsWith(cancelled) error = %v, want the helper cancelled", err)
	}
}

func TestLoadCredentials(t *testing.T) {
	installHelpers(t)
	td := testdataDir(t)
	auths := filepath.Join(td, "valid-auths.json")
	helpers := filepath.Join(td, "valid-helpers.json")
	store := filepath.Join(td, "valid-store.json")
	tests := []struct {
		config, host string
		want         Credentials
		wantString   string
	}{
		{"", "reg.lab.test", Credentials{Source: "anonymous"}, "anonymous"},
		{auths, "reg.lab.test", Credentials{Username: "alice", Password: "s3cret-pass-alice", Source: "docker config " + auths + ` (auths "reg.lab.test")`},
			"user alice from docker config " + auths + ` (auths "reg.lab.test")`},
		{auths, "docker.io", Credentials{Username: "hubuser", Password: "s3cret-pass-hub", Source: "docker config " + auths + ` (auths "https://index.docker.io/v1/")`}, "user hubuser from"},
		{auths, "registry-1.docker.io", Credentials{Username: "hubuser", Password: "s3cret-pass-hub", Source: "docker config " + auths + ` (auths "https://index.docker.io/v1/")`}, "user hubuser from"},
		{auths, "tok.lab.test", Credentials{IdentityToken: "s3cret-identity-token", Source: "docker config " + auths + ` (auths "https://tok.lab.test/v1/")`}, "identity token from"},
		{auths, "rt.lab.test", Credentials{RegistryToken: "s3cret-registry-token", Source: "docker config " + auths + ` (auths "rt.lab.test")`}, "registry token from"},
		{auths, "port.lab.test:5443", Credentials{Username: "bob", Password: "s3cret-pass-bob", Source: "docker config " + auths + ` (auths "https://port.lab.test:5443")`}, "user bob from"},
		{auths, "path.lab.test", Credentials{Username: "carol", Password: "s3cret-pass:with:colons", Source: "docker config " + auths + ` (auths "http://path.lab.test/some/path")`}, "user carol from"},
		{auths, "nopad.lab.test", Credentials{Username: "dave", Password: "s3cret-pass-dd", Source: "docker config " + auths + ` (auths "nopad.lab.test")`}, "user dave from"},
		{auths, "port.lab.test", Credentials{Source: "anonymous (no entry for port.lab.test in docker config " + auths + ")"}, "anonymous (no entry for port.lab.test"},
		{helpers, "helper.lab.test", Credentials{Username: "helperuser", Password: "s3cret-pass-helper", Source: "credential helper docker-credential-test"}, "user helperuser from credential helper docker-credential-test"},
		{helpers, "token.lab.test", Credentials{Username: "", IdentityToken: "s3cret-helper-idtoken", Source: "credential helper docker-credential-test"}, "identity token from credential helper docker-credential-test"},
		{helpers, "docker.io", Credentials{Username: "hubhelper", Password: "s3cret-pass-hubhelper", Source: "credential helper docker-credential-test"}, "user hubhelper from"},
		{helpers, "notfound.lab.test", Credentials{Source: "anonymous (credential helper docker-credential-test has no credentials for notfound.lab.test)"}, "anonymous (credential helper docker-credential-test has no credentials"},
		{helpers, "empty.lab.test", Credentials{Source: "anonymous (credential helper docker-credential-test returned empty credentials)"}, "anonymous (credential helper"},
		{helpers, "unlisted.lab.test", Credentials{Source: "anonymous (no entry for unlisted.lab.test in docker config " + helpers + ")"}, "anonymous (no entry"},
		{store, "reg.lab.test", Credentials{Username: "storeuser", Password: "s3cret-pass-store", Source: "credential helper docker-credential-test"}, "user storeuser from credential helper"},
		{store, "other.lab.test", Credentials{Source: "anonymous (credential helper docker-credential-test has no credentials for other.lab.test)"}, "anonymous (credential helper"},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.config)+"/"+tt.host, func(t *testing.T) {
			got, err := LoadCredentials(tt.config, tt.host)
			if err != nil {
				t.Fatalf("LoadCredentials(%q, %q) error = %v", tt.config, tt.host, err)
			}
			if got != tt.want {
				t.Errorf("LoadCredentials(%q, %q) = %s %q, want %s %q", tt.config, tt.host, got, got.Source, tt.want, tt.want.Source)
			}
			if s := got.String(); !strings.HasPrefix(s, tt.wantString) {
				t.Errorf("LoadCredentials(%q, %q).String() = %q, want prefix %q", tt.config, tt.host, s, tt.wantString)
			}
			if got.Anonymous() != (tt.want.Username == "" && tt.want.Password == "" && tt.want.IdentityToken == "" && tt.want.RegistryToken == "") {
				t.Errorf("LoadCredentials(%q, %q).Anonymous() = %v", tt.config, tt.host, got.Anonymous())
			}
			assertNoSecret(t, "String()", got.String())
			assertNoSecret(t, "%v", fmt.Sprintf("%v", got))
			assertNoSecret(t, "%+v", fmt.Sprintf("%+v", got))
			assertNoSecret(t, "%#v", fmt.Sprintf("%#v", got))
			j, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			assertNoSecret(t, "json", string(j))
		})
	}
}

func TestLoadCredentialsErrors(t *testing.T) {
	installHelpers(t)
	td := testdataDir(t)
	helpers := filepath.Join(td, "valid-helpers.json")
	missingFile := filepath.Join(td, "no-such-config.json")
	tests := []struct {
		name, config, host string
		want               []string // substrings of the error
		is                 error
	}{
		{"missing helper", helpers, "missing.lab.test", []string{"credential helper docker-credential-pullpath-no-such-helper: not found in PATH"}, exec.ErrNotFound},
		{"failing helper", helpers, "fail.lab.test", []string{"credential helper docker-credential-testfail: get fail.lab.test failed: exit status 1: error getting credentials", "rejected"}, nil},
		{"hanging helper", helpers, "slow.lab.test", []string{"credential helper docker-credential-testslow: timed out after 500ms"}, nil},
		{"helper output not JSON", helpers, "badjson.lab.test", []string{"credential helper docker-credential-test: get badjson.lab.test: output is not the helper JSON"}, nil},
		{"missing config file", missingFile, "reg.lab.test", []string{"docker config " + missingFile + ": no such file"}, fs.ErrNotExist},
		{"malformed JSON", filepath.Join(td, "invalid-json.json"), "reg.lab.test", []string{"invalid JSON: "}, nil},
		{"auth not base64", filepath.Join(td, "invalid-auth-base64.json"), "reg.lab.test", []string{`auths "reg.lab.test": "auth" is not valid base64`}, nil},
		{"auth without colon", filepath.Join(td, "invalid-auth-nocolon.json"), "reg.lab.test", []string{`"auth" does not decode to user:password`}, nil},
		{"auth wrong type", filepath.Join(td, "invalid-auth-type.json"), "reg.lab.test", []string{`invalid JSON: field "auths.auth" must be string, not a number`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			got, err := LoadCredentialsWith(context.Background(), tt.config, tt.host, testHelperTimeout)
			if took := time.Since(start); took > 4*time.Second {
				t.Errorf("LoadCredentials(%q, %q) took %v, want the helper bounded", tt.config, tt.host, took)
			}
			if err == nil {
				t.Fatalf("LoadCredentials(%q, %q) = %s, want error", tt.config, tt.host, got)
			}
			var ce *CredentialsError
			if !errors.As(err, &ce) {
				t.Errorf("LoadCredentials(%q, %q) error type %T, want *CredentialsError", tt.config, tt.host, err)
			}
			msg := err.Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("LoadCredentials(%q, %q) error = %q, want it to contain %q", tt.config, tt.host, msg, w)
				}
			}
			if strings.ContainsAny(msg, "\r\n") {
				t.Errorf("LoadCredentials(%q, %q) error = %q, want one line", tt.config, tt.host, msg)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("LoadCredentials(%q, %q) error = %v, want errors.Is %v", tt.config, tt.host, err, tt.is)
			}
			assertNoSecret(t, "error", msg)
		})
	}
}

func TestCredentialsString(t *testing.T) {
	tests := []struct {
		c    Credentials
		want string
	}{
		{Credentials{}, "anonymous"},
		{Credentials{Source: "anonymous"}, "anonymous"},
		{Credentials{Username: "alice", Password: "s3cret-pass-alice", Source: "docker config /x"}, "user alice from docker config /x"},
		{Credentials{Username: "alice", Source: "flags"}, "user alice without a password from flags"},
		{Credentials{Username: "AWS", IdentityToken: "s3cret-identity-token", Source: "flags"}, "identity token for user AWS from flags"},
		{Credentials{RegistryToken: "s3cret-registry-token", Password: "s3cret-pass-bob", Source: "flags"}, "registry token from flags"},
	}
	for _, tt := range tests {
		if got := tt.c.String(); got != tt.want {
			t.Errorf("Credentials.String() = %q, want %q", got, tt.want)
		}
		assertNoSecret(t, "String()", tt.c.String())
		assertNoSecret(t, "%+v", fmt.Sprintf("%+v", tt.c))
	}
}

func assertNoSecret(t *testing.T, what, s string) {
	t.Helper()
	for _, sec := range secrets {
		if strings.Contains(s, sec) {
			t.Errorf("%s = %q holds the secret %q", what, s, sec)
		}
	}
}
