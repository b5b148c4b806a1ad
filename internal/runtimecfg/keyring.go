package runtimecfg

import (
	"net"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
)

// The kubelet's keyring (k8s.io/kubernetes pkg/credentialprovider
// keyring.go), which decides which credentials a pull tries, in which
// order. Pull secrets and credential provider responses both go through
// it; docker config.json files on the node (LoadCredentials) follow the
// Docker CLI's rules instead, as the runtime reads them.

// Keyring is the kubelet's BasicDockerKeyring: credentials indexed by a
// registry key (host[:port][/path]), looked up by image with globs per host
// label.
type Keyring struct {
	index []string
	creds map[string][]Credentials
}

// Add inserts entries (key -> credentials), as BasicDockerKeyring.Add: the
// key's scheme and a leading /v1/ or /v2/ are dropped; the index is sorted
// in reverse so that more specific paths match first.
func (k *Keyring) Add(key string, c Credentials) {
	if k.creds == nil {
		k.creds = map[string][]Credentials{}
	}
	repository := key
	if !strings.HasPrefix(repository, "https://") && !strings.HasPrefix(repository, "http://") {
		repository = "https://" + repository
	}
	parsed, err := url.Parse(repository)
	if err != nil {
		return // the kubelet logs and ignores an invalid entry
	}
	p := parsed.Path
	if strings.HasPrefix(p, "/v2/") || strings.HasPrefix(p, "/v1/") {
		p = p[3:]
	}
	k2 := parsed.Host
	if p != "" && p != "/" {
		k2 = parsed.Host + p
	}
	if _, seen := k.creds[k2]; !seen {
		k.index = append(k.index, k2)
	}
	k.creds[k2] = append(k.creds[k2], c)
	sort.Sort(sort.Reverse(sort.StringSlice(k.index)))
}

// Lookup returns every credential whose key matches image (a repository
// without tag, as the kubelet's parsers.ParseImageName gives it:
// "docker.io/library/nginx"), in index order; then, for a Docker Hub image,
// the index.docker.io entry.
func (k *Keyring) Lookup(image string) []Credentials {
	var ret []Credentials
	for _, key := range k.index {
		if ok, _ := URLsMatchStr(key, image); ok {
			ret = append(ret, k.creds[key]...)
		}
	}
	if len(ret) > 0 {
		return ret
	}
	if isDefaultRegistryMatch(image) {
		return k.creds["index.docker.io"]
	}
	return nil
}

// isDefaultRegistryMatch: the image pulls from Docker Hub by its name.
func isDefaultRegistryMatch(image string) bool {
	parts := strings.SplitN(image, "/", 2)
	if len(parts[0]) == 0 {
		return false
	}
	if len(parts) == 1 {
		return true
	}
	if parts[0] == "docker.io" || parts[0] == "index.docker.io" {
		return true
	}
	return !strings.ContainsAny(parts[0], ".:")
}

// ParseSchemelessURL parses "host[:port][/path]" as the kubelet does.
func ParseSchemelessURL(s string) (*url.URL, error) {
	u, err := url.Parse("https://" + s)
	if err != nil {
		return nil, err
	}
	u.Scheme = ""
	return u, nil
}

// URLsMatchStr reports whether target ("host[:port]/path") matches glob
// the way the kubelet matches matchImages and keyring keys: the same
// number of host labels, each matched by filepath.Match (so "*" stands for
// one label, never a dot); ports equal (no wildcard); the glob's path a
// prefix of the target's.
func URLsMatchStr(glob, target string) (bool, error) {
	g, err := ParseSchemelessURL(glob)
	if err != nil {
		return false, err
	}
	t, err := ParseSchemelessURL(target)
	if err != nil {
		return false, err
	}
	gParts, gPort := splitURL(g)
	tParts, tPort := splitURL(t)
	if gPort != tPort || len(gParts) != len(tParts) || !strings.HasPrefix(t.Path, g.Path) {
		return false, nil
	}
	for i, gp := range gParts {
		ok, err := filepath.Match(gp, tParts[i])
		if err != nil {
			return false, err
		}
		if !ok {
			return false, nil
		}
	}
	return true, nil
}

func splitURL(u *url.URL) ([]string, string) {
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		host, port = u.Host, ""
	}
	return strings.Split(host, "."), port
}

// KubeletImage is the repository the kubelet looks credentials up for:
// the normalized name without tag or digest ("nginx:1" ->
// "docker.io/library/nginx").
func KubeletImage(image string) (string, error) {
	ref, err := ParseReference(image)
	if err != nil {
		return "", err
	}
	return ref.Registry + "/" + ref.Repository, nil
}
