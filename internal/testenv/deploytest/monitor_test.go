package deploytest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The resources are deploy/monitor's manifests, each read into objects; a
// manifest the kustomization leaves out is an error naming it.
func TestKustomizeResources(t *testing.T) {
	dir, err := deployDir("monitor")
	if err != nil {
		t.Fatal(err)
	}
	files, err := kustomizeResources(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("%s: no resources", dir)
	}
	kinds := map[string]bool{}
	for _, f := range files {
		objs, err := manifestObjects(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			if o.GetKind() == "" || o.GetName() == "" {
				t.Errorf("%s: an object without kind or name: %v", f, o.Object)
			}
			kinds[o.GetKind()] = true
		}
	}
	if !kinds["DaemonSet"] || !kinds["Namespace"] {
		t.Errorf("deploy/monitor's kinds %v lack the DaemonSet or the Namespace", kinds)
	}

	tmp := t.TempDir()
	k, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"kustomization.yaml": k, "extra.yaml": []byte("kind: ConfigMap\n")} {
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := kustomizeResources(tmp); err == nil || !strings.Contains(err.Error(), "extra.yaml not in its resources") {
		t.Errorf("a manifest left out of kustomization.yaml: err %v, want one naming extra.yaml", err)
	}
}
