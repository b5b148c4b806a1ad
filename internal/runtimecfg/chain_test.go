package runtimecfg

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestReadPullLimits(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name     string
		file     string
		want     time.Duration
		wantSet  bool
		wantConc int
		wantNote string
		wantErr  string
	}{
		{name: "not given", file: "", wantConc: 3, wantNote: "not given"},
		{name: "missing file", file: filepath.Join(dir, "nope.toml"), wantConc: 3, wantNote: "not readable here"},
		{name: "version 2 sets it", file: write("v2.toml", "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\"]\n  image_pull_progress_timeout = \"8s\"\n  max_concurrent_downloads = 5\n"),
			want: 8 * time.Second, wantSet: true, wantConc: 5, wantNote: `sets image_pull_progress_timeout = "8s"`},
		{name: "version 3 keeps it under the images plugin", file: write("v3.toml", "version = 3\n[plugins.\"io.containerd.cri.v1.images\"]\n  image_pull_progress_timeout = \"2m\"\n[plugins.\"io.containerd.grpc.v1.cri\"]\n  image_pull_progress_timeout = \"9s\"\n"),
			want: 2 * time.Minute, wantSet: true, wantConc: 3},
		{name: "0s turns it off", file: write("off.toml", "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\"]\n  image_pull_progress_timeout = \"0s\"\n"),
			wantSet: true, wantConc: 3, wantNote: "no limit"},
		{name: "not set", file: write("unset.toml", "version = 2\n"), wantConc: 3, wantNote: "does not set image_pull_progress_timeout"},
		{name: "not a duration", file: write("bad.toml", "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\"]\n  image_pull_progress_timeout = \"soon\"\n"),
			wantErr: "want a duration"},
		{name: "not TOML", file: write("broken.toml", "version = = 2\n"), wantErr: "broken.toml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l, err := ReadPullLimits(tt.file)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ReadPullLimits(%s) error = %v, want one containing %q", tt.file, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ReadPullLimits(%s): %v", tt.file, err)
			}
			if l.ProgressTimeout != tt.want || l.ProgressTimeoutSet != tt.wantSet || l.MaxConcurrentDownloads != tt.wantConc {
				t.Errorf("ReadPullLimits(%s) = %+v, want timeout %s set %v, %d downloads", tt.file, l, tt.want, tt.wantSet, tt.wantConc)
			}
			if !strings.Contains(l.Note, tt.wantNote) {
				t.Errorf("note %q lacks %q", l.Note, tt.wantNote)
			}
		})
	}
}

func TestChainHostsAsContainerd(t *testing.T) {
	ref := mustRef(t, "reg.lab.test/app:1")
	hosts := []RegistryHost{
		{Host: "resolver.lab.test", Capabilities: []string{"resolve"}, Mirror: true},
		{Host: "puller.lab.test", Capabilities: []string{"pull"}, Mirror: true},
		{Host: "both.lab.test", Capabilities: []string{"pull", "resolve"}, Mirror: true},
		{Host: "reg.lab.test", Capabilities: allCaps, Server: true},
	}
	names := func(hs []RegistryHost) string {
		var n []string
		for _, h := range hs {
			n = append(n, h.Host)
		}
		return strings.Join(n, ",")
	}
	// a tag: pull and resolve; a digest: pull only (resolver.go Resolve)
	if got := names(ResolveHosts(hosts, false)); got != "both.lab.test,reg.lab.test" {
		t.Errorf("ResolveHosts(tag) = %s", got)
	}
	if got := names(ResolveHosts(hosts, true)); got != "puller.lab.test,both.lab.test,reg.lab.test" {
		t.Errorf("ResolveHosts(digest) = %s", got)
	}
	// the fetcher loops over every host once one may pull (fetcher.go Fetch)
	if got := names(FetchHosts(hosts)); got != names(hosts) {
		t.Errorf("FetchHosts = %s, want every host", got)
	}
	if got := FetchHosts(hosts[:1]); got != nil {
		t.Errorf("FetchHosts(resolve only) = %v, want none", got)
	}
	if q := NamespaceQuery(hosts[2], ref); q != "ns=reg.lab.test" {
		t.Errorf("NamespaceQuery(mirror) = %q", q)
	}
	if q := NamespaceQuery(hosts[3], ref); q != "" {
		t.Errorf("NamespaceQuery(registry) = %q, want none", q)
	}
	if q := NamespaceQuery(RegistryHost{Host: DockerHubHost}, mustRef(t, "nginx")); q != "" {
		t.Errorf("NamespaceQuery(registry-1.docker.io for docker.io) = %q, want none", q)
	}
}
