package explain

import (
	"path/filepath"
	"testing"

	"github.com/pullpath/pullpath/internal/verdict"
)

// areaRules are the rules written for the areas pullpath grew into (issue
// 41, and the explain parts of issues 37, 38 and 39), each from the
// runtime's source. For every one, at least one real message of
// testdata/areas must be read by it (the message that motivated it), and a
// neighbour, a message it must not swallow, keeps its own reading.
var areaRules = []struct {
	rule      string
	neighbour string
	want      verdict.Code // the neighbour's code
}{
	// CRI-O / containers/image: the runtime's own refusals
	{"short-name-no-search-registries",
		`Error: initializing source docker://registry.fedoraproject.org/idonotexist:latest: reading manifest latest in registry.fedoraproject.org/idonotexist: manifest unknown: manifest unknown`,
		verdict.ManifestNotFound},
	{"short-name-ambiguous",
		`Failed to apply default image tag "nginx:": couldn't parse image reference "nginx:": invalid reference format`,
		verdict.ReferenceInvalid},
	{"image-policy-rejected",
		`Error response from daemon: Head "https://gcr.io/v2/cloud-sql-connectors/cloud-sql-proxy/manifests/2.1.1": denied: Request is prohibited by organization's policy. vpcServiceControlsUniqueIdentifier: 5vP1c9kRq3x`,
		verdict.RegistryForbidden},
	{"image-policy-file",
		`failed to pull image "quay.io/a/b:1": open /etc/containers/auth.json: permission denied`,
		verdict.Other},
	{"registry-blocked",
		`Error response from daemon: Get "https://myacr.azurecr.io/v2/": denied: client with IP '203.0.113.7' is not allowed access. Refer https://aka.ms/acr/firewall to grant access.`,
		verdict.RegistryForbidden},
	{"registries-conf-invalid",
		`initializing source docker://quay.io/a/b:1: registry quay.io is blocked in one of ["/etc/containers/registries.conf" "/etc/containers/registries.conf.d"]`,
		verdict.RegistryBlocked},
	// IPv6 and dual-stack: the kernel's errno for a family the node cannot use
	{"dial-family-unusable",
		`failed to do request: Head "https://r.example.com/v2/a/manifests/1": dial tcp [2600:1f18:2148:bc02:cfd8:db68:ea1f:277c]:443: connect: no route to host`,
		verdict.ConnectUnreachable},
}

func TestAreaRulesHaveRealMessagesAndNeighbours(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "areas", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	after, err := filepath.Glob(filepath.Join("testdata", "areas", "after", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, after...)
	read := map[string]int{}
	for _, f := range files {
		for _, c := range readAreaCases(t, f) {
			read[Classify(c.msg).Rule]++
		}
	}
	ids := map[string]bool{}
	for _, r := range Rules {
		ids[r.ID] = true
	}
	for _, ar := range areaRules {
		if !ids[ar.rule] {
			t.Errorf("areaRules names %q, which is not a rule", ar.rule)
			continue
		}
		if read[ar.rule] == 0 {
			t.Errorf("rule %q reads none of the real messages of testdata/areas: the message that motivated it belongs there", ar.rule)
		}
		c := Classify(ar.neighbour)
		if c.Rule == ar.rule || c.Code != ar.want {
			t.Errorf("rule %q's neighbour: Classify(%q) = %s (rule %q), want %s from another rule", ar.rule, short(ar.neighbour), c.Code, c.Rule, ar.want)
		}
	}
}
