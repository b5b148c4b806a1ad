package sweep

import (
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/report"
)

func TestSideBySide(t *testing.T) {
	tests := []struct {
		name   string
		f, h   []string
		partAt int
		want   string
	}{
		{"a hop silent only for the failing node", []string{"10.0.1.1", "*", "*"}, []string{"10.0.2.1", "10.9.0.2", "172.16.5.10"}, 2,
			"10.9.0.2 answers the healthy node b there and stays silent for a (its last hop that answered: 1, 10.0.1.1): 10.9.0.2 has no route back to a's subnet"},
		{"different routers past the gateway", []string{"10.0.1.1", "10.8.0.1", "*"}, []string{"10.0.2.1", "10.9.0.1", "172.16.5.10"}, 2,
			"the paths part at hop 2: a goes through 10.8.0.1, b through 10.9.0.1"},
		{"the same path", []string{"10.0.1.1", "*"}, []string{"10.0.1.1", "*"}, 0, "see the same hops"},
	}
	for _, tt := range tests {
		c := sideBySide("a", "b", report.TraceSummary{Destination: "172.16.5.10:443", Hops: tt.f}, report.TraceSummary{Destination: "172.16.5.10:443", Reached: true, Hops: tt.h})
		if c.PartAt != tt.partAt || !strings.Contains(c.Finding, tt.want) {
			t.Errorf("%s: part at %d, %q; want %d, %q", tt.name, c.PartAt, c.Finding, tt.partAt, tt.want)
		}
	}
}
