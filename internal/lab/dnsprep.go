package lab

import (
	"fmt"
	"strings"

	"github.com/pullpath/pullpath/internal/lab/scenario"
	"github.com/pullpath/pullpath/internal/labsvc"
)

// prepareDNS adds the DNS servers of t to the serve configs of their hosts.
func prepareDNS(t *scenario.Scenario, cfg func(host string) *ServeConfig) error {
	for _, name := range sortedKeys(t.DNS) {
		d := t.DNS[name]
		port := d.Port
		if port == 0 {
			port = 53
		}
		addr, err := t.ListenAddr(d.Host, d.Address, port)
		if err != nil {
			return fmt.Errorf("dns %s: %v", name, err)
		}
		c := &labsvc.DNSConfig{
			Addr:       addr,
			Zones:      d.Zones,
			Records:    map[string][]labsvc.DNSRecord{},
			Behaviours: map[string]labsvc.DNSBehaviour{},
			OutOfZone:  labsvc.DNSNXDomain,
		}
		if d.Default == "REFUSED" {
			c.OutOfZone = labsvc.DNSRefused
		}
		zoneless := len(d.Zones) == 0
		for _, rn := range sortedKeys(d.Records) {
			r := d.Records[rn]
			if zoneless {
				c.Zones = append(c.Zones, rn)
			}
			ttl := uint32(r.TTL)
			for _, a := range r.A {
				c.Records[rn] = append(c.Records[rn], labsvc.DNSRecord{Type: "A", Value: a, TTL: ttl})
			}
			for _, a := range r.AAAA {
				c.Records[rn] = append(c.Records[rn], labsvc.DNSRecord{Type: "AAAA", Value: a, TTL: ttl})
			}
			if r.CNAME != "" {
				c.Records[rn] = append(c.Records[rn], labsvc.DNSRecord{Type: "CNAME", Value: r.CNAME, TTL: ttl})
			}
			if r.Rcode != "" {
				c.Behaviours[rn] = labsvc.DNSBehaviour(strings.ToLower(r.Rcode))
			}
		}
		if len(c.Zones) == 0 {
			c.Zones = []string{"invalid"}
		}
		cfg(d.Host).DNS = append(cfg(d.Host).DNS, c)
	}
	return nil
}
