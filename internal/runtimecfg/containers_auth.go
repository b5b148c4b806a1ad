package runtimecfg

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// containersAuthFileHelper is the built-in helper name of
// registries.conf's credential-helpers: the auth files themselves
// (sysregistriesv2.AuthenticationFileHelper).
const containersAuthFileHelper = "containers-auth.json"

// ContainersAuthOptions say where containers/image looks for a
// registry's credentials when CRI-O has none from the kubelet.
type ContainersAuthOptions struct {
	Root, Home string // as in RegistriesConfOptions
	// AuthFile is CRI-O's global_auth_file (SystemContext.AuthFilePath):
	// when set, the only auth file read.
	AuthFile string
	// Helpers are registries.conf's credential-helpers (nil: the default,
	// containers-auth.json alone).
	Helpers []string
	// HelperOptions bound an external helper's run.
	HelperOptions CredentialOptions
}

// AuthFiles are the auth files containers/image reads for root, in order
// (pkg/docker/config getAuthFilePaths): global_auth_file alone when CRI-O
// sets it; else /run/containers/0/auth.json ($XDG_RUNTIME_DIR is not set
// for a system service), $HOME/.config/containers/auth.json,
// $HOME/.docker/config.json and $HOME/.dockercfg (legacy format). Node
// paths joined to Root.
func (o ContainersAuthOptions) AuthFiles() []authFile {
	ro := RegistriesConfOptions{Root: o.Root, Home: o.Home}
	ro.defaults()
	files := []authFile{{name: "/run/containers/0/auth.json"}, {name: filepath.Join(ro.Home, ".config/containers/auth.json")},
		{name: filepath.Join(ro.Home, ".docker/config.json")}, {name: filepath.Join(ro.Home, ".dockercfg"), legacy: true}}
	if o.AuthFile != "" {
		files = []authFile{{name: o.AuthFile}}
	}
	for i := range files {
		files[i].path = ro.node(files[i].name)
	}
	return files
}

// authFile is one auth file (its node path, and where it is read from
// here) and whether it is in the legacy .dockercfg format (the bare auths
// map).
type authFile struct {
	name, path string
	legacy     bool
}

// containersAuthEntry is what the library reads of an auths entry: auth
// (base64 user:password) and identitytoken. username and password fields
// are not read.
type containersAuthEntry struct {
	Auth          string `json:"auth"`
	IdentityToken string `json:"identitytoken"`
}

type containersAuthJSON struct {
	Auths       map[string]containersAuthEntry `json:"auths"`
	CredHelpers map[string]string              `json:"credHelpers"`
}

// ContainersCredentials are the credentials containers/image sends to the
// source named by ref (the reference as rewritten for a mirror) when the
// kubelet passed none for it (pkg/docker/config getCredentialsWithHomeDir):
//
//  1. for each of credential-helpers in order (default: the auth files):
//     the auth files, or docker-credential-NAME for the registry;
//  2. in each auth file: credHelpers[registry] runs that helper; else the
//     auths key for the repository, then each parent namespace, then the
//     registry (repository keys are an extension of containers'
//     auth.json that docker config.json files get too); else any key
//     that names the registry once normalized (https://, /v1/,
//     docker.io = index.docker.io = registry-1.docker.io);
//  3. an entry whose auth decodes to nothing is skipped (the next file is
//     read); the first credentials found win;
//  4. errors (an unreadable or invalid file, a failing helper) stop only
//     their helper; with no credentials found anywhere they fail the pull.
//
// Every error is a *CredentialsError without any secret.
func ContainersCredentials(ctx context.Context, o ContainersAuthOptions, ref Ref) (Credentials, error) {
	key := ref.Name()
	registry := ref.Registry
	helpers := o.Helpers
	if helpers == nil {
		helpers = []string{containersAuthFileHelper}
	}
	var errs []string
	var first error
	for _, h := range helpers {
		var c Credentials
		var err error
		if h == containersAuthFileHelper {
			c, err = credsFromAuthFiles(ctx, o, key, registry)
		} else {
			c, err = runHelper(ctx, h, registry, helperTimeout(o.HelperOptions))
		}
		if err != nil {
			errs = append(errs, err.Error())
			if first == nil {
				first = err
			}
			continue
		}
		if !c.Anonymous() {
			return c, nil
		}
	}
	if len(errs) > 0 {
		return Credentials{}, &CredentialsError{Source: "containers/image credentials for " + key, Reason: "errors looking up credentials: " + strings.Join(errs, "; "), Err: first}
	}
	where := make([]string, 0, 4)
	for _, f := range o.AuthFiles() {
		where = append(where, f.name)
	}
	return Credentials{Source: fmt.Sprintf("anonymous (no entry for %s in %s)", key, strings.Join(where, ", "))}, nil
}

