package scenario

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLoadInvalid(t *testing.T) {
	tests := []struct {
		file string
		want string // the field (and reason) the one-line error must name
	}{
		{"invalid-default-route.yaml", "hosts.node.routes[0].to: default routes are refused"},
		{"invalid-unknown-field.yaml", `unknown field "rotues"`},
		{"invalid-subnet-router.yaml", "subnets.lan.router: want the name of a host"},
		{"invalid-address-outside.yaml", "hosts.node.interfaces.lan: want a host address inside 192.168.50.0/24"},
		{"invalid-via.yaml", "hosts.node.routes[0].via: next hop 10.9.9.1 is not on any subnet"},
		{"invalid-firewall-action.yaml", `hosts.gw.firewall[0].action: want drop, reject or clamp-mss, got "deny"`},
		{"invalid-tunnel-underlay.yaml", `tunnels.vpn.underlay: no such subnet "wan"`},
		{"invalid-icmp-type.yaml", `hosts.gw.firewall[0].icmpType: want one of frag-needed, destination-unreachable, time-exceeded, echo-request, echo-reply, got "packet-too-big"`},
		{"invalid-rate.yaml", `subnets.lan.rate: want a rate such as 8mbit or 512kbit, got "8mbps"`},
		{"invalid-proxy-fault.yaml", `proxy.fault: want one of reset, close, html, ntlm-only, got "slow"`},
		{"invalid-firewall-port.yaml", "hosts.gw.firewall[0].port: a port needs proto tcp or udp"},
		{"invalid-expect-code.yaml", `expect.code: unknown code "CONNECTION_TIMEOUT"`},
		{"invalid-dns-record.yaml", "dns.corp.records.registry.corp.example: want exactly one of a, cname or rcode"},
		{"invalid-bearer-no-token.yaml", "token: bearer auth needs a token section"},
		{"invalid-internet-subnet.yaml", "subnets.public.cidr: 203.0.113.0/24 overlaps the lab's internet ranges"},
		{"invalid-yaml.yaml", "not valid YAML"},
		{"invalid-extends.yaml", `extends: "no-such-base.yaml": no such built-in base or file`},
		{"invalid-type.yaml", "hosts.node.interfaces: want a mapping, got array"},
		{"invalid-kind.yaml", `kind: want "LabScenario", got "Topology"`},
		{"invalid-tls.yaml", `registry.tls: want trusted, untrusted, wrong-name, expired or none, got "self-signed"`},
		{"invalid-duration.yaml", "invalid duration 2"},
		{"invalid-node-host.yaml", `node.host: want the name of the host that plays the node, got "worker-1"`},
		{"invalid-cluster-no-control-plane.yaml", "cluster.controlPlane: a cluster needs a control plane"},
		{"invalid-cluster-duplicate-node-name.yaml", `cluster.nodes.node2.name: node name "worker-1" is also the name of node host node`},
		{"invalid-mirror-kind.yaml", `mirrors.hosts[0].kind: want one of cache, silent, hang, head-404, html, 429, got "harbor"`},
		{"invalid-mirror-warm.yaml", "mirrors.hosts[0].warm: only a cache can be warmed, this mirror is html"},
		{"invalid-mirror-upstream-fault.yaml", `mirrors.hosts[0].upstreamFault: want 429 on a cache, got "429" on a html mirror`},
		{"invalid-mirror-upstream-credentials.yaml", "mirrors.hosts[0].upstreamCredentials: want a cache's username and password, got them on a html mirror or one of them empty"},
		{"invalid-cluster-node-family.yaml", "cluster.nodes.node6: host node6's node address fd00:0:0:50::30 is IPv6 and control plane cp has no IPv6 address for its kubelet"},
		{"invalid-cluster-pod-range.yaml", "cluster.podCIDR: 192.168.0.0/16 overlaps subnet lan (192.168.50.0/24)"},
		{"invalid-default-route6.yaml", "hosts.node.routes[0].to: default routes are refused in the lab (0.0.0.0/0 and ::/0 alike)"},
		{"invalid-route-family.yaml", "hosts.node.routes[0].via: next hop fd00:0:0:50::1 is IPv6 and the destination 10.0.0.0/8 IPv4"},
		{"invalid-aaaa.yaml", `dns.corp.records.registry.corp.example.aaaa[0]: want an IPv6 address, got "192.168.50.20"`},
		{"invalid-cidr6.yaml", `subnets.lan6.cidr: want an IPv4 CIDR between /8 and /30 such as 10.0.1.0/24, or an IPv6 one between /48 and /126`},
		{"invalid-dns64-upstream.yaml", "nat64.dns64.upstream: no DNS server of the scenario listens on 192.168.50.9 port 53"},
		{"invalid-nat64-prefix.yaml", "nat64.prefix: 64:ff9b::/96 is the well-known prefix, which tayga refuses"},
		{"invalid-rule-family.yaml", "hosts.gw.firewall[0].to: 192.168.50.0/24 is IPv4 and from fd00:0:0:50::/64 IPv6"},
		{"invalid-proxy-intercept.yaml", `proxy.intercept: want untrusted or trusted (or nothing), got "always"`},
		{"invalid-node-proxy-var.yaml", "node.proxy.env.ALL_PROXY: want HTTPS_PROXY, HTTP_PROXY or NO_PROXY"},
		{"invalid-cluster-node-mirror.yaml", `cluster.nodes.node2.mirrors[0]: want a mirror of mirrors.hosts (by name), once; got "cache.corp.example"`},
		{"invalid-cluster-probe-node-mirrors.yaml", "cluster.nodes.node.mirrors: node.host node is where the lab's probe walks with every mirror of mirrors.hosts: list them all, in order"},
	}
	files, _ := filepath.Glob("testdata/invalid-*.yaml")
	if len(files) != len(tests) {
		t.Errorf("testdata has %d invalid-*.yaml files, the table %d: keep them equal", len(files), len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("testdata", tt.file)
			_, err := LoadFile(path)
			if err == nil {
				t.Fatalf("LoadFile(%q) = nil error, want one naming %q", path, tt.want)
			}
			msg := err.Error()
			if !strings.Contains(msg, tt.want) {
				t.Errorf("LoadFile(%q) = %q, want it to contain %q", path, msg, tt.want)
			}
			if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "scenario "+path+": ") {
				t.Errorf("LoadFile(%q) = %q, want one line starting with the file", path, msg)
			}
		})
	}
}

