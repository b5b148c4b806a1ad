package runtimecfg

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sources renders a plan as "host/repo:tag [mirror] [insecure] [blocked] @FILE:LINE" lines,
// FILE relative to root.
func sources(root string, p PullPlan) []string {
	var out []string
	for _, s := range p.Sources {
		line := s.Ref.criString()
		if s.Mirror {
			line += " mirror"
		}
		if s.Insecure {
			line += " insecure"
		}
		if s.Blocked != nil {
			line += " blocked"
		}
		if s.At != "" {
			line += " @" + strings.TrimPrefix(s.At, root)
		}
		out = append(out, line)
	}
	for _, s := range p.Skipped {
		out = append(out, "skipped "+s.Location+" ("+s.Only+") @"+strings.TrimPrefix(s.At, root))
	}
	return out
}

const digestA = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// openShiftIDMS is what the Machine Config Operator renders for an
// ImageDigestMirrorSet (and, with mirror-by-digest-only, for an
// ImageContentSourcePolicy): mirrors for digest pulls only.
const openShiftIDMS = `unqualified-search-registries = ["registry.access.redhat.com", "docker.io"]
short-name-mode = ""

[[registry]]
  prefix = ""
  location = "quay.io/openshift-release-dev/ocp-release"

  [[registry.mirror]]
    location = "mirror.corp.example:5000/ocp4/openshift4"
    pull-from-mirror = "digest-only"

[[registry]]
  prefix = ""
  location = "registry.corp.example/team"
  mirror-by-digest-only = true

  [[registry.mirror]]
    location = "mirror.corp.example:5000/team"
`

