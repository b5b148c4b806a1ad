package main

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// TestReleaseOnePlatform runs hack/release.sh for this machine's platform
// only, with --dev (the tests' build cache, so only the link runs, to keep
// CI short; a release adds CGO_ENABLED=0 and -trimpath): the archive holds
// the README, pullpath and (on Linux) pullpath-agent, checksums.txt matches
// it, each binary says the stamped version and commit, and no krew manifest
// is written for a partial release.
func TestReleaseOnePlatform(t *testing.T) {
	if testing.Short() {
		t.Skip("links a release binary")
	}
	for _, tool := range []string{"bash", "git", "tar", "gzip", "sha256sum"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("hack/release.sh needs %s: %v", tool, err)
		}
	}
	out := t.TempDir()
	platform := runtime.GOOS + "/" + runtime.GOARCH
	cmd := exec.Command("bash", "../../hack/release.sh", "--version", "v0.0.0-test", "--platform", platform, "--out", out, "--dev")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hack/release.sh: %v\n%s", err, b)
	}
	name := "pullpath_v0.0.0-test_" + runtime.GOOS + "_" + runtime.GOARCH + ".tar.gz"
	archive := filepath.Join(out, name)
	b, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	checksums, err := os.ReadFile(filepath.Join(out, "checksums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if want := hex.EncodeToString(sum[:]) + "  " + name + "\n"; string(checksums) != want {
		t.Errorf("checksums.txt = %q, want %q", checksums, want)
	}
	if _, err := os.Stat(filepath.Join(out, "pullpath.yaml")); err == nil {
		t.Errorf("a one-platform release wrote the krew manifest")
	}

	dir := t.TempDir()
	bin, agent := filepath.Join(dir, "pullpath"), filepath.Join(dir, "pullpath-agent")
	names := extract(t, archive, map[string]string{"pullpath": bin, "pullpath-agent": agent})
	if strings.Join(names, ",") != "README.md,pullpath,pullpath-agent" {
		t.Errorf("archive holds %v, want [README.md pullpath pullpath-agent]", names)
	}
	commit, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []string{bin, agent} {
		v, err := exec.Command(b, "version").Output()
		if err != nil {
			t.Fatalf("%s version: %v", filepath.Base(b), err)
		}
		want := filepath.Base(b) + " v0.0.0-test (commit " + string(commit[:12]) + ", " + runtime.Version() + ", " + platform + ")\n"
		if string(v) != want {
			t.Errorf("released %s version = %q, want %q", filepath.Base(b), v, want)
		}
	}
	oneCLI(t, bin, agent)
}

// oneCLI checks the released pair: pullpath runs every command itself
// (nothing beside it to hand a command to), and pullpath-agent is the
// node's probe (JSON) and nothing else of the CLI's.
func oneCLI(t *testing.T, bin, agent string) {
	t.Helper()
	run := func(name string, args ...string) (string, int) {
		t.Helper()
		out, err := exec.Command(name, args...).CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("%s %v: %v", name, args, err)
		}
		return string(out), code
	}
	for _, args := range [][]string{{"diagnose", "--help"}, {"sweep", "--help"}, {"aws", "audit", "--help"}, {"azure", "audit", "--help"}, {"gcp", "audit", "--help"}, {"monitor", "--help"}, {"lab", "--help"}, {"probe", "--help"}, {"runtime-env", "--help"}} {
		if got, code := run(bin, args...); code != 0 || !strings.Contains(got, "Usage:") || !strings.Contains(got, "pullpath "+args[0]) {
			t.Errorf("pullpath %v = exit %d, %q; want its help, exit 0", args, code, got)
		}
	}
	if got, code := run(bin, "sweep", "--cleanup", "extra"); code != 1 || strings.Count(strings.TrimSpace(got), "\n") != 0 {
		t.Errorf("pullpath sweep --cleanup extra = exit %d, %q; want exit 1 and one line", code, got)
	}
	events := filepath.Join(t.TempDir(), "events.txt")
	if err := os.WriteFile(events, []byte("Failed to pull image \"r.example/a:1\": dial tcp 10.0.0.1:443: i/o timeout\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, code := run(bin, "explain", "--from", events, "-o", "json"); code == 0 || code == 1 || !strings.Contains(got, "ExplainReport") {
		t.Errorf("pullpath explain --from = exit %d, %q; want the report and its condition's exit code", code, got)
	}
	if got, code := run(agent, "probe", "--help"); code != 0 || !strings.Contains(got, "pullpath-agent probe IMAGE") {
		t.Errorf("pullpath-agent probe --help = exit %d, %q; want its usage, exit 0", code, got)
	}
	if got, code := run(agent, "probe", "r.example/a:1", "-o", "text"); code != 1 || !strings.Contains(got, "json only") {
		t.Errorf("pullpath-agent probe -o text = exit %d, %q; want exit 1 naming json as its one format", code, got)
	}
}