func TestLoadValid(t *testing.T) {
	m, err := LoadFile("testdata/valid-minimal.yaml")
	if err != nil {
		t.Fatalf("LoadFile(valid-minimal) = %v", err)
	}
	if got, want := m.ProbeImage(), "registry.corp.example/tools/busybox:1.36"; got != want {
		t.Errorf("ProbeImage() = %q, want %q", got, want)
	}
	e, err := LoadFile("testdata/valid-extends.yaml")
	if err != nil {
		t.Fatalf("LoadFile(valid-extends) = %v", err)
	}
	// extends merges maps key by key, replaces lists, deletes on null
	if diff := cmp.Diff(m.Hosts["node"], e.Hosts["node"]); diff != "" {
		t.Errorf("extended node differs from the base's (-base +extended):\n%s", diff)
	}
	if got := len(e.Hosts["gw"].Firewall); got != 1 {
		t.Errorf("extended gw firewall rules = %d, want 1", got)
	}
	if e.Expect.Warnings != nil || e.Expect.Code != "CONNECT_REFUSED" || e.Name != "minimal-no-route" {
		t.Errorf("extended expect = %+v name %q, want code CONNECT_REFUSED, no warnings, name minimal-no-route", *e.Expect, e.Name)
	}
}

func TestBuiltinsValid(t *testing.T) {
	names := Builtins()
	if len(names) < 20 {
		t.Errorf("Builtins() = %d scenarios, want at least 20", len(names))
	}
	for _, n := range names {
		t.Run(n, func(t *testing.T) {
			topo, err := LoadBuiltin(n)
			if err != nil {
				t.Fatalf("LoadBuiltin(%q) = %v", n, err)
			}
			if topo.Name != n {
				t.Errorf("LoadBuiltin(%q).Name = %q, want the file name", n, topo.Name)
			}
			if topo.Expect == nil || topo.Expect.Status == "" || topo.Summary == "" {
				t.Errorf("LoadBuiltin(%q): want a summary and an expect block with a status", n)
			}
			for _, h := range sortedKeys(topo.Hosts) {
				for _, r := range topo.Hosts[h].Routes {
					if r.To == "0.0.0.0/0" || r.To == "::/0" || r.To == "default" {
						t.Errorf("%s: host %s has a default route", n, h)
					}
				}
			}
		})
	}
}

func TestLoadUnknownScenario(t *testing.T) {
	_, err := Load("no-such-scenario")
	if err == nil || !strings.Contains(err.Error(), `unknown scenario "no-such-scenario"`) || !strings.Contains(err.Error(), "ecr-healthy") {
		t.Errorf("Load(no-such-scenario) = %v, want an error listing the scenarios", err)
	}
	if _, err := os.Stat("no-such-scenario"); err == nil {
		t.Skip("a file of that name exists here")
	}
}

// TestDocsExamples keeps docs/lab.md honest: its YAML examples (a scenario
// and one extending it) must load.
func TestDocsExamples(t *testing.T) {
	b, err := os.ReadFile("../../../docs/lab.md")
	if err != nil {
		t.Fatalf("read docs/lab.md: %v", err)
	}
	parts := strings.Split(string(b), "```yaml\n")
	if len(parts) < 3 {
		t.Fatalf("docs/lab.md has %d yaml examples, want 2", len(parts)-1)
	}
	dir := t.TempDir()
	files := []string{"harbor-over-vpn.yaml", "harbor-vpn-one-way.yaml"}
	for i, f := range files {
		body := strings.SplitN(parts[i+1], "```", 2)[0]
		if err := os.WriteFile(filepath.Join(dir, f), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files {
		if _, err := LoadFile(filepath.Join(dir, f)); err != nil {
			t.Errorf("docs example %s: %v", f, err)
		}
	}
}