func helperTimeout(o CredentialOptions) time.Duration {
	if o.HelperTimeout > 0 {
		return o.HelperTimeout
	}
	return DefaultHelperTimeout
}

// credsFromAuthFiles is getCredentialsFromAuthFiles.
func credsFromAuthFiles(ctx context.Context, o ContainersAuthOptions, key, registry string) (Credentials, error) {
	for _, f := range o.AuthFiles() {
		c, err := credsInFile(ctx, o, f, key, registry)
		if err != nil {
			return Credentials{}, err
		}
		if !c.Anonymous() {
			return c, nil
		}
	}
	return Credentials{}, nil
}

// credsInFile is findCredentialsInFile.
func credsInFile(ctx context.Context, o ContainersAuthOptions, f authFile, key, registry string) (Credentials, error) {
	src := "auth file " + f.name
	b, err := os.ReadFile(f.path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Credentials{}, nil
		}
		return Credentials{}, &CredentialsError{Source: src, Reason: pathErrReason(err), Err: err}
	}
	var file containersAuthJSON
	if f.legacy {
		err = json.Unmarshal(b, &file.Auths)
	} else {
		err = json.Unmarshal(b, &file)
	}
	if err != nil {
		return Credentials{}, &CredentialsError{Source: src, Reason: "invalid JSON: " + jsonReason(err), Err: errors.New("invalid JSON")}
	}
	if h, ok := file.CredHelpers[registry]; ok {
		return runHelper(ctx, h, registry, helperTimeout(o.HelperOptions))
	}
	for _, k := range authKeyLookupOrder(key, registry, f.legacy) {
		if e, ok := file.Auths[k]; ok {
			return decodeContainersAuth(src, k, e)
		}
	}
	norm := normalizeAuthRegistry(registry)
	keys := make([]string, 0, len(file.Auths))
	for k := range file.Auths {
		keys = append(keys, k)
	}
	sort.Strings(keys) // the library walks a map; sorted, the choice is stable
	for _, k := range keys {
		if normalizeAuthFileKey(k, f.legacy) == norm {
			return decodeContainersAuth(src, k, file.Auths[k])
		}
	}
	return Credentials{}, nil
}

// authKeyLookupOrder: the key, then each parent namespace, down to the
// registry; the registry only in a legacy file.
func authKeyLookupOrder(key, registry string, legacy bool) []string {
	if legacy {
		return []string{registry}
	}
	var out []string
	for {
		out = append(out, key)
		i := strings.LastIndex(key, "/")
		if i == -1 {
			return out
		}
		key = key[:i]
	}
}

func normalizeAuthFileKey(k string, legacy bool) string {
	s := strings.TrimPrefix(strings.TrimPrefix(k, "http://"), "https://")
	if legacy || s != k {
		s, _, _ = strings.Cut(s, "/")
	}
	return normalizeAuthRegistry(s)
}

func normalizeAuthRegistry(r string) string {
	switch r {
	case "registry-1.docker.io", "docker.io":
		return "index.docker.io"
	}
	return r
}

// decodeContainersAuth is decodeDockerAuth: auth must be base64; one
// without a colon is skipped (empty credentials), as docker does.
func decodeContainersAuth(src, key string, e containersAuthEntry) (Credentials, error) {
	raw, err := base64.StdEncoding.DecodeString(e.Auth)
	if err != nil {
		return Credentials{}, &CredentialsError{Source: src, Reason: fmt.Sprintf("auths %q: \"auth\" is not valid base64", key)}
	}
	user, pass, ok := strings.Cut(string(raw), ":")
	if !ok {
		return Credentials{}, nil
	}
	return Credentials{Username: user, Password: strings.Trim(pass, "\x00"), IdentityToken: e.IdentityToken, Source: fmt.Sprintf("%s (auths %q)", src, key)}, nil
}
