package audit

import "sync"

// A registry's own pull-through cache (ECR pull-through cache rules, ACR
// cache rules, Artifact Registry remote repositories) is checked by each
// cloud's audit; diagnose puts those checks' changes first when the
// failing pull is a cache's upstream access (CACHE_UPSTREAM_*), and its
// proof pulls an image not yet cached. Each cloud package names its cache
// checks here.
var cacheChecks sync.Map // check id -> true

// RegisterCacheChecks names checks about a registry's pull-through cache.
func RegisterCacheChecks(ids ...string) {
	for _, id := range ids {
		cacheChecks.Store(id, true)
	}
}

// IsCacheCheck says whether a check is about a registry's pull-through
// cache (RegisterCacheChecks).
func IsCacheCheck(id string) bool {
	_, ok := cacheChecks.Load(id)
	return ok
}