// extract reads a .tar.gz, writing the members named in to to their paths,
// and returns every member's name.
func extract(t *testing.T, archive string, to map[string]string) []string {
	t.Helper()
	f, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if dst, ok := to[h.Name]; ok {
			w, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY, 0o755)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := io.Copy(w, tr); err != nil {
				t.Fatal(err)
			}
			w.Close()
		}
	}
}

// TestKrewManifest checks plugins/pullpath.yaml as hack/release.sh renders
// it: a krew Plugin with one entry per released platform, each selecting
// its os/arch, pointing at that platform's archive, with its checksum.
func TestKrewManifest(t *testing.T) {
	b, err := os.ReadFile("../../plugins/pullpath.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := strings.ReplaceAll(string(b), "${VERSION}", "v9.9.9")
	platforms := []string{"linux/amd64", "linux/arm64", "darwin/amd64", "darwin/arm64"}
	for _, p := range platforms {
		s = strings.ReplaceAll(s, "${SHA256_"+strings.Replace(p, "/", "_", 1)+"}", strings.Repeat(p[:1], 64))
	}
	if strings.Contains(s, "${") {
		t.Fatalf("plugins/pullpath.yaml has a placeholder hack/release.sh does not fill: %s", s[strings.Index(s, "${"):][:40])
	}
	var m struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct{ Name string }
		Spec       struct {
			Version   string
			Platforms []struct {
				Selector struct{ MatchLabels map[string]string } `json:"selector"`
				URI      string                                  `json:"uri"`
				Sha256   string                                  `json:"sha256"`
				Bin      string                                  `json:"bin"`
			}
		}
	}
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("plugins/pullpath.yaml: %v", err)
	}
	if m.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || m.Kind != "Plugin" || m.Metadata.Name != "pullpath" || m.Spec.Version != "v9.9.9" {
		t.Errorf("manifest head = %s %s %s %s", m.APIVersion, m.Kind, m.Metadata.Name, m.Spec.Version)
	}
	if len(m.Spec.Platforms) != len(platforms) {
		t.Fatalf("manifest has %d platforms, want %d", len(m.Spec.Platforms), len(platforms))
	}
	for i, p := range m.Spec.Platforms {
		osArch := p.Selector.MatchLabels["os"] + "/" + p.Selector.MatchLabels["arch"]
		if osArch != platforms[i] {
			t.Errorf("platform %d selects %s, want %s", i, osArch, platforms[i])
		}
		wantURI := "https://github.com/pullpath/pullpath/releases/download/v9.9.9/pullpath_v9.9.9_" + strings.Replace(osArch, "/", "_", 1) + ".tar.gz"
		if p.URI != wantURI || p.Sha256 != strings.Repeat(osArch[:1], 64) || p.Bin != "pullpath" {
			t.Errorf("platform %s: uri %s sha256 %s bin %s; want %s, its own checksum, pullpath", osArch, p.URI, p.Sha256, p.Bin, wantURI)
		}
	}
}
