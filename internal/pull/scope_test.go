//go:build !fuzzonly

package pull

import (
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/labsvc"
	"github.com/pullpath/pullpath/internal/runtimecfg"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Scope versus credentials, against the lab's real token service and
// registry: the probe knows which credentials it sent and what the token
// service said.
func TestScopeVersusCredentials(t *testing.T) {
	sentence := "this identity is valid but may not pull lab/app; or lab/app does not exist and the registry will not say so to this identity"
	anonymous := func(o *Options, _ *labsvc.Stack) { o.DockerConfig = "" }
	for _, tc := range []struct {
		name      string
		cfg       labsvc.StackConfig
		mut       func(*Options, *labsvc.Stack)
		code      verdict.Code
		cause     verdict.Cause
		wantScope bool
	}{
		{"token 403 for accepted credentials is scope", labsvc.StackConfig{UserCannotRead: true, DenyMode: labsvc.DenyForbidden}, nil, verdict.AuthForbidden, verdict.CauseForbidden, true},
		{"empty grant for accepted credentials is scope", labsvc.StackConfig{UserCannotRead: true, DenyMode: labsvc.DenyEmpty}, nil, verdict.AuthForbidden, verdict.CauseForbidden, true},
		{"token 403 for an anonymous request is unauthorized", labsvc.StackConfig{DenyMode: labsvc.DenyForbidden}, anonymous, verdict.AuthUnauthorized, verdict.CauseUnauthorized, false},
		{"empty grant for an anonymous request stays ambiguous (unauthorized)", labsvc.StackConfig{DenyMode: labsvc.DenyEmpty}, anonymous, verdict.AuthAmbiguous, verdict.CauseUnauthorized, false},
		{"rejected credentials are unauthorized", labsvc.StackConfig{WrongPassword: true}, nil, verdict.AuthUnauthorized, verdict.CauseUnauthorized, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, _ := probeStack(t, tc.cfg, tc.mut)
			v := rep.Verdict
			if v.Code != tc.code || v.Cause != tc.cause {
				t.Fatalf("verdict %s %s (%s), want %s %s", v.Code, v.Cause, v.Summary, tc.code, tc.cause)
			}
			if got := strings.Contains(v.Summary, sentence); got != tc.wantScope {
				t.Errorf("summary %q: scope sentence %v, want %v", v.Summary, got, tc.wantScope)
			}
		})
	}
}

func TestIdentityDecision(t *testing.T) {
	user := runtimecfg.Credentials{Username: "u", Password: "p"}
	for _, tc := range []struct {
		creds runtimecfg.Credentials
		r     refusal
		code  verdict.Code
		scope bool
	}{
		{user, refusedTokenScope, verdict.AuthForbidden, true},
		{user, refusedInsufficient, verdict.AuthForbidden, true},
		{user, refusedRegistryDenied, verdict.RegistryForbidden, true},
		{runtimecfg.Credentials{RegistryToken: "t"}, refusedRegistryDenied, verdict.RegistryForbidden, true},
		{runtimecfg.Credentials{}, refusedTokenScope, verdict.AuthUnauthorized, false},
		{runtimecfg.Credentials{}, refusedInsufficient, verdict.AuthAmbiguous, false},
		{runtimecfg.Credentials{}, refusedRegistryDenied, verdict.RegistryUnauthorized, false},
	} {
		code, scope := identityDecision(tc.creds, tc.r)
		if code != tc.code || scope != tc.scope {
			t.Errorf("identityDecision(%s, %d) = %s %v, want %s %v", tc.creds, tc.r, code, scope, tc.code, tc.scope)
		}
	}
}
