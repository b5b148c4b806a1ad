package labsvc

import (
	"context"
	"crypto"
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dtoken "github.com/distribution/distribution/v3/registry/auth/token"
	"github.com/go-jose/go-jose/v4"
)

func startToken(t *testing.T, mode string) *TokenServer {
	t.Helper()
	signer, err := NewTokenSigner()
	if err != nil {
		t.Fatalf("NewTokenSigner: %v", err)
	}
	ts, err := StartTokenServer(context.Background(), TokenConfig{
		Addr: "127.0.0.11:0", Issuer: "iss", Service: "registry.lab.test", Signer: signer,
		Users: map[string]User{
			"alice": {Password: "a-pass", Read: []string{"lab/*"}},
			"bob":   {Password: "b-pass", Read: []string{"other/app"}},
		},
		AnonymousRead: []string{"public/app"},
		DenyMode:      mode,
	})
	if err != nil {
		t.Fatalf("StartTokenServer: %v", err)
	}
	t.Cleanup(func() { _ = ts.Close() })
	return ts
}

type tokenAnswer struct {
	Token        string `json:"token"`
	AccessToken  string `json:"access_token"`
	ExpiresIn    int    `json:"expires_in"`
	IssuedAt     string `json:"issued_at"`
	RefreshToken string `json:"refresh_token"`
	Errors       []struct {
		Code string `json:"code"`
	} `json:"errors"`
}

// verifyWithDistribution checks raw with distribution's own verifier and
// the JWKS the registry would load, returning the granted access.
func verifyWithDistribution(t *testing.T, ts *TokenServer, raw string) []*dtoken.ResourceActions {
	t.Helper()
	jwksBytes, err := ts.Signer().JWKS()
	if err != nil {
		t.Fatalf("JWKS: %v", err)
	}
	var set jose.JSONWebKeySet
	if err := json.Unmarshal(jwksBytes, &set); err != nil {
		t.Fatalf("parse JWKS: %v", err)
	}
	keys := map[string]crypto.PublicKey{}
	for _, k := range set.Keys {
		keys[k.KeyID] = k.Public().Key
	}
	tok, err := dtoken.NewToken(raw, []jose.SignatureAlgorithm{jose.ES256})
	if err != nil {
		t.Fatalf("distribution NewToken: %v", err)
	}
	claims, err := tok.Verify(dtoken.VerifyOptions{TrustedIssuers: []string{"iss"}, AcceptedAudiences: []string{"registry.lab.test"}, TrustedKeys: keys})
	if err != nil {
		t.Fatalf("distribution Verify: %v", err)
	}
	return claims.Access
}

func getToken(t *testing.T, ts *TokenServer, user, pass, scope string) (int, tokenAnswer) {
	t.Helper()
	q := url.Values{"service": {"registry.lab.test"}}
	if scope != "" {
		q.Set("scope", scope)
	}
	req, _ := http.NewRequest(http.MethodGet, ts.URL()+"/token?"+q.Encode(), nil)
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("GET token: %v", err)
	}
	defer resp.Body.Close()
	var ans tokenAnswer
	if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil {
		t.Fatalf("token answer is not JSON: %v", err)
	}
	return resp.StatusCode, ans
}