func TestPullPlan(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		image string
		want  []string
	}{
		{
			name:  "no registries.conf: the reference itself",
			image: "registry.corp.example/team/app:1.0",
			want:  []string{"registry.corp.example/team/app:1.0"},
		},
		{
			name: "mirrors in order, then the location; prefix rewritten to each location",
			files: map[string]string{"/etc/containers/registries.conf": `
[[registry]]
prefix = "quay.io/team"
location = "registry.corp.example/quay-team"

[[registry.mirror]]
location = "mirror-a.corp.example/cache/quay-team"

[[registry.mirror]]
location = "mirror-b.corp.example:5000"
insecure = true
`},
			image: "quay.io/team/app:1.0",
			want: []string{
				"mirror-a.corp.example/cache/quay-team/app:1.0 mirror @/etc/containers/registries.conf:6",
				"mirror-b.corp.example:5000/app:1.0 mirror insecure @/etc/containers/registries.conf:9",
				"registry.corp.example/quay-team/app:1.0 @/etc/containers/registries.conf:2",
			},
		},
		{
			name: "longest prefix wins; a prefix ends at / : or @",
			files: map[string]string{"/etc/containers/registries.conf": `
[[registry]]
location = "quay.io"
[[registry.mirror]]
location = "all-of-quay.corp.example"

[[registry]]
prefix = "quay.io/team"
location = "quay.io/team"
[[registry.mirror]]
location = "team-cache.corp.example/team"
`},
			image: "quay.io/teamwork/app:1",
			want: []string{
				"all-of-quay.corp.example/teamwork/app:1 mirror @/etc/containers/registries.conf:4",
				"quay.io/teamwork/app:1 @/etc/containers/registries.conf:2",
			},
		},
		{
			name: "wildcard prefix matches subdomains, not the domain; empty location keeps the reference",
			files: map[string]string{"/etc/containers/registries.conf": `
[[registry]]
prefix = "*.corp.example"
[[registry.mirror]]
location = "mirror.corp.example"
`},
			image: "registry.corp.example/team/app:1",
			want: []string{
				"mirror.corp.example/team/app:1 mirror @/etc/containers/registries.conf:4",
				"registry.corp.example/team/app:1 @/etc/containers/registries.conf:2",
			},
		},
		{
			name:  "OpenShift IDMS rendering, tag pull: the digest-only mirror is skipped, CRI-O goes to the source",
			files: map[string]string{"/etc/containers/registries.conf": openShiftIDMS},
			image: "quay.io/openshift-release-dev/ocp-release:4.16.3-x86_64",
			want: []string{
				"quay.io/openshift-release-dev/ocp-release:4.16.3-x86_64 @/etc/containers/registries.conf:4",
				"skipped mirror.corp.example:5000/ocp4/openshift4 (digest-only) @/etc/containers/registries.conf:8",
			},
		},
		{
			name:  "OpenShift IDMS rendering, digest pull: the mirror first",
			files: map[string]string{"/etc/containers/registries.conf": openShiftIDMS},
			image: "quay.io/openshift-release-dev/ocp-release@" + digestA,
			want: []string{
				"mirror.corp.example:5000/ocp4/openshift4@" + digestA + " mirror @/etc/containers/registries.conf:8",
				"quay.io/openshift-release-dev/ocp-release@" + digestA + " @/etc/containers/registries.conf:4",
			},
		},
		{
			name:  "ICSP rendering (mirror-by-digest-only on the registry), tag pull",
			files: map[string]string{"/etc/containers/registries.conf": openShiftIDMS},
			image: "registry.corp.example/team/app:2",
			want: []string{
				"registry.corp.example/team/app:2 @/etc/containers/registries.conf:12",
				"skipped mirror.corp.example:5000/team (digest-only) @/etc/containers/registries.conf:17",
			},
		},
		{
			name: "a tag-only mirror (ImageTagMirrorSet) is skipped for a digest pull; tag and digest pulls by digest",
			files: map[string]string{"/etc/containers/registries.conf": `
[[registry]]
location = "quay.io"
[[registry.mirror]]
location = "tags.corp.example"
pull-from-mirror = "tag-only"
[[registry.mirror]]
location = "all.corp.example"
pull-from-mirror = "all"
`},
			image: "quay.io/team/app:1@" + digestA,
			want: []string{
				"all.corp.example/team/app@" + digestA + " mirror @/etc/containers/registries.conf:7",
				"quay.io/team/app@" + digestA + " @/etc/containers/registries.conf:2",
				"skipped tags.corp.example (tag-only) @/etc/containers/registries.conf:4",
			},
		},
		{
			name: "a blocked registry's mirror still serves: blocked is checked on each source's own name",
			files: map[string]string{"/etc/containers/registries.conf": `
[[registry]]
location = "docker.io"
blocked = true
[[registry.mirror]]
location = "hub-cache.corp.example/docker"
`},
			image: "docker.io/library/nginx:1.25",
			want: []string{
				"hub-cache.corp.example/docker/library/nginx:1.25 mirror @/etc/containers/registries.conf:5",
				"docker.io/library/nginx:1.25 blocked @/etc/containers/registries.conf:2",
			},
		},
		{
			name: "a mirror whose own name is blocked is refused too",
			files: map[string]string{"/etc/containers/registries.conf": `
[[registry]]
location = "quay.io"
[[registry.mirror]]
location = "old-cache.corp.example"

[[registry]]
location = "old-cache.corp.example"
blocked = true
`},
			image: "quay.io/team/app:1",
			want: []string{
				"old-cache.corp.example/team/app:1 mirror blocked @/etc/containers/registries.conf:4",
				"quay.io/team/app:1 @/etc/containers/registries.conf:2",
			},
		},
		{
			name: "drop-ins in name order replace a prefix as a whole",
			files: map[string]string{
				"/etc/containers/registries.conf": `
[[registry]]
location = "quay.io"
[[registry.mirror]]
location = "from-main.corp.example"
`,
				"/etc/containers/registries.conf.d/20-late.conf": `
[[registry]]
location = "quay.io"
[[registry.mirror]]
location = "from-20.corp.example"
`,
				"/etc/containers/registries.conf.d/10-early.conf": `
[[registry]]
location = "quay.io"
insecure = true
[[registry.mirror]]
location = "from-10.corp.example"
`,
				"/etc/containers/registries.conf.d/30-ignored.toml": `
[[registry]]
location = "quay.io"
blocked = true
`,
			},
			image: "quay.io/team/app:1",
			want: []string{
				"from-20.corp.example/team/app:1 mirror @/etc/containers/registries.conf.d/20-late.conf:4",
				"quay.io/team/app:1 @/etc/containers/registries.conf.d/20-late.conf:2",
			},
		},
		{
			name: "inline tables take the line of their key",
			files: map[string]string{"/etc/containers/registries.conf": `
registry = [
  { location = "quay.io", mirror = [ { location = "inline.corp.example" } ] },
]
`},
			image: "quay.io/team/app:1",
			want: []string{
				"inline.corp.example/team/app:1 mirror @/etc/containers/registries.conf:2",
				"quay.io/team/app:1 @/etc/containers/registries.conf:2",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			writeTree(t, root, tt.files)
			c, err := LoadRegistriesConf(RegistriesConfOptions{Root: root})
			if err != nil {
				t.Fatalf("LoadRegistriesConf: %v", err)
			}
			ref, err := ParseReference(tt.image)
			if err != nil {
				t.Fatal(err)
			}
			p, err := c.PullPlan(ref)
			if err != nil {
				t.Fatalf("PullPlan(%q): %v", tt.image, err)
			}
			if diff := cmp.Diff(tt.want, sources(root, p)); diff != "" {
				t.Errorf("PullPlan(%q) (-want +got):\n%s", tt.image, diff)
			}
		})
	}
}

