package sweep

import (
	"cmp"
	"fmt"
	"sort"
	"strings"

	"github.com/pullpath/pullpath/internal/exitcode"
	"github.com/pullpath/pullpath/internal/nodeplace"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// judge fills the nodes' verdicts, the matrix's columns, the groups and the
// run's verdict. It is pure over the report.
//
//  1. Each node: probe and canary reconciled into one verdict.
//  2. Columns: every host any node's pull used, by role.
//  3. Groups (pool/zone/subnet): ok, fail (with the dominant code), mixed.
//  4. The divergence: which of subnet, zone, pool separates the failing
//     nodes from the healthy ones; or every node alike; next steps.
func judge(r *report.SweepReport) {
	for i := range r.Nodes {
		reconcile(&r.Nodes[i])
	}
	r.Endpoints = columns(r.Nodes)
	r.Groups = groups(r.Nodes)
	r.Verdict = divergence(r)
	compareTraces(r)
	r.Verdict.ExitCode = exitCode(r.Verdict)
}

// exitCode is a sweep's exit code (internal/exitcode): 0 when every node
// pulls, the dominant condition's when a node fails, 2 when nodes only
// gave no answer.
func exitCode(v report.SweepVerdict) int {
	switch {
	case v.Status == verdict.StatusOK:
		return exitcode.OK
	case v.Failed == 0:
		return exitcode.Other
	}
	return exitcode.For(v.Condition)
}

// Judge is judge for callers that assemble a report themselves (tests, the
// benchmark's offline check).
func Judge(r *report.SweepReport) { judge(r) }

func reconcile(n *report.SweepNode) {
	p, c := n.Probe, n.Canary
	if c != nil && c.Status == report.SweepOK {
		switch {
		case n.HasImage != nil && *n.HasImage:
			t := true
			c.Cached = &t
			c.Evidence = "cached: the node already held the image, so the canary proves only the manifest path"
		case n.HasImage != nil:
			f := false
			c.Cached = &f
			c.Evidence = "fresh: the node did not hold the image, every layer came over the path"
		default:
			c.Evidence = "unknown: node.status.images does not tell whether the node held the image"
		}
	}
	switch {
	case p == nil:
		n.Status = report.SweepNoAnswer
		n.Verdict = verdict.Verdict{Status: verdict.StatusFail, Cause: verdict.CauseOther, Code: verdict.Other, Summary: "no answer from the node"}
		return
	case c == nil:
		n.Status, n.Verdict = p.Status, p.Verdict
		return
	}
	cached := c.Cached != nil && *c.Cached
	switch {
	case p.Status == report.SweepOK && c.Status == report.SweepOK:
		n.Agreement, n.Status, n.Verdict = "agree-ok", report.SweepOK, p.Verdict
		n.Reconcile = "probe and kubelet both pull"
		if cached {
			n.Reconcile += " (the kubelet's layers came from the node's cache)"
		}
	case p.Status == report.SweepFail && c.Status == report.SweepFail:
		n.Status, n.Verdict = report.SweepFail, p.Verdict
		if p.Verdict.Code == c.Verdict.Code || (p.Verdict.Condition == c.Verdict.Condition && sameHost(p.Verdict.Endpoint, c.Verdict.Endpoint)) {
			n.Agreement = "agree-fail"
			n.Reconcile = fmt.Sprintf("the kubelet fails the same way (%s): the path, not pullpath's view of it", c.Verdict.Code)
		} else {
			n.Agreement = "differ-fail"
			n.Reconcile = fmt.Sprintf("both fail, differently: probe %s, kubelet %s", p.Verdict.Code, c.Verdict.Code)
		}
	case p.Status == report.SweepOK && c.Status == report.SweepFail:
		n.Agreement, n.Status, n.Verdict = "canary-only", report.SweepFail, c.Verdict
		n.Reconcile = "the path works but the kubelet's pull fails: " + kubeletSide(c.Verdict)
	case p.Status == report.SweepFail && c.Status == report.SweepOK:
		n.Agreement, n.Status, n.Verdict = "probe-only", report.SweepFail, p.Verdict
		switch {
		case cached:
			n.Reconcile = "the kubelet's pull was served from the node's cache: the path is broken, and the node will fail once the layers are gone"
		case p.Mirror:
			n.Reconcile = "a mirror (hosts.toml) serves the runtime while the upstream path is broken"
		default:
			n.Reconcile = "the runtime reaches what the probe cannot: a mirror, proxy or CA in the runtime's own config, or the layers were cached"
		}
	default: // one side gave no answer
		if p.Status == report.SweepNoAnswer && c.Status != report.SweepNoAnswer {
			n.Status, n.Verdict = c.Status, c.Verdict
			n.Reconcile = "only the kubelet's pull answered"
		} else {
			n.Status, n.Verdict = p.Status, p.Verdict
		}
	}
	if p.Status != report.SweepNoAnswer {
		if d := reconcileProxy(p, c); d != "" {
			n.ProxyDisagree = d
			if n.Reconcile != "" {
				n.Reconcile += "; "
			}
			n.Reconcile += "probe and runtime disagree about the proxy: " + d
		}
	}
}

// reconcileProxy says when probe and canary went different ways about the
// runtime's proxy: the probe through a proxy while the kubelet's pull
// resolved or dialed the registry itself, or the kubelet's pull refused by
// a proxy while the probe went direct. The runtime's way is in effect: the
// probe read settings the running runtime does not have (a drop-in not yet
// applied by a restart, flags) or missed ones it has.
func reconcileProxy(p, c *report.SweepResult) string {
	if c.Status != report.SweepFail {
		return ""
	}
	cv := c.Verdict
	probeProxy := strings.HasPrefix(p.Proxy, "proxy ")
	switch {
	case probeProxy && directFailure(cv):
		via, from, _ := strings.Cut(p.Proxy, ", from ")
		return fmt.Sprintf("the probe went through %s (settings from %s) while the runtime resolved or dialed %s itself (%s): the runtime's way is in effect; its environment has no proxy for this host (a drop-in not applied by a restart, or settings the probe was given)",
			via, from, cv.Endpoint, cv.Code)
	case !probeProxy && cv.Condition == verdict.ConditionProxy && (p.Status == report.SweepOK || p.Verdict.Condition != verdict.ConditionProxy):
		how := "no proxy settings found"
		if p.Proxy != "" {
			how = p.Proxy
		}
		return fmt.Sprintf("the runtime goes through a proxy (%s) while the probe went direct: %s; the runtime's way is in effect: give the probe the runtime's environment (pullpath runtime-env, --runtime-env)", cv.Code, how)
	}
	return ""
}

// directFailure: the failure of a host the node resolved or dialed itself,
// not through a proxy.
func directFailure(v verdict.Verdict) bool {
	if v.Condition == verdict.ConditionProxy {
		return false
	}
	if v.Condition == verdict.ConditionRoute || v.Condition == verdict.ConditionDNS {
		return true
	}
	switch v.Cause {
	case verdict.CauseTimeout, verdict.CauseUnreachable, verdict.CauseRefused, verdict.CauseDNS:
		return true
	}
	return false
}

// kubeletSide says which of the kubelet's own parts a canary failure points
// at, when the probe walked the path fully.
func kubeletSide(v verdict.Verdict) string {
	switch v.Cause {
	case verdict.CauseUnauthorized, verdict.CauseForbidden:
		return "the kubelet's identity (its credential provider, the node role, or the Pod's pull secret)"
	case verdict.CauseTLS:
		return "the runtime's trust (its certs.d CA or system roots differ from what the probe read)"
	case verdict.CauseTimeout, verdict.CauseUnreachable, verdict.CauseRefused, verdict.CauseDNS, verdict.CauseReset:
		return "the runtime's own network settings (an HTTPS_PROXY in its unit, or a mirror in its config that the probe did not read)"
	case verdict.CauseNotFound, verdict.CausePlatform:
		return "the image itself as the kubelet asks for it (tag, platform)"
	}
	return "the kubelet or runtime side (identity, config, proxy or mirror); the Events say " + string(v.Code)
}

func sameHost(a, b string) bool {
	return a != "" && strings.EqualFold(strings.TrimSuffix(a, ":443"), strings.TrimSuffix(b, ":443"))
}

var roleOrder = map[verdict.Role]int{verdict.RoleRegistry: 0, verdict.RoleMirror: 1, verdict.RoleAuth: 2, verdict.RoleBlob: 3}

func columns(nodes []report.SweepNode) []report.SweepColumn {
	seen := map[string]int{}
	var out []report.SweepColumn
	add := func(hs []report.SweepHop) {
		for _, h := range hs {
			if h.Host == "" {
				continue
			}
			if _, ok := seen[h.Host]; ok {
				continue
			}
			seen[h.Host] = len(out)
			out = append(out, report.SweepColumn{Host: h.Host, Role: h.Role})
		}
	}
	for _, n := range nodes {
		if n.Probe != nil {
			add(n.Probe.Hops)
		}
		if n.Canary != nil {
			add(n.Canary.Hops)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return roleOrder[out[i].Role] < roleOrder[out[j].Role] })
	return out
}

func groups(nodes []report.SweepNode) []report.SweepGroup {
	idx := map[string]int{}
	var out []report.SweepGroup
	codes := map[string]map[verdict.Code]int{}
	for _, n := range nodes {
		i, ok := idx[n.Group]
		if !ok {
			i = len(out)
			idx[n.Group] = i
			out = append(out, report.SweepGroup{Key: n.Group, Pool: n.Pool, Zone: n.Zone, Subnet: n.Subnet})
			codes[n.Group] = map[verdict.Code]int{}
		}
		g := &out[i]
		g.Nodes = append(g.Nodes, n.Name)
		switch {
		case g.Status == "":
			g.Status = n.Status
		case g.Status != n.Status:
			g.Status = report.SweepMixed
		}
		if n.Status == report.SweepFail {
			codes[n.Group][n.Verdict.Code]++
			if g.Code == "" {
				g.Code, g.Condition, g.Endpoint, g.Role = n.Verdict.Code, n.Verdict.Condition, n.Verdict.Endpoint, n.Verdict.Role
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

func divergence(r *report.SweepReport) report.SweepVerdict {
	v := report.SweepVerdict{Status: verdict.StatusOK}
	failing, healthy := tally(r, &v)
	for _, p := range r.Plan.EmptyPools {
		v.Advice = append(v.Advice, fmt.Sprintf("Pool %s has no node (%s): it cannot be walked from until it scales up, which is exactly when it will fail; sweep again after a scale-up.", p.Pool, p.Source))
	}
	if len(failing) == 0 {
		noneFails(r, &v, healthy)
		return v
	}
	d := dominantFailure(failing)
	v.Status, v.Code, v.Condition, v.Endpoint, v.Role = verdict.StatusFail, d.code, d.cond, d.host, d.role
	if d.code != "" && d.code != verdict.Other {
		v.Advice = append(verdict.Advise(d.code, d.host, d.role), v.Advice...)
	}
	if a := probeImageAdvice(r, failing); a != "" {
		v.Advice = append([]string{a}, v.Advice...)
	}
	switch {
	case len(healthy) == 0:
		everyNodeFails(&v, d, failing)
	default:
		if !separatedBy(&v, d, failing, healthy) {
			mixedFailure(&v, d, failing, healthy)
		}
		// the healthy side's OK may be a cache's: say so
		if s, _ := hiddenUpstreamOf(r.Nodes, healthy); s != "" {
			v.Summary += s
		}
	}
	v.Next = nextSteps(r, failing)
	return v
}

// tally counts the nodes by outcome into v and returns the failing and
// the healthy ones.
func tally(r *report.SweepReport, v *report.SweepVerdict) (failing, healthy []*report.SweepNode) {
	for i := range r.Nodes {
		n := &r.Nodes[i]
		switch n.Status {
		case report.SweepOK:
			v.OK++
			healthy = append(healthy, n)
		case report.SweepFail:
			v.Failed++
			failing = append(failing, n)
		default:
			v.NoAnswer++
		}
	}
	return failing, healthy
}

// groupCount is how many groups the nodes come from.
func groupCount(ns []*report.SweepNode) int {
	set := map[string]bool{}
	for _, n := range ns {
		set[n.Group] = true
	}
	return len(set)
}

// noneFails is the verdict when no node failed: every answer pulls fully,
// or some nodes gave no answer.
func noneFails(r *report.SweepReport, v *report.SweepVerdict, healthy []*report.SweepNode) {
	if v.NoAnswer > 0 {
		v.Status, v.Pattern = verdict.StatusFail, "no-answer"
		v.Summary = fmt.Sprintf("%d node(s) gave no answer; the %d that answered pull fully.", v.NoAnswer, v.OK)
		if v.OK == 0 {
			v.Summary = fmt.Sprintf("No node answered (%d node(s)): see each node's message.", v.NoAnswer)
		}
		return
	}
	v.Pattern = "all-ok"
	v.Summary = fmt.Sprintf("Every group pulls fully: %d node(s) in %d group(s).", v.OK, groupCount(healthy))
	if n := len(r.Plan.Skipped); n > 0 {
		v.Summary += fmt.Sprintf(" %d node(s) skipped (see the plan).", n)
	}
	if s, a := hiddenUpstreamOf(r.Nodes, healthy); s != "" {
		v.Summary += s
		v.Advice = append(v.Advice, a)
	}
}

// failureKey is one way of failing: the code, its condition, the host
// and its role.
type failureKey struct {
	code verdict.Code
	cond verdict.Condition
	host string
	role verdict.Role
}

// dominant is the failure most nodes share, with the words the verdict
// uses for it and for the others.
type dominant struct {
	failureKey
	what  string // the code, and the host by its role
	other string // " Other failures: ..." when the nodes fail in several ways
	alike bool   // every failing node fails this way
}

// dominantFailure picks the failure of the most nodes; ties go to the
// order of verdict.Conditions, then the code's name.
func dominantFailure(failing []*report.SweepNode) dominant {
	count := map[failureKey]int{}
	for _, n := range failing {
		count[failureKey{n.Verdict.Code, n.Verdict.Condition, n.Verdict.Endpoint, n.Verdict.Role}]++
	}
	keys := make([]failureKey, 0, len(count))
	for k := range count {
		keys = append(keys, k)
	}
	condRank := map[verdict.Condition]int{}
	for i, c := range verdict.Conditions {
		condRank[c] = i
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if count[a] != count[b] {
			return count[a] > count[b]
		}
		if condRank[a.cond] != condRank[b.cond] {
			return condRank[a.cond] < condRank[b.cond]
		}
		return a.code+verdict.Code(a.host) < b.code+verdict.Code(b.host)
	})
	d := dominant{failureKey: keys[0], what: string(keys[0].code), alike: len(keys) == 1}
	if d.host != "" {
		d.what += " to the " + roleName(d.role) + d.host
	}
	if !d.alike {
		var rest []string
		for _, k := range keys[1:] {
			rest = append(rest, fmt.Sprintf("%s (%d)", k.code, count[k]))
		}
		d.other = " Other failures: " + strings.Join(rest, ", ") + "."
	}
	return d
}

// probeImageAdvice speaks for the nodes that could not pull pullpath's
// own image: their verdict is the kubelet's, for that image's registry.
func probeImageAdvice(r *report.SweepReport, failing []*report.SweepNode) string {
	probeImage := 0
	for _, n := range failing {
		if n.Probe != nil && n.Probe.Source == report.SourceProbeEvents {
			probeImage++
		}
	}
	if probeImage == 0 {
		return ""
	}
	return fmt.Sprintf("%d node(s) could not pull pullpath's own image (%s): their verdict is the kubelet's, for that image's registry. Mirror it where these nodes pull from (crane copy) and pass --image-for-probe, to walk the target image's path too.", probeImage, r.ProbeImage)
}

// everyNodeFails is the verdict when no node pulls: a cause common to
// every node.
func everyNodeFails(v *report.SweepVerdict, d dominant, failing []*report.SweepNode) {
	v.Pattern = "all-nodes"
	switch d.cond {
	case verdict.ConditionTLSIdentity, verdict.ConditionImage, verdict.ConditionRegistry:
		if d.alike {
			v.Summary = fmt.Sprintf("Every node fails the same way (%d node(s) in %d group(s)): %s. Identity or the registry, not the network: one cause for all groups.", len(failing), groupCount(failing), d.what)
		} else {
			v.Summary = fmt.Sprintf("Every node fails (%d node(s) in %d group(s)), most with %s: identity or the registry, not the network.%s", len(failing), groupCount(failing), d.what, d.other)
		}
	default:
		v.Summary = fmt.Sprintf("Every node fails (%d node(s) in %d group(s)) with %s: a path common to every node (the whole VPC/VNet, its DNS, or the registry side), not one subnet.%s", len(failing), groupCount(failing), d.what, d.other)
	}
}

// separatedBy finds the first of subnet, zone and pool whose values on
// the failing nodes are none of the healthy nodes' (every node's known),
// and says so; false when none separates them.
func separatedBy(v *report.SweepVerdict, d dominant, failing, healthy []*report.SweepNode) bool {
	dims := []struct {
		name string
		of   func(*report.SweepNode) string
	}{
		{"subnet", func(n *report.SweepNode) string { return n.Subnet }},
		{"zone", func(n *report.SweepNode) string { return n.Zone }},
		{"pool", func(n *report.SweepNode) string { return n.Pool }},
	}
	for _, dim := range dims {
		fv, fknown := valuesOf(failing, dim.of)
		hv, hknown := valuesOf(healthy, dim.of)
		if !fknown || !hknown || overlaps(fv, hv) {
			continue
		}
		v.Pattern = dim.name
		v.Summary = fmt.Sprintf("Every node of %s %s fails %s; the other %d group(s) (%s %s) pull fully.%s",
			dim.name, joinSet(fv), d.what, groupCount(healthy), dim.name, joinSet(hv), d.other)
		v.Advice = append([]string{separationAdvice(dim.name)}, v.Advice...)
		if m := mirrorDivergence(failing, healthy); m != "" {
			v.Advice = append([]string{m}, v.Advice...)
		}
		if m := proxyDivergence(failing, healthy); m != "" {
			v.Summary += proxySeparates(failing, healthy)
			v.Advice = append([]string{m}, v.Advice...)
		}
		if m := runtimeDivergence(failing, healthy); m != "" {
			v.Summary += runtimeSeparates(failing, healthy)
			v.Advice = append([]string{m}, v.Advice...)
		}
		return true
	}
	return false
}

// valuesOf is the set of one dimension's values, and whether every node
// has one.
func valuesOf(ns []*report.SweepNode, of func(*report.SweepNode) string) (map[string]bool, bool) {
	set, known := map[string]bool{}, true
	for _, n := range ns {
		if of(n) == "" {
			known = false
		}
		set[of(n)] = true
	}
	return set, known
}

func overlaps(a, b map[string]bool) bool {
	for x := range a {
		if b[x] {
			return true
		}
	}
	return false
}

// mixedFailure is the verdict when failing and healthy nodes share
// subnets, zones and pools: the nodes themselves differ (their mirrors,
// proxy or runtime configuration, when the sweep saw it).
func mixedFailure(v *report.SweepVerdict, d dominant, failing, healthy []*report.SweepNode) {
	v.Pattern = "mixed"
	v.Summary = fmt.Sprintf("%d node(s) fail with %s and %d pull fully, in the same subnets, zones and pools: look at the failing nodes themselves (hand fixes, hosts-file entries, runtime config).%s", len(failing), d.what, len(healthy), d.other)
	if m := mirrorDivergence(failing, healthy); m != "" {
		v.Pattern = "mirror"
		v.Advice = append([]string{m}, v.Advice...)
	}
	if m := proxyDivergence(failing, healthy); m != "" {
		v.Pattern = "proxy"
		v.Summary += proxySeparates(failing, healthy)
		v.Advice = append([]string{m}, v.Advice...)
	}
	if m := runtimeDivergence(failing, healthy); m != "" {
		v.Pattern = "runtime"
		v.Summary += runtimeSeparates(failing, healthy)
		v.Advice = append([]string{m}, v.Advice...)
	}
}

func roleName(r verdict.Role) string {
	switch r {
	case verdict.RoleBlob:
		return "blob host "
	case verdict.RoleAuth:
		return "token host "
	case verdict.RoleMirror:
		return "mirror "
	case verdict.RoleRegistry:
		return "registry "
	}
	return "host "
}

func separationAdvice(dim string) string {
	switch dim {
	case "subnet":
		return "The cause is the failing subnet's path, not the image or permissions: compare its route table, network ACL / NSG and private endpoints (or NAT) with a working subnet's."
	case "zone":
		return "A per-zone difference: a NAT gateway or endpoint ENI present in one zone and not the other, or a zone-local resolver."
	}
	return "A per-pool difference: the pool's subnet, its node configuration (custom DNS, hosts file, certs.d), or its node identity."
}

func joinSet(m map[string]bool) string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// nextSteps names the cloud audit when the nodes' providerID tells the
// cloud (auditCommand: each audits every node subnet and compares them),
// with the failing subnets to look at, and the sweep that proves the fix.
// auditCommand is the audit of the cloud a node's providerID names, with
// what the ID tells of the cluster (AWS: the region, always written; an
// AKS node resource group: the cluster's group and name; GKE: the
// project), or "" for a node of no known cloud.
func auditCommand(n *report.SweepNode, image string) string {
	p := nodeplace.ParseProviderID(n.ProviderID)
	t := nodeplace.Target{Image: image, Project: p.Project}
	switch p.Cloud {
	case "":
		return ""
	case nodeplace.AWS:
		t.Region = cmp.Or(p.Region(), "REGION")
	case nodeplace.Azure:
		t.ResourceGroup, t.Cluster, _ = p.AKSCluster()
	}
	return p.Cloud.AuditCommand(t)
}

func nextSteps(r *report.SweepReport, failing []*report.SweepNode) []string {
	var out []string
	subnets := map[string]map[string]bool{} // audit command -> failing subnets
	var order []string
	for _, n := range failing {
		cmd := auditCommand(n, r.Image)
		if cmd == "" {
			continue
		}
		if subnets[cmd] == nil {
			subnets[cmd] = map[string]bool{}
			order = append(order, cmd)
		}
		if n.Subnet != "" && !strings.HasPrefix(n.SubnetSource, "InternalIP") {
			subnets[cmd][n.Subnet] = true
		}
	}
	for _, cmd := range order {
		what := "the failing nodes' subnets against the healthy ones"
		if len(subnets[cmd]) > 0 {
			what = "subnet " + joinSet(subnets[cmd]) + " (failing) against the healthy subnets"
		}
		out = append(out, cmd+"   # the cloud's configuration: "+what)
	}
	if len(failing) > 0 {
		out = append(out, fmt.Sprintf("pullpath sweep %s --nodes kubernetes.io/hostname=%s --canary   # after the fix: the failing node again, with the kubelet's own pull", r.Image, failing[0].Name))
		out = append(out, fmt.Sprintf("pullpath sweep %s   # then every group again", r.Image))
	}
	return out
}
