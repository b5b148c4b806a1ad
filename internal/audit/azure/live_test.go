package azure_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/audit/audittest"
	azaudit "github.com/pullpath/pullpath/internal/audit/azure"
	"github.com/pullpath/pullpath/internal/audit/azure/armfake"
	"github.com/pullpath/pullpath/internal/audit/azure/synth"
	"github.com/pullpath/pullpath/internal/report"
)

func loadDir(t *testing.T, dir string) *azaudit.Model {
	t.Helper()
	m, err := azaudit.Load(os.DirFS(filepath.Join("testdata", dir)))
	if err != nil {
		t.Fatalf("Load(%s) = %v", dir, err)
	}
	return m
}

// verdicts is the part of a report both modes must agree on.
func verdicts(r *report.AuditReport) map[string]string { return audittest.Verdicts(r) }

func liveOptions(srv *armfake.Server, m *azaudit.Model, registry string) azaudit.LiveOptions {
	id := *m.Cluster.ID
	return azaudit.LiveOptions{
		Subscription:  strings.Split(strings.Trim(id, "/"), "/")[1],
		ResourceGroup: strings.Split(strings.Trim(id, "/"), "/")[3],
		Cluster:       *m.Cluster.Name,
		Registry:      registry,
		Credential:    armfake.Credential{},
		ClientOptions: srv.ClientOptions(),
	}
}

func collect(t *testing.T, srv *armfake.Server, m *azaudit.Model, registry string) audit.Files {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	o := liveOptions(srv, m, registry)
	o.Calls = new(atomic.Int64)
	c, err := azaudit.Collect(ctx, o)
	if err != nil {
		t.Fatalf("Collect = %v", err)
	}
	if len(c.Warnings) != 0 {
		t.Fatalf("Collect warnings = %v", c.Warnings)
	}
	if o.Calls.Load() != int64(srv.Requests) {
		t.Errorf("Collect counted %d requests, the server saw %d", o.Calls.Load(), srv.Requests)
	}
	return c.Files
}

// The live path (the SDK's own clients against a loopback ARM server
// serving the fixture's account) gives the same verdict as --from, and
// collect writes exactly the files --from reads.
func TestLiveMatchesFrom(t *testing.T) {
	for _, dir := range []string{"valid-healthy", "valid-aks-managed-vnet", "invalid-route-disable-bgp", "invalid-dns-record-missing", "invalid-identity-abac-acrpull", "invalid-private-endpoint-pending", "invalid-nsg-deny-443",
		"valid-dualstack-public", "warn-ipv6-route-none", "warn-ipv6-nsg-v4-only"} {
		t.Run(dir, func(t *testing.T) {
			m := loadDir(t, dir)
			want := verdicts(azaudit.Audit(m, "", audit.Focus{}))
			srv := armfake.New(m)
			defer srv.Close()
			files := collect(t, srv, m, "")

			fromDir, _ := os.ReadDir(filepath.Join("testdata", dir))
			var wantNames, gotNames []string
			for _, e := range fromDir {
				wantNames = append(wantNames, e.Name())
			}
			for n := range files {
				gotNames = append(gotNames, n)
			}
			if !sameSet(wantNames, gotNames) {
				t.Errorf("collect wrote %v, want the contract's %v", gotNames, wantNames)
			}

			// the live audit reads the collected files
			lm, err := azaudit.Load(files.FS())
			if err != nil {
				t.Fatalf("Load(collected) = %v", err)
			}
			if got := verdicts(azaudit.Audit(lm, "live", audit.Focus{})); !reflect.DeepEqual(got, want) {
				t.Errorf("live verdict differs from --from:\n got %v\nwant %v", got, want)
			}
			// the entry points: Live against the server, FromFolder on the fixture
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			lr, err := azaudit.Live(ctx, liveOptions(srv, m, ""), audit.Focus{})
			if err != nil {
				t.Fatalf("Live = %v", err)
			}
			if lr.Source != audit.SourceLive {
				t.Errorf("Live source = %q, want %q", lr.Source, audit.SourceLive)
			}
			if got := verdicts(lr); !reflect.DeepEqual(got, want) {
				t.Errorf("Live differs from --from:\n got %v\nwant %v", got, want)
			}
			if fr, err := azaudit.FromFolder(filepath.Join("testdata", dir), audit.Focus{}); err != nil || !reflect.DeepEqual(verdicts(fr), want) {
				t.Errorf("FromFolder(%s) = %v, verdicts differ from Audit's", dir, err)
			}
			// and collect --out, then audit --from, gives it again
			out := t.TempDir()
			if err := files.Write(out); err != nil {
				t.Fatal(err)
			}
			rm, err := azaudit.Load(os.DirFS(out))
			if err != nil {
				t.Fatalf("Load(--out) = %v", err)
			}
			if got := verdicts(azaudit.Audit(rm, "", audit.Focus{})); !reflect.DeepEqual(got, want) {
				t.Errorf("collect -> audit --from differs:\n got %v\nwant %v", got, want)
			}
			data, _ := os.ReadFile(filepath.Join(out, azaudit.FileAKS))
			if !strings.HasPrefix(string(data), "{\n  \"") || strings.Contains(string(data), "\"properties\"") {
				t.Errorf("aks-show.json is not in the CLI's shape (2-space indent, properties flattened):\n%.200s", data)
			}
		})
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]bool{}
	for _, x := range a {
		m[x] = true
	}
	for _, x := range b {
		if !m[x] {
			return false
		}
	}
	return true
}