func TestLoadRegistriesConfInvalid(t *testing.T) {
	tests := []struct {
		file string
		want string
	}{
		{"invalid-scheme.conf", "line 1: [[registry]]: invalid location 'https://mirror.corp.example/quay': URI schemes are not supported"},
		{"invalid-pull-from-mirror-on-registry.conf", "pull-from-mirror must not be set for a non-mirror registry \"quay.io\""},
		{"invalid-digest-only-both.conf", "cannot set mirror usage mirror-by-digest-only for the registry (\"quay.io\") and pull-from-mirror for per-mirror (\"mirror.corp.example/quay\") at the same time"},
		{"invalid-pull-from-mirror-value.conf", "unsupported pull-from-mirror value \"digests\""},
		{"invalid-wildcard-path.conf", "Wildcarded prefix should be in the format: *.example.com"},
		{"invalid-no-location.conf", "location is unset and prefix is not in the format: *.example.com"},
		{"invalid-conflicting-insecure.conf", "registry 'quay.io' is defined multiple times with conflicting 'insecure' setting (lines 1 and 6)"},
		{"invalid-short-name-mode.conf", "invalid short-name mode: \"strict\""},
		{"invalid-alias-tag.conf", "invalid alias \"docker.io/library/nginx:1.25\": must not contain tag"},
		{"invalid-search-registry.conf", "Invalid unqualified-search-registries entry \"registry.corp.example/team\""},
		{"invalid-mirror-no-location.conf", "mirror 1: invalid condition: mirror location is unset"},
		{"invalid-syntax.conf", "line 1"},
		{"invalid-v1-and-v2.conf", "mixing sysregistry v1/v2 is not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path, err := filepath.Abs(filepath.Join("testdata", "registries", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			_, err = LoadRegistriesConf(RegistriesConfOptions{ConfFile: path})
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("LoadRegistriesConf(%s) = %v, want a *ConfigError", tt.file, err)
			}
			if ce.File != path || !strings.Contains(ce.Reason, tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("LoadRegistriesConf(%s) = %q, want one line naming %s with %q", tt.file, err, path, tt.want)
			}
		})
	}
}

