package lab

import (
	"testing"

	"github.com/pullpath/pullpath/internal/lab/scenario"
)

func TestNftRuleset(t *testing.T) {
	e, err := scenario.LoadFile("scenario/testdata/valid-extends.yaml")
	if err != nil {
		t.Fatalf("LoadFile(valid-extends) = %v", err)
	}
	want := "table inet pullpath {\n\tchain forward {\n\t\ttype filter hook forward priority 0; policy accept;\n" +
		"\t\tip saddr 192.168.50.10 ip daddr 192.168.50.20 tcp dport 443 counter reject with tcp reset\n\t}\n}\n"
	if got := nftRuleset(e.Hosts["gw"].Firewall); got != want {
		t.Errorf("nftRuleset(gw) =\n%s\nwant\n%s", got, want)
	}
}
