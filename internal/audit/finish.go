package audit

import (
	"fmt"
	"net/netip"
	"sort"
	"strings"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Scopes of an audit verdict.
const (
	ScopeNone        = "none"
	ScopeSomeSubnets = "some-subnets"
	ScopeEverySubnet = "every-subnet"
	// ScopeNothing: no node subnet was found, or no check on any subnet
	// could decide (each warned for a file not given): the audit says what
	// to collect and exits with its own code, never as if all were well.
	ScopeNothing = "nothing-checked"
)

// Finish completes a report whose Subnets hold their checks; a cloud's
// entry point calls it last, and nothing edits the report after it.
//
//  1. Each subnet's verdict: the worst of its checks.
//  2. The order: the subnets holding the focus's nodes first, then failing
//     before warning before passing, each group in the cloud's order.
//  3. The focus in the target: the focused subnet, the failing host, the
//     probe's code; a focus node in no audited subnet is a warning.
//  4. The audit verdict and its scope (Decide, with the identity rule).
//  5. What the focused subnet's checks say about the probe's code, ahead
//     of the verdict's sentence.
//  6. The first failing subnet beside a healthy one, the merged changes,
//     each warning once.
func Finish(r *report.AuditReport, f Focus) {
	// 1. Verdicts.
	for _, s := range r.Subnets {
		s.Verdict = Worst(s.Checks)
	}
	// 2. Order.
	focused := focusedSubnets(r.Subnets, f)
	sort.SliceStable(r.Subnets, func(i, j int) bool {
		a, b := r.Subnets[i], r.Subnets[j]
		if focused[a] != focused[b] {
			return focused[a]
		}
		return rank(a.Verdict) > rank(b.Verdict)
	})
	// 3. The focus in the target.
	var focus *report.AuditSubnet
	if len(focused) > 0 {
		focus = r.Subnets[0]
	} else if len(f.Subnets) > 0 && len(r.Subnets) == 1 {
		focus = r.Subnets[0] // --subnet kept one
	}
	if focus != nil {
		r.Target.FocusSubnet = focus.ID
	}
	if f.Host != "" {
		r.Target.FocusHost = f.Host
	}
	if f.Code != "" {
		r.Target.ProbeVerdict = string(f.Code)
	}
	if lost := unplaced(r.Subnets, f); len(lost) > 0 {
		r.Warnings = append(r.Warnings, report.AuditWarning{File: f.File,
			Message: fmt.Sprintf("%s %s in none of the audited node subnets (no instance, pool or subnet range of the cluster holds %s)",
				isAre(len(lost), "node", "nodes"), firstNames(lost, 3)+isAre(len(lost), " is", " are"), isAre(len(lost), "it", "them"))})
	}
	// 4. The verdict.
	r.Verdict = Decide(r.Subnets)
	// 5. The probe's code, on the focused subnet.
	if len(focused) > 0 && f.Code != "" && f.Code != verdict.OK {
		explainProbe(r, focus, f)
	}
	// 6. Comparison, changes, warnings.
	r.Comparison = Compare(r.Subnets)
	r.Changes = Changes(r.Subnets)
	r.Warnings = dedupWarnings(r.Warnings)
}

// Keep returns the subnets f.Subnets names (all of them when it names
// none), in the cloud's order, with a warning for each named subnet the
// cluster has no nodes in. A cloud calls it before running its checks.
func Keep[S any](f Focus, subnets []S, id func(S) string, cluster string) ([]S, []report.AuditWarning) {
	if len(f.Subnets) == 0 {
		return subnets, nil
	}
	var keep []S
	for _, s := range subnets {
		for _, want := range f.Subnets {
			if sameID(id(s), want) {
				keep = append(keep, s)
				break
			}
		}
	}
	var ws []report.AuditWarning
	for _, want := range f.Subnets {
		found := false
		for _, s := range keep {
			found = found || sameID(id(s), want)
		}
		if !found {
			ws = append(ws, report.AuditWarning{Message: fmt.Sprintf("--subnet %s is not a node subnet of cluster %s (no node pool or node in it)", want, cluster)})
		}
	}
	return keep, ws
}

// sameID compares subnet ids as the clouds do: ARM ids without regard to
// case, AWS ids are lowercase anyway.
func sameID(a, b string) bool {
	return a != "" && strings.EqualFold(strings.TrimSuffix(a, "/"), strings.TrimSuffix(b, "/"))
}

// focusedSubnets are the subnets holding one of the focus's nodes.
func focusedSubnets(subnets []*report.AuditSubnet, f Focus) map[*report.AuditSubnet]bool {
	out := map[*report.AuditSubnet]bool{}
	for _, n := range f.Nodes {
		for _, s := range placements(subnets, n) {
			out[s] = true
		}
	}
	return out
}

// placements are the subnets that hold a node, by the surest fact known:
// its subnet id, else an address inside a subnet's range, else its pool
// (a pool may span several subnets).
func placements(subnets []*report.AuditSubnet, n Node) []*report.AuditSubnet {
	for _, match := range []func(*report.AuditSubnet) bool{
		func(s *report.AuditSubnet) bool { return sameID(s.ID, n.Subnet) },
		func(s *report.AuditSubnet) bool { return inRange(s.CIDR, n.Addresses) },
		func(s *report.AuditSubnet) bool { return n.Pool != "" && containsFold(s.Pools, n.Pool) },
	} {
		var out []*report.AuditSubnet
		for _, s := range subnets {
			if match(s) {
				out = append(out, s)
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return nil
}

// inRange reports whether an address lies in a subnet's CIDR ("10.0.3.0/24"
// or several, comma-separated).
func inRange(cidr string, addrs []netip.Addr) bool {
	for _, p := range strings.Split(cidr, ",") {
		pfx, err := netip.ParsePrefix(strings.TrimSpace(p))
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if pfx.Contains(a.Unmap()) {
				return true
			}
		}
	}
	return false
}

func containsFold(list []string, v string) bool {
	for _, x := range list {
		if strings.EqualFold(x, v) {
			return true
		}
	}
	return false
}

// unplaced are the names of the focus's nodes no audited subnet holds.
func unplaced(subnets []*report.AuditSubnet, f Focus) []string {
	var out []string
	for _, n := range f.Nodes {
		if len(placements(subnets, n)) == 0 && n.Name != "" {
			out = append(out, n.Name)
		}
	}
	return out
}

// explainProbe puts ahead of the verdict which check of the focused subnet
// explains what the probe saw: a failing check about the probed host in
// the probe code's repair direction, else one in that direction, else one
// about the host, else the first failure. With none, a passing subnet says
// the fault is outside what the configuration shows.
func explainProbe(r *report.AuditReport, s *report.AuditSubnet, f Focus) {
	host := f.Host
	if host == "" {
		host = "the registry"
	}
	c, ok := explaining(s, f)
	if !ok {
		if s.Verdict == report.StepPass {
			r.Verdict.Summary = fmt.Sprintf("the probed node's subnet %s passes every check; the probe's %s on %s is outside what the configuration shows (a node-local setting, a hosts-file entry, or the far side); %s",
				nameOf(s), f.Code, host, r.Verdict.Summary)
		}
		return
	}
	where := strings.Join(s.Pools, ", ")
	if where == "" {
		where = nameOf(s)
	}
	r.Verdict.Summary = fmt.Sprintf("the probe's %s on %s from %s: %s (%s); %s", f.Code, host, where, c.Summary, c.ID, r.Verdict.Summary)
	if c.Condition != "" {
		r.Verdict.Condition = c.Condition
	}
}

func explaining(s *report.AuditSubnet, f Focus) (report.CheckResult, bool) {
	info, _ := verdict.Lookup(f.Code)
	about := func(c report.CheckResult) bool { return f.Host == "" || c.Host == "" || HostOf(c.Host) == f.Host }
	direction := func(c report.CheckResult) bool { return sameDirection(c.Condition, info.Condition) }
	for _, take := range []func(report.CheckResult) bool{
		func(c report.CheckResult) bool { return about(c) && direction(c) },
		direction,
		about,
		func(report.CheckResult) bool { return true },
	} {
		for _, c := range s.Checks {
			if c.Status == report.StepFail && take(c) {
				return c, true
			}
		}
	}
	return report.CheckResult{}, false
}

// sameDirection: a route and an endpoint set are one direction for a
// check (a timeout to a private endpoint is either).
func sameDirection(a, b verdict.Condition) bool {
	path := func(c verdict.Condition) bool {
		return c == verdict.ConditionRoute || c == verdict.ConditionEndpointSet
	}
	return a != "" && (a == b || path(a) && path(b))
}

func nameOf(s *report.AuditSubnet) string {
	if s.Name != "" {
		return s.Name
	}
	return s.ID
}

func firstNames(list []string, n int) string {
	if len(list) <= n {
		return strings.Join(list, ", ")
	}
	return strings.Join(list[:n], ", ") + fmt.Sprintf(" and %d more", len(list)-n)
}

// Decide is the audit's one answer over its subnets, with the scope rule of
// A cause that fails every subnet alike (a permission, a VPC-wide
// setting, the registry) is one cause, not one subnet's path.
func Decide(subnets []*report.AuditSubnet) report.AuditVerdict {
	v := report.AuditVerdict{Status: report.StepPass, Scope: ScopeNone}
	var failing []*report.AuditSubnet
	for _, s := range subnets {
		if WorseThan(s.Verdict, v.Status) {
			v.Status = s.Verdict
		}
		if s.Verdict == report.StepFail {
			failing = append(failing, s)
			v.Failing = append(v.Failing, s.ID)
		} else {
			v.Passing = append(v.Passing, s.ID)
		}
	}
	v.Undecided, v.Missing = undecided(subnets)
	switch {
	case len(failing) == 0:
		noneFails(&v, subnets)
		return v
	case len(subnets) == 1:
		oneSubnetFails(&v, failing[0])
	case len(failing) == len(subnets):
		everySubnetFails(&v, subnets, failing)
	default:
		someSubnetsFail(&v, subnets, failing)
	}
	v.Summary += undecidedNote(v)
	return v
}

// noneFails is the verdict when no subnet fails: nothing to audit,
// nothing decided, or every subnet passing (with warnings or not).
func noneFails(v *report.AuditVerdict, subnets []*report.AuditSubnet) {
	switch {
	case len(subnets) == 0:
		v.Status = report.StepWarn
		v.Scope = ScopeNothing
		v.Summary = "no node subnets found: nothing could be checked"
	case allUnknown(subnets):
		v.Scope = ScopeNothing
		v.Summary = fmt.Sprintf("no node subnet found: only the cluster-wide checks ran, none fails; collect %s to audit the nodes' path", firstNames(v.Missing, 4))
	case !decidedAny(subnets):
		v.Scope = ScopeNothing
		v.Summary = fmt.Sprintf("nothing could be checked: every check of %s warned for a file not given (%s)", plural(len(subnets), "subnet"), firstNames(v.Missing, 4))
	default:
		if v.Status == report.StepWarn {
			v.Summary = fmt.Sprintf("no subnet fails; %s with warnings", plural(countStatus(subnets, report.StepWarn), "subnet"))
		} else {
			v.Summary = fmt.Sprintf("every node subnet passes (%s)", plural(len(subnets), "subnet"))
		}
		v.Summary += undecidedNote(*v)
	}
}

// oneSubnetFails: one subnet audited (a focused audit): say what fails
// there; an identity fault is still everyone's.
func oneSubnetFails(v *report.AuditVerdict, s *report.AuditSubnet) {
	v.Scope = ScopeEverySubnet
	c := firstFailure(s)
	for _, x := range s.Checks {
		if x.Status == report.StepFail && x.Condition == verdict.ConditionTLSIdentity {
			c = x
			break
		}
	}
	v.Condition = c.Condition
	v.Summary = fmt.Sprintf("%s fails (%s): %s", s.ID, c.ID, c.Summary)
	if c.Condition == verdict.ConditionTLSIdentity {
		v.Summary += "; one cause for every subnet: identity, not network"
	}
}

// everySubnetFails: one cause for all, one cause beside others, or each
// subnet its own.
func everySubnetFails(v *report.AuditVerdict, subnets, failing []*report.AuditSubnet) {
	v.Scope = ScopeEverySubnet
	common := commonFailures(subnets)
	if len(common) == 0 {
		c := firstFailure(failing[0])
		v.Condition = c.Condition
		v.Summary = "every subnet fails, each for its own cause: " + causesBySubnet(failing)
		return
	}
	c := common[0]
	v.Condition = c.Condition
	if sameFailures(subnets) {
		what := "one cause for every subnet, not one subnet's path"
		if c.Condition == verdict.ConditionTLSIdentity {
			what = "one cause for every subnet: identity, not network"
		}
		v.Summary = fmt.Sprintf("every subnet fails the same way (%s): %s: %s", c.ID, what, c.Summary)
		return
	}
	// One cause on every subnet, and others beside it.
	what := "one cause for every subnet"
	if c.Condition == verdict.ConditionTLSIdentity {
		what = "one cause for every subnet: identity, not network"
	}
	v.Summary = fmt.Sprintf("%s fails on every subnet (%s): %s; not the only cause, by subnet: %s", c.ID, what, c.Summary, causesBySubnet(failing))
}

// someSubnetsFail names the failing and the passing subnets.
func someSubnetsFail(v *report.AuditVerdict, subnets, failing []*report.AuditSubnet) {
	v.Scope = ScopeSomeSubnets
	c := firstFailure(failing[0])
	v.Condition = c.Condition
	v.Summary = fmt.Sprintf("only %s of %d %s (%s): %s; %s %s",
		plural(len(failing), "subnet"), len(subnets), isAre(len(failing), "fails", "fail"), strings.Join(v.Failing, ", "), c.Summary,
		strings.Join(v.Passing, ", "), isAre(len(v.Passing), "passes", "pass"))
	if len(failing) > 1 && !sameFailures(failing) {
		v.Summary += "; by subnet: " + causesBySubnet(failing)
	}
}

// undecided are the checks that warned for a file not given on some
// subnet, and those files, each once in the subnets' order.
func undecided(subnets []*report.AuditSubnet) (checks, files []string) {
	for _, s := range subnets {
		for _, c := range s.Checks {
			if c.Status != report.StepWarn || len(c.Missing) == 0 {
				continue
			}
			checks = addUnique(checks, c.ID)
			for _, f := range c.Missing {
				files = addUnique(files, f)
			}
		}
	}
	return checks, files
}

func undecidedNote(v report.AuditVerdict) string {
	if len(v.Undecided) == 0 {
		return ""
	}
	return fmt.Sprintf("; %s could not decide without %s", firstNames(v.Undecided, 4), firstNames(v.Missing, 4))
}

// allUnknown: every audited subnet is a stand-in for node subnets the
// cloud did not name.
func allUnknown(subnets []*report.AuditSubnet) bool {
	for _, s := range subnets {
		if !s.Unknown {
			return false
		}
	}
	return true
}

// decidedAny: some check of some subnet passed or failed.
func decidedAny(subnets []*report.AuditSubnet) bool {
	for _, s := range subnets {
		for _, c := range s.Checks {
			if c.Status == report.StepPass || c.Status == report.StepFail {
				return true
			}
		}
	}
	return false
}

// failureKey is what a subnet's failures are: each failing check with the
// objects its changes name (one cause is one check on one object; the
// same check failing in two route tables is two causes).
func failureKey(s *report.AuditSubnet) string {
	var parts []string
	for _, c := range s.Checks {
		if c.Status != report.StepFail {
			continue
		}
		parts = append(parts, c.ID+"("+changedObjects(c)+")")
	}
	return strings.Join(parts, ";")
}

// changedObjects are the objects a result's changes name, sorted.
func changedObjects(c report.CheckResult) string {
	var objs []string
	for _, ch := range c.Changes {
		objs = addUnique(objs, ch.Resource)
	}
	sort.Strings(objs)
	return strings.Join(objs, ",")
}

// sameFailures: every subnet fails the same checks on the same objects.
func sameFailures(subnets []*report.AuditSubnet) bool {
	for _, s := range subnets[1:] {
		if failureKey(s) != failureKey(subnets[0]) {
			return false
		}
	}
	return true
}

// causesBySubnet lists each failing subnet's failing checks and the
// objects they name: "subnet-a: s3-route (rtb-a); subnet-b: route-internet (rtb-b)".
func causesBySubnet(failing []*report.AuditSubnet) string {
	var out []string
	for i, s := range failing {
		if i == 4 {
			out = append(out, fmt.Sprintf("and %d more", len(failing)-i))
			break
		}
		var cs []string
		for _, c := range s.Checks {
			if c.Status != report.StepFail {
				continue
			}
			var objs []string
			for _, ch := range c.Changes {
				objs = addUnique(objs, ch.Resource)
			}
			if len(objs) > 0 {
				cs = append(cs, c.ID+" ("+strings.Join(objs, ", ")+")")
			} else {
				cs = append(cs, c.ID)
			}
		}
		out = append(out, s.ID+": "+strings.Join(cs, ", "))
	}
	return strings.Join(out, "; ")
}

// NothingChecked reports whether the audit could check nothing (no node
// subnet, or no check decided): its own exit code, never success's.
func NothingChecked(r *report.AuditReport) bool { return r.Verdict.Scope == ScopeNothing }

// Condition is the audit's condition when it fails ("" otherwise): the
// CLI's exit code comes from it (internal/cli/exit.go).
func Condition(r *report.AuditReport) (verdict.Condition, bool) {
	if r.Verdict.Status != report.StepFail {
		return "", false
	}
	return r.Verdict.Condition, true
}

// commonFailures are the checks, in the first subnet's order, that fail on
// every subnet on the same objects (the same check failing in two route
// tables is two causes).
func commonFailures(subnets []*report.AuditSubnet) []report.CheckResult {
	var out []report.CheckResult
	for _, c := range subnets[0].Checks {
		if c.Status != report.StepFail {
			continue
		}
		all := true
		for _, s := range subnets[1:] {
			o, ok := checkOf(s, c.ID)
			if !ok || o.Status != report.StepFail || changedObjects(o) != changedObjects(c) {
				all = false
				break
			}
		}
		if all {
			out = append(out, c)
		}
	}
	// An identity fault is the textbook one-cause-for-all: name it
	// first when it is among the common ones.
	sort.SliceStable(out, func(i, j int) bool {
		return out[i].Condition == verdict.ConditionTLSIdentity && out[j].Condition != verdict.ConditionTLSIdentity
	})
	return out
}

func firstFailure(s *report.AuditSubnet) report.CheckResult {
	for _, c := range s.Checks {
		if c.Status == report.StepFail {
			return c
		}
	}
	return report.CheckResult{}
}

func checkOf(s *report.AuditSubnet, id string) (report.CheckResult, bool) {
	for _, c := range s.Checks {
		if c.ID == id {
			return c, true
		}
	}
	return report.CheckResult{}, false
}

// Compare sets the first failing subnet beside a healthy one, check by
// check: a passing subnet that shares a pool with it if there is one, else
// the first passing subnet, else the first subnet that only warns. Nil when
// nothing fails or nothing is healthy.
func Compare(subnets []*report.AuditSubnet) *report.AuditComparison {
	var failing *report.AuditSubnet
	for _, s := range subnets {
		if s.Verdict == report.StepFail {
			failing = s
			break
		}
	}
	if failing == nil {
		return nil
	}
	healthy := pickHealthy(subnets, failing)
	if healthy == nil {
		return nil
	}
	cmp := &report.AuditComparison{Failing: failing.ID, Healthy: healthy.ID}
	seen := map[string]bool{}
	add := func(id string) {
		if seen[id] {
			return
		}
		seen[id] = true
		f, fok := checkOf(failing, id)
		h, hok := checkOf(healthy, id)
		row := report.ComparisonRow{Check: id, FailingSummary: f.Summary, HealthySummary: h.Summary}
		if fok {
			row.Failing = f.Status
		}
		if hok {
			row.Healthy = h.Status
		}
		// A check that does not apply on one side (skip) beside a pass is
		// no difference worth reading.
		quiet := map[report.StepStatus]bool{report.StepSkip: true, report.StepPass: true}
		row.Differs = (row.Failing != row.Healthy || fok != hok) && !(quiet[row.Failing] && quiet[row.Healthy])
		cmp.Rows = append(cmp.Rows, row)
	}
	for _, c := range failing.Checks {
		add(c.ID)
	}
	for _, c := range healthy.Checks {
		add(c.ID)
	}
	return cmp
}

func pickHealthy(subnets []*report.AuditSubnet, failing *report.AuditSubnet) *report.AuditSubnet {
	for _, want := range []report.StepStatus{report.StepPass, report.StepWarn} {
		var first *report.AuditSubnet
		for _, s := range subnets {
			if s.Verdict != want {
				continue
			}
			if first == nil {
				first = s
			}
			if sharesPool(s, failing) {
				return s
			}
		}
		if first != nil {
			return first
		}
	}
	return nil
}

func sharesPool(a, b *report.AuditSubnet) bool {
	for _, p := range a.Pools {
		for _, q := range b.Pools {
			if p == q {
				return true
			}
		}
	}
	return false
}

// Changes merges the changes of every failing or warning check over the
// subnets (failing subnets first): one change per resource, action and
// command, with the subnets that need it.
func Changes(subnets []*report.AuditSubnet) []report.Change {
	type key struct{ resource, action, command, check string }
	idx := map[key]int{}
	var out []report.Change
	for _, s := range subnets {
		for _, c := range s.Checks {
			for _, ch := range c.Changes {
				if ch.Check == "" {
					ch.Check = c.ID
				}
				k := key{ch.Resource, ch.Action, ch.Command, ch.Check}
				i, ok := idx[k]
				if !ok {
					i = len(out)
					idx[k] = i
					ch.Subnets = nil
					out = append(out, ch)
				}
				out[i].Subnets = addUnique(out[i].Subnets, s.ID)
				for _, extra := range ch.Subnets {
					out[i].Subnets = addUnique(out[i].Subnets, extra)
				}
			}
		}
	}
	return out
}

func addUnique(list []string, v string) []string {
	for _, x := range list {
		if x == v {
			return list
		}
	}
	return append(list, v)
}

func dedupWarnings(ws []report.AuditWarning) []report.AuditWarning {
	seen := map[report.AuditWarning]bool{}
	out := ws[:0:0]
	for _, w := range ws {
		if seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

func countStatus(subnets []*report.AuditSubnet, st report.StepStatus) int {
	n := 0
	for _, s := range subnets {
		if s.Verdict == st {
			n++
		}
	}
	return n
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func isAre(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