func TestTokenServer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		mode       string
		user, pass string
		scope      string
		wantStatus int
		wantCode   string
		wantAccess string // granted repository, "" for none
	}{
		{"valid-user-read", DenyEmpty, "alice", "a-pass", "repository:lab/app:pull", 200, "", "lab/app"},
		{"valid-pull-push-grants-pull", DenyEmpty, "alice", "a-pass", "repository:lab/app:pull,push", 200, "", "lab/app"},
		{"valid-anonymous-public", DenyEmpty, "", "", "repository:public/app:pull", 200, "", "public/app"},
		{"invalid-wrong-password", DenyEmpty, "alice", "nope", "repository:lab/app:pull", 401, "UNAUTHORIZED", ""},
		{"invalid-unknown-user", DenyForbidden, "carol", "x", "repository:lab/app:pull", 401, "UNAUTHORIZED", ""},
		{"invalid-deny-empty", DenyEmpty, "bob", "b-pass", "repository:lab/app:pull", 200, "", ""},
		{"invalid-deny-forbidden", DenyForbidden, "bob", "b-pass", "repository:lab/app:pull", 403, "DENIED", ""},
		{"invalid-anonymous-forbidden", DenyForbidden, "", "", "repository:lab/app:pull", 401, "UNAUTHORIZED", ""},
		{"invalid-scope", DenyEmpty, "alice", "a-pass", "garbage", 400, "INVALID_SCOPE", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts := startToken(t, tt.mode)
			st, ans := getToken(t, ts, tt.user, tt.pass, tt.scope)
			if st != tt.wantStatus {
				t.Fatalf("GET /token as %q scope %q = %d, want %d", tt.user, tt.scope, st, tt.wantStatus)
			}
			if tt.wantCode != "" {
				if len(ans.Errors) == 0 || ans.Errors[0].Code != tt.wantCode {
					t.Errorf("errors = %+v, want code %s", ans.Errors, tt.wantCode)
				}
				return
			}
			if ans.Token == "" || ans.Token != ans.AccessToken || ans.ExpiresIn <= 0 || ans.IssuedAt == "" {
				t.Fatalf("answer %+v, want token == access_token, expires_in and issued_at", ans)
			}
			access := verifyWithDistribution(t, ts, ans.Token)
			switch {
			case tt.wantAccess == "" && len(access) != 0:
				t.Errorf("access = %+v, want none", access)
			case tt.wantAccess != "" && (len(access) != 1 || access[0].Name != tt.wantAccess || strings.Join(access[0].Actions, ",") != "pull"):
				t.Errorf("access = %+v, want pull on %s", access, tt.wantAccess)
			}
			reqs := ts.Requests()
			if len(reqs) != 1 || reqs[0].User != tt.user || reqs[0].Status != st {
				t.Errorf("recorded %+v, want one request by %q with status %d", reqs, tt.user, st)
			}
		})
	}
}

func TestTokenServerPostAndRefresh(t *testing.T) {
	t.Parallel()
	ts := startToken(t, DenyEmpty)
	c := &http.Client{Timeout: 5 * time.Second}
	post := func(form url.Values) (int, tokenAnswer) {
		resp, err := c.PostForm(ts.URL()+"/token", form)
		if err != nil {
			t.Fatalf("POST token: %v", err)
		}
		defer resp.Body.Close()
		var ans tokenAnswer
		_ = json.NewDecoder(resp.Body).Decode(&ans)
		return resp.StatusCode, ans
	}
	st, ans := post(url.Values{"grant_type": {"password"}, "username": {"alice"}, "password": {"a-pass"}, "service": {"registry.lab.test"}, "scope": {"repository:lab/app:pull"}, "access_type": {"offline"}, "client_id": {"test"}})
	if st != 200 || ans.RefreshToken == "" {
		t.Fatalf("POST password grant = %d %+v, want 200 with a refresh token", st, ans)
	}
	if a := verifyWithDistribution(t, ts, ans.AccessToken); len(a) != 1 {
		t.Errorf("password grant access = %+v, want one entry", a)
	}
	st, ans2 := post(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {ans.RefreshToken}, "service": {"registry.lab.test"}, "scope": {"repository:lab/app:pull"}})
	if st != 200 || ans2.AccessToken == "" {
		t.Fatalf("POST refresh grant = %d %+v, want 200 with a token", st, ans2)
	}
	if st, _ := post(url.Values{"grant_type": {"refresh_token"}, "refresh_token": {"bogus"}}); st != 401 {
		t.Errorf("POST bogus refresh token = %d, want 401", st)
	}
	if st, _ := post(url.Values{"grant_type": {"password"}, "username": {"alice"}, "password": {"bad"}}); st != 401 {
		t.Errorf("POST wrong password = %d, want 401", st)
	}
	for _, r := range ts.Requests() {
		b, _ := json.Marshal(r)
		if strings.Contains(string(b), "a-pass") || strings.Contains(string(b), ans.RefreshToken) {
			t.Errorf("recorded request %s holds a secret", b)
		}
	}
}

func TestTokenSignerFiles(t *testing.T) {
	t.Parallel()
	s, err := NewTokenSigner()
	if err != nil {
		t.Fatalf("NewTokenSigner: %v", err)
	}
	p := filepath.Join(t.TempDir(), "key.pem")
	if err := s.WriteKeyFile(p); err != nil {
		t.Fatalf("WriteKeyFile: %v", err)
	}
	back, err := LoadTokenSigner(p)
	if err != nil {
		t.Fatalf("LoadTokenSigner(%q): %v", p, err)
	}
	if back.KeyID != s.KeyID || !back.Key.Equal(s.Key) {
		t.Errorf("LoadTokenSigner gave key ID %q, want %q and the same key", back.KeyID, s.KeyID)
	}
	if _, err := LoadTokenSigner(filepath.Join(t.TempDir(), "missing.pem")); err == nil {
		t.Errorf("LoadTokenSigner(missing) = nil error, want an error")
	}
}
