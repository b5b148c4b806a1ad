package azure

import (
	"github.com/pullpath/pullpath/internal/audit"
	"sort"
	"strings"
	"testing"
	"testing/fstest"
)

// FuzzLoad puts arbitrary bytes in one file of a healthy account: Load
// either returns one line naming the file, or a model the audit runs on;
// nothing panics.
// fuzz budget: 2000x
func FuzzLoad(f *testing.F) {
	base := fixtureFS(f, "valid-healthy")
	names := make([]string, 0, len(base))
	for n := range base {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, n := range names {
		f.Add(uint8(i), base[n].Data)
	}
	f.Add(uint8(0), []byte(`{"properties": {"agentPoolProfiles": [{"vnetSubnetID": "/x"}]}}`))
	f.Add(uint8(1), []byte(`{"value": [{"properties": null}]}`))
	f.Add(uint8(2), []byte(`[{"addressPrefix": ["0.0.0.0/0"], "nextHopType": "VirtualAppliance", "nextHopIpAddress": ["x"]}]`))
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		fsys := fstest.MapFS{}
		for n, v := range base {
			fsys[n] = v
		}
		name := names[int(which)%len(names)]
		fsys[name] = &fstest.MapFile{Data: data}
		m, err := Load(fsys)
		if err != nil {
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.HasPrefix(msg, name+": ") {
				t.Fatalf("Load error %q: want one line starting with %s", msg, name)
			}
			return
		}
		r := Audit(m, "", audit.Focus{})
		if r.Kind != "AzureAuditReport" || r.Verdict.Status == "" {
			t.Fatalf("audit = %+v", r.Verdict)
		}
	})
}

// FuzzRenest feeds arbitrary JSON through the shape conversion both ways.
func FuzzRenest(f *testing.F) {
	base := fixtureFS(f, "valid-healthy")
	f.Add(base[FileAKS].Data)
	f.Add(base[FileVNet].Data)
	f.Add(base[FileNSG("nsg-apps")].Data)
	f.Add([]byte(`{"properties": 1, "id": {}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, fsys := range []fstest.MapFS{{FileAKS: {Data: data}, FileACR: base[FileACR]}, {FileAKS: base[FileAKS], FileACR: {Data: data}}} {
			m, err := Load(fsys)
			if err != nil {
				if strings.Contains(err.Error(), "\n") {
					t.Fatalf("Load error over two lines: %q", err)
				}
				continue
			}
			if r := Audit(m, "", audit.Focus{}); r.Verdict.Status == "" {
				t.Fatalf("audit without a verdict: %+v", r.Verdict)
			}
		}
	})
}