func TestRegistriesConfRules(t *testing.T) {
	v1 := `
[registries.search]
registries = ["registry.corp.example", "quay.io"]

[registries.block]
registries = ["docker.io"]

[registries.insecure]
registries = ["legacy.corp.example:5000"]
`
	t.Run("v1 main file is converted up to v5.39", func(t *testing.T) {
		root := t.TempDir()
		writeTree(t, root, map[string]string{"/etc/containers/registries.conf": v1})
		c, err := LoadRegistriesConf(RegistriesConfOptions{Root: root, Rules: CImageRulesFor("v5.38.0")})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range c.Registries {
			got = append(got, e.Prefix+" blocked="+boolStr(e.Blocked)+" insecure="+boolStr(e.Insecure))
		}
		want := []string{"docker.io blocked=true insecure=false", "legacy.corp.example:5000 blocked=false insecure=true"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("registries (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"registry.corp.example", "quay.io"}, c.UnqualifiedSearch); diff != "" {
			t.Errorf("unqualified-search-registries (-want +got):\n%s", diff)
		}
	})
	t.Run("v1 is refused from v5.41", func(t *testing.T) {
		root := t.TempDir()
		writeTree(t, root, map[string]string{"/etc/containers/registries.conf": v1})
		_, err := LoadRegistriesConf(RegistriesConfOptions{Root: root, Rules: CImageRulesFor("v5.42.1")})
		if err == nil || !strings.Contains(err.Error(), "must be in v2 format but is in v1") {
			t.Errorf("LoadRegistriesConf = %v, want the v1 refusal", err)
		}
	})
	t.Run("a v1 drop-in is refused", func(t *testing.T) {
		root := t.TempDir()
		writeTree(t, root, map[string]string{"/etc/containers/registries.conf.d/50-old.conf": v1})
		_, err := LoadRegistriesConf(RegistriesConfOptions{Root: root})
		if err == nil || !strings.Contains(err.Error(), "50-old.conf: registry must be in v2 format") {
			t.Errorf("LoadRegistriesConf = %v, want the drop-in refused", err)
		}
	})
	tree := map[string]string{
		"/usr/share/containers/registries.conf":                   "unqualified-search-registries = [\"usr.example\"]\n",
		"/usr/share/containers/registries.conf.d/10-vendor.conf":  "[[registry]]\nlocation = \"vendor.example\"\n",
		"/etc/containers/registries.conf.d/10-vendor.conf":        "[[registry]]\nlocation = \"admin.example\"\n",
		"/etc/containers/registries.rootful.conf.d/05-root.conf":  "[[registry]]\nlocation = \"rootful.example\"\n",
		"/etc/containers/registries.conf.d/20-site.conf":          "[[registry]]\nlocation = \"site.example\"\n",
		"/root/.config/containers/registries.conf.d/30-home.conf": "[[registry]]\nlocation = \"home.example\"\n",
	}
	files := func(root string, c *RegistriesConf) []string {
		var out []string
		for _, f := range c.Files {
			out = append(out, strings.TrimPrefix(f, root))
		}
		return out
	}
	t.Run("search paths up to v5.39: /etc only, folder by folder", func(t *testing.T) {
		root := t.TempDir()
		writeTree(t, root, tree)
		c, err := LoadRegistriesConf(RegistriesConfOptions{Root: root})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"/etc/containers/registries.conf.d/10-vendor.conf", "/etc/containers/registries.conf.d/20-site.conf", "/root/.config/containers/registries.conf.d/30-home.conf"}
		if diff := cmp.Diff(want, files(root, c)); diff != "" {
			t.Errorf("files (-want +got):\n%s", diff)
		}
	})
	t.Run("search paths from v5.41: /usr/share fallback, rootful folders, one file per name", func(t *testing.T) {
		root := t.TempDir()
		writeTree(t, root, tree)
		c, err := LoadRegistriesConf(RegistriesConfOptions{Root: root, Rules: CImageRulesFor("v5.42.1")})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"/usr/share/containers/registries.conf", "/etc/containers/registries.rootful.conf.d/05-root.conf", "/etc/containers/registries.conf.d/10-vendor.conf", "/etc/containers/registries.conf.d/20-site.conf", "/root/.config/containers/registries.conf.d/30-home.conf"}
		if diff := cmp.Diff(want, files(root, c)); diff != "" {
			t.Errorf("files (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"usr.example"}, c.UnqualifiedSearch); diff != "" {
			t.Errorf("unqualified-search-registries (-want +got):\n%s", diff)
		}
	})
	t.Run("a file in root's home shadows /etc and its drop-ins up to v5.39", func(t *testing.T) {
		root := t.TempDir()
		writeTree(t, root, map[string]string{
			"/etc/containers/registries.conf":                   "[[registry]]\nlocation = \"etc.example\"\n",
			"/etc/containers/registries.conf.d/10-x.conf":       "[[registry]]\nlocation = \"etc-dropin.example\"\n",
			"/root/.config/containers/registries.conf":          "[[registry]]\nlocation = \"home.example\"\n",
			"/root/.config/containers/registries.conf.d/a.conf": "[[registry]]\nlocation = \"home-dropin.example\"\n",
		})
		c, err := LoadRegistriesConf(RegistriesConfOptions{Root: root})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"/root/.config/containers/registries.conf", "/root/.config/containers/registries.conf.d/a.conf"}
		if diff := cmp.Diff(want, files(root, c)); diff != "" {
			t.Errorf("files (-want +got):\n%s", diff)
		}
	})
	t.Run("--registries-conf must exist", func(t *testing.T) {
		_, err := LoadRegistriesConf(RegistriesConfOptions{Root: t.TempDir(), ConfFile: "/etc/crio/registries.conf"})
		var ce *ConfigError
		if !errors.As(err, &ce) || !strings.HasSuffix(ce.File, "/etc/crio/registries.conf") {
			t.Errorf("LoadRegistriesConf = %v, want the missing file named", err)
		}
	})
}