func TestLiveRegistryByName(t *testing.T) {
	m := loadDir(t, "valid-healthy")
	srv := armfake.New(m)
	defer srv.Close()
	files := collect(t, srv, m, "contosoacr.azurecr.io")
	if _, ok := files[azaudit.FileACR]; !ok {
		t.Fatal("no acr-show.json")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := azaudit.Collect(ctx, azaudit.LiveOptions{Subscription: "3f2b6c1e-8d4a-4b7e-9c1f-2a5d6e7f8a9b", ResourceGroup: "rg-aks", Cluster: "nope",
		Credential: armfake.Credential{}, ClientOptions: srv.ClientOptions()})
	if err == nil || !strings.Contains(err.Error(), "az aks show -g rg-aks -n nope: 404 ResourceNotFound") {
		t.Fatalf("Collect(missing cluster) = %v, want a one-line 404 naming the command", err)
	}
}

// Live API calls grow with pools (subnets, route tables, NSGs, NICs),
// never with routes, rules or zone records.
func TestLiveCallsDoNotGrowWithRoutesRulesRecords(t *testing.T) {
	count := func(s synth.Size) int64 {
		m, err := synth.Account(os.DirFS("testdata/valid-healthy"), s)
		if err != nil {
			t.Fatal(err)
		}
		srv := armfake.New(m)
		srv.PageSize = 100
		defer srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		calls := new(atomic.Int64)
		c, err := azaudit.Collect(ctx, azaudit.LiveOptions{Subscription: "3f2b6c1e-8d4a-4b7e-9c1f-2a5d6e7f8a9b", ResourceGroup: "rg-aks", Cluster: "aks-prod",
			Credential: armfake.Credential{}, ClientOptions: srv.ClientOptions(), Calls: calls})
		if err != nil || len(c.Warnings) != 0 {
			t.Fatalf("Collect(%+v) = %v, %v", s, err, c)
		}
		return calls.Load()
	}
	small := count(synth.Size{Pools: 4, Routes: 2, Rules: 2, Records: 2})
	big := count(synth.Size{Pools: 4, Routes: 400, Rules: 200, Records: 2000})
	more := count(synth.Size{Pools: 8, Routes: 2, Rules: 2, Records: 2})
	if small != big {
		t.Errorf("requests: %d with 2 routes/rules/records, %d with 400/200/2000; want equal", small, big)
	}
	if more != small+4*4 {
		t.Errorf("requests: %d for 4 pools, %d for 8; want 4 more per pool (subnet, route table, NSG, effective routes)", small, more)
	}
}

// Issue 42: on an AKS-managed VNet whose node resource group the caller
// may not list, collect warns naming network-vnet-list.json and its
// command, and the live audit runs the cluster-wide checks only: nothing
// checked (exit 11), never a pass.
func TestLiveAKSManagedVNetListDenied(t *testing.T) {
	m := loadDir(t, "valid-aks-managed-vnet")
	srv := armfake.New(m)
	defer srv.Close()
	srv.Deny("GET virtualNetworks", "Microsoft.Network/virtualNetworks/read")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := azaudit.Collect(ctx, liveOptions(srv, m, ""))
	if err != nil {
		t.Fatalf("Collect = %v", err)
	}
	warned := false
	for _, w := range c.Warnings {
		warned = warned || w.File == azaudit.FileVNets && strings.Contains(w.Message, "403 AuthorizationFailed") && w.Command == "az network vnet list -g MC_rg-aks_aks-prod_eastus"
	}
	if !warned {
		t.Errorf("Collect warnings = %+v, want one naming %s, the refusal and its command", c.Warnings, azaudit.FileVNets)
	}
	r, err := azaudit.Live(ctx, liveOptions(srv, m, ""), audit.Focus{})
	if err != nil {
		t.Fatalf("Live = %v", err)
	}
	if !audit.NothingChecked(r) || len(r.Subnets) != 1 || !r.Subnets[0].Unknown {
		t.Errorf("Live verdict %+v, %d subnets: want nothing-checked on the stand-in subnet", r.Verdict, len(r.Subnets))
	}
}

// Issue 39: the artifact cache live, through the SDK's cache rule and
// credential set clients and ARM's vault list against the fake: for every
// cache fixture, collect for the image writes exactly the fixture's files
// and the audit equals --from; no Key Vault secret is ever asked for.
func TestLiveCacheMatchesFrom(t *testing.T) {
	const image = "contosoacr.azurecr.io/library/nginx:1.27"
	for _, dir := range []string{"valid-cache-rule", "valid-cache-access-policy", "invalid-cache-credential-set-missing", "invalid-cache-credential-set-login-server",
		"invalid-cache-credentials-unhealthy", "invalid-cache-keyvault-no-role", "invalid-cache-access-policy-no-get", "warn-cache-docker-hub-anonymous"} {
		t.Run(dir, func(t *testing.T) {
			m := loadDir(t, dir)
			want := verdicts(azaudit.Audit(m, "", audit.Focus{Image: image}))
			srv := armfake.New(m)
			defer srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			o := liveOptions(srv, m, "")
			o.Image = image
			c, err := azaudit.Collect(ctx, o)
			if err != nil || len(c.Warnings) != 0 {
				t.Fatalf("Collect = %v, warnings %v", err, c.Warnings)
			}
			fromDir, _ := os.ReadDir(filepath.Join("testdata", dir))
			var wantNames, gotNames []string
			for _, e := range fromDir {
				wantNames = append(wantNames, e.Name())
			}
			for n := range c.Files {
				gotNames = append(gotNames, n)
			}
			if !sameSet(wantNames, gotNames) {
				t.Errorf("collect wrote %v, want the fixture's %v", gotNames, wantNames)
			}
			lm, err := azaudit.Load(c.Files.FS())
			if err != nil {
				t.Fatalf("Load(collected) = %v", err)
			}
			if got := verdicts(azaudit.Audit(lm, "live", audit.Focus{Image: image})); !reflect.DeepEqual(got, want) {
				t.Errorf("live verdict differs from --from:\n got %v\nwant %v", got, want)
			}
			lr, err := azaudit.Live(ctx, liveOptions(srv, m, ""), audit.Focus{Image: image})
			if err != nil {
				t.Fatalf("Live = %v", err)
			}
			if got := verdicts(lr); !reflect.DeepEqual(got, want) {
				t.Errorf("Live differs from --from:\n got %v\nwant %v", got, want)
			}
			for call := range srv.Calls() {
				if strings.Contains(strings.ToLower(call), "secrets") {
					t.Errorf("collect called %s: the audit reads a vault's grants, never its secrets", call)
				}
			}
			if srv.Calls()["GET cacheRules"] == 0 {
				t.Errorf("calls %v: the cache rules were not listed", srv.Calls())
			}
		})
	}
}
