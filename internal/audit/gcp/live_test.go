package gcp_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/audit/audittest"
	gcpaudit "github.com/pullpath/pullpath/internal/audit/gcp"
	"github.com/pullpath/pullpath/internal/audit/gcp/gcpfake"
)

func collect(t *testing.T, srv *gcpfake.Server, m *gcpaudit.Model, image string, missing ...string) audit.Files {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := gcpaudit.Collect(ctx, gcpaudit.LiveOptions{
		Project: m.ClusterProject(), Location: m.Location(), Cluster: m.Cluster.Name, Image: image,
		Endpoint: srv.URL, ClientOptions: srv.Options(),
	})
	if err != nil {
		t.Fatalf("Collect = %v", err)
	}
	for _, w := range c.Warnings {
		if !slices.Contains(missing, w.File) {
			t.Errorf("Collect warning: %+v", w)
		}
	}
	return c.Files
}

// The live path (google.golang.org/api's own clients against a loopback
// server speaking the REST JSON, every list paged by 2) gives the same
// verdict as --from on every fixture, collect writes the contract's files,
// and collect -> write -> audit --from round-trips.
func TestLiveMatchesFrom(t *testing.T) {
	for _, f := range fixtures {
		t.Run(f.dir, func(t *testing.T) {
			m := loadDir(t, f.dir)
			want := audittest.Verdicts(auditFixture(t, f))
			srv := gcpfake.New(m)
			defer srv.Close()
			files := collect(t, srv, m, f.image, f.missing...)

			entries, _ := os.ReadDir(filepath.Join("testdata", f.dir))
			have := map[string]bool{}
			for n := range files {
				have[n] = true
			}
			var missing []string
			for _, e := range entries {
				// record sets are fetched by name, only for the zones the pull's names fall in
				if !have[e.Name()] && !strings.HasPrefix(e.Name(), "dns-record-sets-list-") {
					missing = append(missing, e.Name())
				}
				delete(have, e.Name())
			}
			if len(missing) > 0 || len(have) > 0 {
				t.Errorf("collect wrote %d files: missing %v, extra %v", len(files), missing, have)
			}
			lm, err := gcpaudit.Load(files.FS())
			if err != nil {
				t.Fatalf("Load(collected) = %v", err)
			}
			// every page was read (the fake pages every list by 2)
			if len(lm.Instances) != len(m.Instances) || len(lm.Firewalls) != len(m.Firewalls) || len(lm.Routes) != len(m.Routes) || len(lm.Zones) != len(m.Zones) || len(lm.Perimeters) != len(m.Perimeters) {
				t.Errorf("collected %d instances, %d rules, %d routes, %d zones, %d perimeters; the folder has %d, %d, %d, %d, %d",
					len(lm.Instances), len(lm.Firewalls), len(lm.Routes), len(lm.Zones), len(lm.Perimeters), len(m.Instances), len(m.Firewalls), len(m.Routes), len(m.Zones), len(m.Perimeters))
			}
			lr, err := gcpaudit.Audit(lm, "live", audit.Focus{Image: f.image})
			if err != nil {
				t.Fatal(err)
			}
			if got := audittest.Verdicts(lr); !reflect.DeepEqual(got, want) {
				t.Errorf("live verdict differs from --from:\n%s", diff(got, want))
			}
			out := t.TempDir()
			if err := files.Write(out); err != nil {
				t.Fatal(err)
			}
			rm, err := gcpaudit.Load(os.DirFS(out))
			if err != nil {
				t.Fatalf("Load(--out) = %v", err)
			}
			rr, _ := gcpaudit.Audit(rm, out, audit.Focus{Image: f.image})
			if got := audittest.Verdicts(rr); !reflect.DeepEqual(got, want) {
				t.Errorf("collect -> audit --from differs:\n%s", diff(got, want))
			}
			data, _ := os.ReadFile(filepath.Join(out, gcpaudit.FileCluster))
			if !strings.HasPrefix(string(data), "{\n  \"addonsConfig\"") {
				t.Errorf("%s is not gcloud's JSON (2-space indent, sorted keys):\n%.120s", gcpaudit.FileCluster, data)
			}
			if n := srv.Calls()["unauthenticated"]; n != 0 {
				t.Errorf("%d requests without the bearer token", n)
			}
		})
	}
}

func diff(got, want map[string]string) string {
	var keys []string
	for k := range want {
		keys = append(keys, k)
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		if got[k] != want[k] {
			b.WriteString(k + "\n   got " + got[k] + "\n  want " + want[k] + "\n")
		}
	}
	return b.String()
}

// Errors from the API are one line naming the gcloud command.
func TestLiveErrors(t *testing.T) {
	m := loadDir(t, "valid-healthy")
	srv := gcpfake.New(m)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := gcpaudit.Collect(ctx, gcpaudit.LiveOptions{Project: "shop-prod", Location: "us-central1", Cluster: "nope", Endpoint: srv.URL, ClientOptions: srv.Options()})
	if err == nil || err.Error() != "gcloud container clusters describe nope --location us-central1 --format=json: 404 The requested URL /container/v1/projects/shop-prod/locations/us-central1/clusters/nope was not found on this server." {
		t.Fatalf("Collect(missing cluster) = %v", err)
	}
}

// Model.Files writes back every file Load read: each fixture's folder
// round-trips to the same file names.
func TestFilesWritesEveryFileLoadRead(t *testing.T) {
	for _, f := range fixtures {
		m := loadDir(t, f.dir)
		files, err := m.Files()
		if err != nil {
			t.Fatal(err)
		}
		entries, _ := os.ReadDir(filepath.Join("testdata", f.dir))
		for _, e := range entries {
			if _, ok := files[e.Name()]; !ok {
				t.Errorf("%s: Files() does not write %s", f.dir, e.Name())
			}
		}
	}
}
