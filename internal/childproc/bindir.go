package childproc

import (
	"fmt"
	"os"
	"path/filepath"
)

// BinDirEnv names the environment variable that overrides where the
// binaries of hack/controlplane.sh are (etcd, kube-apiserver, the lab
// clusters' kubelet, ...).
const BinDirEnv = "PULLPATH_CONTROLPLANE_BIN"

// BinDir is dir when set, else $PULLPATH_CONTROLPLANE_BIN, else
// test/controlplane/bin of the first folder above the working directory
// that holds a go.mod (where hack/controlplane.sh builds them).
func BinDir(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	if env := os.Getenv(BinDirEnv); env != "" {
		return env, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find the binaries' folder: %w", err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, "test", "controlplane", "bin"), nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s to find test/controlplane/bin from (set %s)", wd, BinDirEnv)
		}
	}
}

// MissingBinary is the path of the first of names that is not an
// executable file in dir, or "" when all are there.
func MissingBinary(dir string, names ...string) string {
	for _, n := range names {
		p := filepath.Join(dir, n)
		if st, err := os.Stat(p); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return p
		}
	}
	return ""
}