func boolStr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func TestRegistriesConfNotes(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"/etc/containers/registries.conf": `
[[registry]]
location = "quay.io"
mirror-by-digest_only = true
[[registry.mirror]]
location = "m1.corp.example"

[[registry]]
location = "quay.io"
[[registry.mirror]]
location = "m2.corp.example"
`,
		"/etc/containers/registries.conf.d/50-x.conf": "[[registry]]\nlocation = \"quay.io\"\n",
	})
	c, err := LoadRegistriesConf(RegistriesConfOptions{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.ReplaceAll(strings.Join(c.Notes, "\n"), root, "")
	for _, want := range []string{
		`/etc/containers/registries.conf:4: unknown key "registry.mirror-by-digest_only": containers/image ignores it`,
		`/etc/containers/registries.conf:8: prefix "quay.io" is given again: containers/image uses the first (/etc/containers/registries.conf:2) and ignores this one`,
		`/etc/containers/registries.conf.d/50-x.conf:1: [[registry]] prefix "quay.io" replaces the one of /etc/containers/registries.conf:2 as a whole`,
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q; got:\n%s", want, notes)
		}
	}
}

func TestResolveShortName(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"/etc/containers/registries.conf": `unqualified-search-registries = ["registry.access.redhat.com", "registry.redhat.io", "docker.io"]
short-name-mode = "enforcing"
`,
		"/etc/containers/registries.conf.d/000-shortnames.conf": `[aliases]
"nginx" = "docker.io/library/nginx"
"ubi9" = "registry.access.redhat.com/ubi9"
"busybox" = "docker.io/library/busybox"
`,
		"/etc/containers/registries.conf.d/999-site.conf": `[aliases]
"busybox" = ""
`,
	})
	c, err := LoadRegistriesConf(RegistriesConfOptions{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		input, mode string
		want        []string
		wantErr     string
	}{
		{"quay.io/team/app:1", ShortNameEnforcing, []string{"quay.io/team/app:1"}, ""},
		{"docker.io/nginx", ShortNameEnforcing, []string{"docker.io/library/nginx:latest"}, ""},
		{"nginx:1.25", ShortNameEnforcing, []string{"docker.io/library/nginx:1.25"}, ""},
		{"ubi9@" + digestA, ShortNameEnforcing, []string{"registry.access.redhat.com/ubi9@" + digestA}, ""},
		{"busybox:latest", ShortNameDisabled, []string{"registry.access.redhat.com/busybox:latest", "registry.redhat.io/busybox:latest", "docker.io/library/busybox:latest"}, ""},
		{"busybox:latest", ShortNameEnforcing, nil, "short name mode is enforcing, but image name busybox:latest returns ambiguous list"},
		{"team/app:2", ShortNameDisabled, []string{"registry.access.redhat.com/team/app:2", "registry.redhat.io/team/app:2", "docker.io/team/app:2"}, ""},
	}
	for _, tt := range tests {
		res, err := c.ResolveShortName(tt.input, tt.mode)
		if tt.wantErr != "" {
			var se *ShortNameError
			if !errors.As(err, &se) || se.Message != tt.wantErr {
				t.Errorf("ResolveShortName(%q, %s) = %v, want %q", tt.input, tt.mode, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("ResolveShortName(%q, %s): %v", tt.input, tt.mode, err)
			continue
		}
		var got []string
		for _, r := range res.Candidates {
			got = append(got, r.criString())
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("ResolveShortName(%q, %s) (-want +got):\n%s", tt.input, tt.mode, diff)
		}
	}
	empty := &RegistriesConf{Aliases: map[string]AliasEntry{}}
	_, err = empty.ResolveShortName("nginx", ShortNameEnforcing)
	var se *ShortNameError
	if !errors.As(err, &se) || se.Message != `short-name "nginx" did not resolve to an alias and no containers-registries.conf(5) was found` {
		t.Errorf("ResolveShortName without registries.conf = %v", err)
	}
}
