package diagnose

import (
	"fmt"
	"net/netip"
	"sort"

	"github.com/pullpath/pullpath/internal/addrscope"
	"github.com/pullpath/pullpath/internal/exitcode"
	"github.com/pullpath/pullpath/internal/nodeplace"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Answer is the one answer over what the steps found. It is pure.
//
//  1. The walk decides where it ran and found a failure: the nodes walked
//     are the runtime's own view of the path, today.
//  2. Otherwise the events decide (explain's dominant finding for the image).
//  3. The failing Pods' own pull identity (answer_identity.go) names the
//     secret when the identity is the broken link; the audit names the
//     objects to change; without one, the verdict's advice says where to
//     look and the audit to run is named.
//  4. The proof: a fresh sweep of every pool with the kubelet's canary, then
//     a node created after the fix.
//  5. The exit code (internal/exitcode) of the repair direction.
func Answer(r *report.DiagnoseReport, clouds []cloudNeed) report.DiagnoseAnswer {
	var a report.DiagnoseAnswer
	sw, g := r.Sweep, explainGroup(r)
	probeStuck := sw != nil && probeImageOnly(sw)
	if probeStuck {
		a.Look = append(a.Look, probeImageNote(sw))
	}
	switch {
	case probeStuck && g != nil:
		// The walk proved only that the nodes cannot pull pullpath's own
		// image: the events decide.
		fromRead(&a, g, r.Explain)
	case probeStuck:
		a.Status, a.Source = report.AnswerUnknown, "walk"
		a.Summary = "The walk could not run: its Pods could not pull pullpath's own image, and no Pod of the target fails to pull."
	case sw != nil && sw.Verdict.Status == verdict.StatusFail && sw.Verdict.Failed+sw.Verdict.NoAnswer > 0:
		fromWalk(&a, sw)
		if g != nil && g.Code != "" && g.Code != a.Code {
			a.Look = append(a.Look, fmt.Sprintf("The kubelet's events said %s; the walk from the same nodes says %s now.", g.Code, a.Code))
		}
	case g != nil:
		fromRead(&a, g, r.Explain)
		if sw != nil && sw.Verdict.Status == verdict.StatusOK {
			a.Look = append(a.Look, walkPullsNote(sw))
		}
	case sw != nil && sw.Verdict.Status == verdict.StatusOK:
		a.Status = report.AnswerOK
		a.Summary = fmt.Sprintf("Nothing is broken: no Pod fails to pull in %s, and the walk of %s from %s pulls fully.", scopeOr(r), r.Image, plural(sw.Verdict.OK, "node", "nodes"))
		a.Where = fmt.Sprintf("%s walked, every group ok", plural(len(sw.Groups), "group", "groups"))
		a.Source = "walk"
	default:
		a.Status = report.AnswerNothing
		a.Summary = fmt.Sprintf("Nothing is failing: no Pod in %s fails to pull.", scopeOr(r))
		if r.Image == "" {
			a.Summary += " Give --image IMAGE to walk an image's path from every group anyway."
		}
		a.Source = "read"
	}

	byIdentity := identityAnswer(&a, r)

	// 3. The objects to change.
	if ar := r.Audit; ar != nil {
		a.Look = withoutAuditHint(a.Look, nodeplace.Cloud(ar.Target.Cloud))
	}
	if ar := r.Audit; ar != nil && a.Status == report.AnswerBroken {
		var ips []string
		if a.Link != nil {
			ips = nodeIPs(r, a.Link.Nodes)
		}
		a.Changes = append(a.Changes, relevantChanges(ar, a.Condition, ips)...)
		if len(a.Changes) == 0 && ar.Verdict.Status == report.StepPass {
			a.Look = append(a.Look, fmt.Sprintf("The %s audit finds nothing wrong in the configuration it reads (%s); look where it cannot: the far side's return route, an appliance, the registry's own policy.", ar.Target.Cloud, ar.Source))
		}
		if a.Condition == "" && ar.Verdict.Condition != "" {
			a.Condition = ar.Verdict.Condition
		}
	}
	byCache := a.Status == report.AnswerBroken && cacheFirst(&a)
	if a.Status == report.AnswerBroken && len(a.Changes) == 0 {
		for _, c := range clouds {
			if !c.Audited && c.Next != "" {
				// One line names the audit to run, with how to collect it.
				a.Look = withoutAuditHint(a.Look, c.Cloud)
				a.Look = append(a.Look, fmt.Sprintf("The nodes run on %s: name the object to change with %s.", c.Cloud.Title(), c.Next))
			}
		}
	}

	// 4. The proof. 5. The exit code.
	a.Prove = proof(a.Status, r.Image)
	if byIdentity {
		a.Prove = identityProve(r)
	}
	if byCache {
		a.Prove = append(a.Prove, cacheProof)
	}
	a.Exit = exitCode(a)
	return a
}

// proof is the command that proves the fix: a fresh sweep of every pool
// with the kubelet's canary, then, when something was broken, a node
// created after the fix.
func proof(status report.AnswerStatus, image string) []string {
	if image == "" {
		image = "IMAGE"
	}
	sweep := "pullpath sweep " + image + " --canary --per pool"
	switch status {
	case report.AnswerBroken, report.AnswerUnknown:
		return []string{sweep, "then on a node created after the fix (scale a pool up by one or replace a node): a node fixed by hand proves nothing"}
	}
	return []string{sweep}
}

// exitCode is the answer's exit code (internal/exitcode): its repair
// direction's, 0 when nothing is broken.
func exitCode(a report.DiagnoseAnswer) int {
	if a.Status == report.AnswerOK || a.Status == report.AnswerNothing {
		return exitcode.OK
	}
	return exitcode.For(a.Condition)
}

// probeImageOnly is true when every failing node of the walk failed
// because its probe Pod could not pull pullpath's own image: the walk then
// says nothing about the target's path.
func probeImageOnly(sw *report.SweepReport) bool {
	stuck := 0
	for _, n := range sw.Nodes {
		if n.Status == report.SweepOK {
			return false
		}
		if n.Probe != nil && n.Probe.Source == report.SourceProbeEvents {
			stuck++
		} else if n.Status == report.SweepFail {
			return false
		}
	}
	return stuck > 0
}

// probeImageNote says what to do when the probe's own image cannot be pulled.
func probeImageNote(sw *report.SweepReport) string {
	var code verdict.Code
	n := 0
	for _, x := range sw.Nodes {
		if x.Probe != nil && x.Probe.Source == report.SourceProbeEvents {
			n++
			if code == "" {
				code = x.Probe.Verdict.Code
			}
		}
	}
	return fmt.Sprintf("The walk's Pods could not pull pullpath's own image %s on %s (%s): copy it into a registry the nodes reach (crane copy %s REGISTRY/pullpath-agent:TAG) and pass --image-for-probe.", sw.ProbeImage, plural(n, "node", "nodes"), code, sw.ProbeImage)
}

func explainGroup(r *report.DiagnoseReport) *report.ExplainGroup {
	if r.Explain == nil || r.Image == "" {
		return nil
	}
	for i := range r.Explain.Groups {
		g := &r.Explain.Groups[i]
		if g.Image == r.Image && (len(g.FailingPods) > 0 || g.Findings > 0) {
			return g
		}
	}
	return nil
}

// fromWalk reads the answer from the sweep: the dominant failing node's
// verdict and hop.
func fromWalk(a *report.DiagnoseAnswer, sw *report.SweepReport) {
	v := sw.Verdict
	a.Status = report.AnswerBroken
	a.Condition, a.Code, a.Source = v.Condition, v.Code, "walk"
	a.Where = v.Summary // the sweep's divergence: one or two sentences
	link := &report.BrokenLink{Host: v.Endpoint, Role: v.Role, Code: v.Code}
	var nodes []string
	var summary, address string
	for _, n := range sw.Nodes {
		if n.Status != report.SweepFail && n.Status != report.SweepNoAnswer {
			continue
		}
		if n.Verdict.Code != v.Code && v.Code != "" {
			continue
		}
		nodes = append(nodes, n.Name)
		if summary == "" {
			summary = n.Verdict.Summary
			a.Cause = n.Verdict.Cause
			if link.Host == "" {
				link.Host, link.Role = n.Verdict.Endpoint, n.Verdict.Role
			}
			if p := n.Probe; p != nil {
				for _, h := range p.Hops {
					if h.Host != link.Host {
						continue
					}
					if h.Step != "" {
						link.Step = h.Step
					}
					if h.Address != "" {
						address = h.Address
					}
				}
			}
		}
	}
	sort.Strings(nodes)
	link.Nodes = nodes
	switch a.Cause {
	case verdict.CauseTimeout, verdict.CauseUnreachable, verdict.CauseRefused, verdict.CauseReset, verdict.CauseTLS:
		// The address the node tried; a DNS failure has none of its own.
		link.Address = address
	}
	if link.Host != "" || link.Code != "" {
		a.Link = link
	}
	a.Summary = summary
	if a.Summary == "" {
		a.Summary = v.Summary
	}
	a.Look = append(a.Look, v.Advice...)
}

// fromRead reads the answer from explain's group and its findings.
func fromRead(a *report.DiagnoseAnswer, g *report.ExplainGroup, ex *report.ExplainReport) {
	a.Status = report.AnswerBroken
	if g.Code == "" || g.Code == verdict.Other {
		a.Status = report.AnswerUnknown
	}
	a.Condition, a.Code, a.Cause, a.Source = g.Condition, g.Code, g.Cause, "read"
	a.Where = g.Where
	var f *report.ExplainFinding
	for i := range ex.Findings {
		x := &ex.Findings[i]
		if x.Image == g.Image && x.Code == g.Code && x.Endpoint == g.Endpoint {
			f = x
			break
		}
	}
	if f != nil {
		a.Summary = f.Summary
	}
	var nodes []string
	for _, n := range g.Nodes {
		if n.Status == report.NodeStatusFailed {
			nodes = append(nodes, n.Name)
		}
	}
	sort.Strings(nodes)
	if g.Endpoint != "" || g.Code != "" {
		a.Link = &report.BrokenLink{Host: g.Endpoint, Code: g.Code, Nodes: nodes}
		if f != nil {
			a.Link.Role, a.Link.Step = f.Role, f.Step
			a.Link.Address = addrscope.Host(f.Address)
		}
	}
	a.Look = append(a.Look, g.Advice...)
}

// withoutAuditHint drops the advice line that says to run the cloud's
// audit (verdict.IsAuditHint) when diagnose ran it or names it itself.
func withoutAuditHint(look []string, cloud nodeplace.Cloud) []string {
	var out []string
	for _, l := range look {
		if !verdict.IsAuditHint(cloud, l) {
			out = append(out, l)
		}
	}
	return out
}

// relevantChanges are the audit's changes for the subnets of the failing
// nodes (by their addresses; else the subnets the audit found failing),
// those whose check points in the answer's repair direction first.
func relevantChanges(ar *report.AuditReport, c verdict.Condition, failingIPs []string) []report.Change {
	failing := subnetsOf(ar, failingIPs)
	if len(failing) == 0 {
		for _, id := range ar.Verdict.Failing {
			failing[id] = true
		}
	}
	cond := map[string]verdict.Condition{}
	for _, s := range ar.Subnets {
		for _, ch := range s.Checks {
			cond[ch.ID] = ch.Condition
		}
	}
	var first, rest []report.Change
	for _, ch := range ar.Changes {
		if len(ch.Subnets) > 0 && len(failing) > 0 && !anyIn(ch.Subnets, failing) {
			continue
		}
		if c != "" && cond[ch.Check] == c {
			first = append(first, ch)
		} else {
			rest = append(rest, ch)
		}
	}
	return append(first, rest...)
}

// subnetsOf are the audited subnets whose CIDR holds one of ips.
func subnetsOf(ar *report.AuditReport, ips []string) map[string]bool {
	out := map[string]bool{}
	for _, ip := range ips {
		a, err := netip.ParseAddr(ip)
		if err != nil {
			continue
		}
		for _, s := range ar.Subnets {
			if p, err := netip.ParsePrefix(s.CIDR); err == nil && p.Contains(a) {
				out[s.ID] = true
			}
		}
	}
	return out
}

// nodeIPs are the internal addresses of the named nodes, as the walk or the
// read knew them.
func nodeIPs(r *report.DiagnoseReport, names []string) []string {
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var out []string
	if r.Sweep != nil {
		for _, n := range r.Sweep.Nodes {
			if want[n.Name] && n.InternalIP != "" {
				out = append(out, n.InternalIP)
				delete(want, n.Name)
			}
		}
	}
	if r.Explain != nil {
		for _, g := range r.Explain.Groups {
			for _, n := range g.Nodes {
				if want[n.Name] && n.InternalIP != "" {
					out = append(out, n.InternalIP)
					delete(want, n.Name)
				}
			}
		}
	}
	return out
}

func anyIn(ids []string, set map[string]bool) bool {
	for _, id := range ids {
		if set[id] {
			return true
		}
	}
	return false
}

func scopeOr(r *report.DiagnoseReport) string {
	if r.Scope != "" {
		return r.Scope
	}
	return "the target"
}
