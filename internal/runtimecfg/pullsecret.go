package runtimecfg

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Pull secrets as the kubelet reads them (k8s.io/kubernetes
// pkg/credentialprovider/secrets): a kubernetes.io/dockerconfigjson Secret's
// .dockerconfigjson ({"auths": {...}}) or a kubernetes.io/dockercfg
// Secret's .dockercfg (the bare map), each entry's username and password,
// or auth (base64 "user:password", which wins). Identity and registry
// tokens in an entry are not read by the kubelet, so not here either.

// maxPullSecret bounds what is read of one pull secret file.
const maxPullSecret = 1 << 20

// PullSecret is one file of --pull-secret: the entries it holds.
type PullSecret struct {
	File    string
	Name    string // the Secret's metadata.name, "" for a bare .dockerconfigjson
	Entries []KeyringEntry
	// Skipped says why the kubelet would pull without this secret (a
	// Secret volume with neither key: the Secret is missing from the
	// namespace, or is not a docker pull secret); Entries is then empty.
	Skipped string
}

// KeyringEntry is one registry key and its credentials.
type KeyringEntry struct {
	Key   string
	Creds Credentials
}

type secretObject struct {
	APIVersion string                           `json:"apiVersion"`
	Kind       string                           `json:"kind"`
	Type       string                           `json:"type"`
	Metadata   struct{ Name, Namespace string } `json:"metadata"`
	Data       map[string]string                `json:"data"`
	StringData map[string]string                `json:"stringData"`
}

type dockerConfigEntry struct {
	Username string `json:"username"`
	Password string `json:"password"`
	Auth     string `json:"auth"`
}

// LoadPullSecret reads a Secret (YAML or JSON) of type
// kubernetes.io/dockerconfigjson or kubernetes.io/dockercfg, or a bare
// .dockerconfigjson. Errors are one line naming the file; no secret value
// is ever part of one.
//
// A directory is a Secret mounted as a volume (optional, as sweep mounts
// the Pod's imagePullSecrets): its .dockerconfigjson, else its .dockercfg,
// named after the directory; with neither, the kubelet would pull without
// it (it skips a missing Secret, and one of another type), and so does the
// walk: Skipped says so. A file named .dockercfg is the legacy bare map.
func LoadPullSecret(path string) (*PullSecret, error) {
	fail := func(format string, a ...any) error {
		return fmt.Errorf("pull secret %s: %s", path, fmt.Sprintf(format, a...))
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return loadSecretVolume(path)
	}
	b, err := readBounded(path, maxPullSecret)
	if err != nil {
		return nil, fail("%v", err)
	}
	if filepath.Base(path) == ".dockercfg" {
		return parseDockerConfig(path, &PullSecret{File: path}, b, true)
	}
	j, err := yamlOrJSON(b)
	if err != nil {
		return nil, fail("%v (want a kubernetes.io/dockerconfigjson Secret or a .dockerconfigjson)", err)
	}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(j, &probe); err != nil {
		return nil, fail("%s (want a JSON object)", jsonReason(err))
	}
	ps := &PullSecret{File: path}
	var cfgJSON []byte
	legacy := false
	switch {
	case probe["kind"] != nil:
		var s secretObject
		if err := json.Unmarshal(j, &s); err != nil {
			return nil, fail("%s (want a Secret)", jsonReason(err))
		}
		if s.Kind != "Secret" {
			return nil, fail("kind %q, want Secret (or a bare .dockerconfigjson)", s.Kind)
		}
		ps.Name = s.Metadata.Name
		key := ".dockerconfigjson"
		switch s.Type {
		case "kubernetes.io/dockerconfigjson":
		case "kubernetes.io/dockercfg":
			key, legacy = ".dockercfg", true
		default:
			// The kubelet skips such a Secret: no credentials from it.
			return nil, fail("type %q, want kubernetes.io/dockerconfigjson (the kubelet ignores other Secret types for pulls)", s.Type)
		}
		if v, ok := s.StringData[key]; ok {
			cfgJSON = []byte(v)
		} else if v, ok := s.Data[key]; ok {
			d, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v))
			if err != nil {
				return nil, fail("data[%s] is not base64", key)
			}
			cfgJSON = d
		} else {
			return nil, fail("no data[%s] (the kubelet ignores a %s Secret without it)", key, s.Type)
		}
	case probe["auths"] != nil:
		cfgJSON = j
	default:
		return nil, fail("neither a Secret nor a .dockerconfigjson (want kind: Secret, or an \"auths\" object)")
	}
	return parseDockerConfig(path, ps, cfgJSON, legacy)
}

// parseDockerConfig reads a .dockerconfigjson ({"auths": {...}}) or, when
// legacy, a .dockercfg (the bare map) into ps's entries.
func parseDockerConfig(path string, ps *PullSecret, cfgJSON []byte, legacy bool) (*PullSecret, error) {
	fail := func(format string, a ...any) error {
		return fmt.Errorf("pull secret %s: %s", path, fmt.Sprintf(format, a...))
	}
	var auths map[string]json.RawMessage
	if legacy {
		if err := json.Unmarshal(cfgJSON, &auths); err != nil {
			return nil, fail(".dockercfg is not a JSON object of registries (%s)", jsonReason(err))
		}
	} else {
		var cfg struct {
			Auths map[string]json.RawMessage `json:"auths"`
		}
		if err := json.Unmarshal(cfgJSON, &cfg); err != nil {
			return nil, fail(".dockerconfigjson is not JSON with \"auths\" (%s)", jsonReason(err))
		}
		auths = cfg.Auths
	}
	if len(auths) == 0 {
		return nil, fail("no registry in auths")
	}
	src, origin := "pull secret "+path, "secret "+filepath.Base(path)
	if ps.Name != "" {
		src, origin = "pull secret "+ps.Name+" ("+path+")", "secret "+ps.Name
	}
	for _, key := range sortedKeys(auths) {
		var e dockerConfigEntry
		if err := json.Unmarshal(auths[key], &e); err != nil {
			return nil, fail("auths[%q] is not an object with username/password/auth", key)
		}
		c := Credentials{Username: e.Username, Password: e.Password, Source: src + " auths " + fmt.Sprintf("%q", key), Origin: origin}
		if e.Auth != "" {
			u, p, err := decodeAuth(e.Auth)
			if err != nil {
				return nil, fail("auths[%q].auth: %v", key, err)
			}
			c.Username, c.Password = u, p
		}
		ps.Entries = append(ps.Entries, KeyringEntry{Key: key, Creds: c})
	}
	return ps, nil
}

// loadSecretVolume reads a Secret volume: the kubelet's key for a
// kubernetes.io/dockerconfigjson Secret first, then a dockercfg one's.
func loadSecretVolume(dir string) (*PullSecret, error) {
	name := filepath.Base(filepath.Clean(dir))
	for _, k := range []struct {
		key    string
		legacy bool
	}{{".dockerconfigjson", false}, {".dockercfg", true}} {
		f := filepath.Join(dir, k.key)
		b, err := readBounded(f, maxPullSecret)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("pull secret %s: %v", f, err)
		}
		return parseDockerConfig(f, &PullSecret{File: f, Name: name}, b, k.legacy)
	}
	return &PullSecret{File: dir, Name: name,
		Skipped: fmt.Sprintf("secret %s holds neither .dockerconfigjson nor .dockercfg (missing from the namespace, or not a docker pull secret): the kubelet pulls without it", name)}, nil
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sortStrings(ks)
	return ks
}
