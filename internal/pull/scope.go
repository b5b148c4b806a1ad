package pull

import (
	"fmt"

	"github.com/pullpath/pullpath/internal/runtimecfg"
	"github.com/pullpath/pullpath/internal/verdict"
)

// refusal is an answer that refuses the pull for an identity reason.
type refusal int

const (
	refusedTokenScope     refusal = iota // the token service answered 403 for the scope
	refusedInsufficient                  // the registry answered 401 insufficient_scope, or the token granted no pull
	refusedRegistryDenied                // the registry answered 403 / DENIED
)

// identityDecision is the scope-versus-credentials rule: a refusal after
// credentials the token service (or the registry) accepted is the
// identity's scope, cause forbidden; only an anonymous identity is
// unauthorized (credentials missing). Credentials the token service
// rejects never get here: that is its own 401 (AUTH_UNAUTHORIZED).
func identityDecision(creds runtimecfg.Credentials, r refusal) (code verdict.Code, scope bool) {
	if creds.Anonymous() {
		switch r {
		case refusedTokenScope:
			return verdict.AuthUnauthorized, false
		case refusedInsufficient:
			// Docker Hub answers the same to an anonymous pull of a
			// missing repository: still ambiguous, cause unauthorized.
			return verdict.AuthAmbiguous, false
		}
		return verdict.RegistryUnauthorized, false
	}
	switch r {
	case refusedTokenScope, refusedInsufficient:
		return verdict.AuthForbidden, true
	}
	return verdict.RegistryForbidden, true
}

// scopeSentence says what a refused scope after accepted credentials means.
func scopeSentence(repo string) string {
	return fmt.Sprintf("this identity is valid but may not pull %s; or %s does not exist and the registry will not say so to this identity", repo, repo)
}
