package runtimecfg

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ContainersCertDirs are the folders containers/image looks in for a
// registry's TLS files, in order (docker/docker_client.go dockerCertDir:
// $HOME/.config/containers/certs.d, then /etc/containers/certs.d, then
// /etc/docker/certs.d), as node paths.
var ContainersCertDirs = []string{"/etc/containers/certs.d", "/etc/docker/certs.d"}

// ContainersTLS is the TLS material containers/image uses for one host.
type ContainersTLS struct {
	// Dir is the one folder used (a node path): the first of the cert
	// folders that has a HOST[:PORT] subfolder ("" when none has). The
	// others are never read for this host.
	Dir string
	// CAFiles and ClientPairs are where the files are read from here
	// (under the root).
	CAFiles     []string
	ClientPairs [][2]string
	// Shadowed are HOST[:PORT] folders of later cert folders that exist
	// but are not read because Dir came first.
	Shadowed []string
}

// ContainersCertsFor finds the TLS files containers/image uses for
// hostPort (the registry part of the reference tried, "docker.io" for
// Docker Hub), the way dockerCertDir and tlsclientconfig.SetupCertificates
// do:
//
//  1. the first folder that exists of $HOME/.config/containers/certs.d/H,
//     /etc/containers/certs.d/H and /etc/docker/certs.d/H (one
//     unreadable for permissions is skipped);
//  2. in it, every *.crt is a CA added to the system roots; every *.cert
//     needs the *.key of the same name (and every *.key its *.cert), or the
//     library fails the pull: "missing key K for client certificate C".
//
// root and home are as in RegistriesConfOptions.
func ContainersCertsFor(root, home, hostPort string) (ContainersTLS, error) {
	o := RegistriesConfOptions{Root: root, Home: home}
	o.defaults()
	var t ContainersTLS
	read := ""
	dirs := append([]string{filepath.Join(o.Home, ".config/containers/certs.d")}, ContainersCertDirs...)
	for _, d := range dirs {
		p := o.node(filepath.Join(d, hostPort))
		_, err := os.Stat(p)
		switch {
		case err == nil && t.Dir == "":
			t.Dir, read = nodePath(o.Root, p), p
		case err == nil:
			t.Shadowed = append(t.Shadowed, nodePath(o.Root, p))
		case errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrPermission):
		default:
			return t, &ConfigError{File: nodePath(o.Root, p), Reason: "cannot read: " + pathErrReason(err)}
		}
	}
	if t.Dir == "" {
		return t, nil
	}
	ents, err := os.ReadDir(read)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission) {
			return t, nil
		}
		return t, &ConfigError{File: t.Dir, Reason: "cannot read: " + pathErrReason(err)}
	}
	names := map[string]bool{}
	for _, e := range ents {
		names[e.Name()] = true
	}
	for _, e := range ents {
		n := e.Name()
		switch {
		case strings.HasSuffix(n, ".crt"):
			t.CAFiles = append(t.CAFiles, filepath.Join(read, n))
		case strings.HasSuffix(n, ".cert"):
			key := strings.TrimSuffix(n, ".cert") + ".key"
			if !names[key] {
				return t, &ConfigError{File: filepath.Join(t.Dir, n), Reason: fmt.Sprintf("missing key %s for client certificate %s. Note that CA certificates should use the extension .crt", key, n)}
			}
			t.ClientPairs = append(t.ClientPairs, [2]string{filepath.Join(read, n), filepath.Join(read, key)})
		case strings.HasSuffix(n, ".key"):
			cert := strings.TrimSuffix(n, ".key") + ".cert"
			if !names[cert] {
				return t, &ConfigError{File: filepath.Join(t.Dir, n), Reason: fmt.Sprintf("missing client certificate %s for key %s", cert, n)}
			}
		}
	}
	return t, nil
}
