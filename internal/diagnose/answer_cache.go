package diagnose

import (
	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// cacheUpstream are the codes of a pull-through cache's failed access to
// its upstream: the node's path is fine, the cache's is not.
var cacheUpstream = map[verdict.Code]bool{
	verdict.CacheUpstreamUnauthorized: true, verdict.CacheUpstreamRateLimited: true, verdict.CacheUpstreamFailed: true,
}

// cacheFirst puts the audit's cache-rule changes (the rule, the
// permission, the secret: audit.IsCacheCheck) first when the answer is a
// cache's upstream access, or when the audit's only failures are the
// cache's; it says whether the answer concerns a cache.
func cacheFirst(a *report.DiagnoseAnswer) bool {
	var cache, rest []report.Change
	for _, ch := range a.Changes {
		if audit.IsCacheCheck(ch.Check) {
			cache = append(cache, ch)
		} else {
			rest = append(rest, ch)
		}
	}
	if !cacheUpstream[a.Code] && (len(cache) == 0 || len(rest) > 0) {
		return false
	}
	a.Changes = append(cache, rest...)
	return true
}

// cacheProof is the proof's step for a cache: an image the cache already
// holds is served without its upstream, so only a pull that misses proves
// the cache's access.
const cacheProof = "then pull an image the cache does not hold yet through the same rule (a new tag or repository): an image already cached is served without the upstream and proves nothing about the cache's access to it"
