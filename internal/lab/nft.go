package lab

import (
	"fmt"
	"strings"

	"github.com/pullpath/pullpath/internal/lab/scenario"
)

// nftTable is the one nftables table the lab creates in a namespace.
const nftTable = "pullpath"

// nftRuleset renders a host's firewall rules as one nftables table
// ("inet pullpath") with a base chain per hook used. Empty when there are no
// rules.
func nftRuleset(rules []scenario.Rule) string {
	if len(rules) == 0 {
		return ""
	}
	chains := map[string][]string{}
	order := []string{"input", "forward", "output"}
	for _, r := range rules {
		c := r.Chain
		if c == "" {
			c = "forward"
		}
		chains[c] = append(chains[c], nftRule(r))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "table inet %s {\n", nftTable)
	for _, c := range order {
		if len(chains[c]) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\tchain %s {\n\t\ttype filter hook %s priority 0; policy accept;\n", c, c)
		for _, l := range chains[c] {
			b.WriteString("\t\t" + l + "\n")
		}
		b.WriteString("\t}\n")
	}
	b.WriteString("}\n")
	return b.String()
}

func nftAddrs(s string) string {
	ps, _ := scenario.ParseDest(s)
	if len(ps) == 1 {
		if ps[0].IsSingleIP() {
			return ps[0].Addr().String()
		}
		return ps[0].String()
	}
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.String()
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}

// nftFamily is the header a destination's addresses are matched in: ip
// (IPv4) or ip6.
func nftFamily(s string) string {
	if ps, _ := scenario.ParseDest(s); len(ps) > 0 && ps[0].Addr().Is6() {
		return "ip6"
	}
	return "ip"
}

func nftRule(r scenario.Rule) string {
	var m []string
	if r.From != "" {
		m = append(m, nftFamily(r.From)+" saddr "+nftAddrs(r.From))
	}
	if r.To != "" {
		m = append(m, nftFamily(r.To)+" daddr "+nftAddrs(r.To))
	}
	switch {
	case r.Proto != "" && r.Port != 0:
		m = append(m, fmt.Sprintf("%s dport %d", r.Proto, r.Port))
	case r.Proto == "icmp" && r.ICMPType != "":
		m = append(m, nftICMPType(r.ICMPType))
	case r.Proto == "icmp":
		m = append(m, "meta l4proto icmp")
	case r.Proto != "":
		m = append(m, "meta l4proto "+r.Proto)
	}
	m = append(m, nftPathMatch(r)...)
	m = append(m, "counter")
	switch {
	case r.Action == "clamp-mss":
		m = append(m, nftClampMSS)
	case r.Action == "drop":
		m = append(m, "drop")
	case r.Proto == "tcp":
		m = append(m, "reject with tcp reset")
	default:
		m = append(m, "reject")
	}
	if r.Comment != "" {
		c := strings.Map(func(r rune) rune {
			if r == '"' || r == '\\' || r < ' ' {
				return -1
			}
			return r
		}, r.Comment)
		if len(c) > 120 {
			c = c[:120]
		}
		m = append(m, `comment "`+c+`"`)
	}
	return strings.Join(m, " ")
}
