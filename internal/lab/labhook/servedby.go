package labhook

import (
	"bufio"
	"bytes"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// ReadChain reads containerd's debug log (logrus text lines) for a pull
// through a mirror chain: the hosts it sent requests to, in order of the
// first request ("do request" lines), and the host whose 2xx answer each
// step took last ("fetch response received" lines): resolve is the
// manifest by tag (containerd's resolver), manifest the manifests by
// digest, blobs the config and layers (several hosts joined by ", ").
func ReadChain(log []byte) (served report.ServedBy, tried []string) {
	seen := map[string]bool{}
	var blobHosts []string
	sc := bufio.NewScanner(bytes.NewReader(log))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		msg := logField(line, "msg")
		if msg != "do request" && msg != "fetch response received" {
			continue
		}
		u, err := url.Parse(logField(line, "url"))
		if err != nil || u.Host == "" {
			continue
		}
		host := u.Host
		if msg == "do request" {
			if !seen[host] {
				seen[host] = true
				tried = append(tried, host)
			}
			continue
		}
		if !strings.HasPrefix(logField(line, "response.status"), "2") {
			continue
		}
		_, rest, ok := strings.Cut(u.Path, "/manifests/")
		switch {
		case ok && strings.Contains(rest, ":"):
			served.Manifest = host
		case ok:
			served.Resolve = host
		case strings.Contains(u.Path, "/blobs/"):
			if !containsStr(blobHosts, host) {
				blobHosts = append(blobHosts, host)
			}
		}
	}
	served.Blobs = strings.Join(blobHosts, ", ")
	return served, tried
}

func containsStr(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// logField is the value of key in a logrus text line: key=value or
// key="quoted value".
func logField(line, key string) string {
	i := 0
	for {
		j := strings.Index(line[i:], key+"=")
		if j < 0 {
			return ""
		}
		j += i
		if j == 0 || line[j-1] == ' ' {
			v := line[j+len(key)+1:]
			if m := reQuoted.FindString(v); m != "" {
				return strings.ReplaceAll(strings.ReplaceAll(m[1:len(m)-1], `\"`, `"`), `\\`, `\`)
			}
			if k := strings.IndexByte(v, ' '); k >= 0 {
				return v[:k]
			}
			return v
		}
		i = j + len(key) + 1
	}
}

var reQuoted = regexp.MustCompile(`^"(?:[^"\\]|\\.)*"`)

// compareServedBy names every step the probe's chain and containerd say
// different hosts served (both pulls worked: every step has a host).
func compareServedBy(probe, rt report.ServedBy) []string {
	var out []string
	for _, s := range []struct{ step, p, r string }{
		{"resolve", probe.Resolve, rt.Resolve},
		{"manifest", probe.Manifest, rt.Manifest},
		{"blobs", probe.Blobs, rt.Blobs},
	} {
		if s.p != s.r {
			out = append(out, fmt.Sprintf("served by (%s): the probe says %s, containerd's log %s", s.step, orNothing(s.p), orNothing(s.r)))
		}
	}
	return out
}

func orNothing(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

// chainCheck fills rt's served-by and tried hosts from containerd's log
// and, when both pulls worked, names where they disagree on which host
// served.
func chainCheck(env *lab.Env, rt *report.RuntimePull, probe *report.ProbeReport) {
	b, err := os.ReadFile(filepath.Join(env.RunDir, "logs", "containerd.log"))
	if err != nil {
		rt.Mismatches = append(rt.Mismatches, "served by: containerd's log: "+err.Error())
		return
	}
	sb, tried := ReadChain(b)
	rt.ServedBy, rt.Tried = &sb, tried
	if !rt.OK || probe == nil || probe.Verdict.Status != verdict.StatusOK {
		return
	}
	if probe.Chain == nil {
		// no mirror applied: the registry served every step
		reg := registryServed(probe)
		if reg == "" {
			rt.Mismatches = append(rt.Mismatches, "served by: the probe's report has no host chain and no registry endpoint")
			return
		}
		rt.Mismatches = append(rt.Mismatches, compareServedBy(report.ServedBy{Resolve: reg, Manifest: reg, Blobs: reg}, sb)...)
		return
	}
	rt.Mismatches = append(rt.Mismatches, compareServedBy(probe.Chain.ServedBy, sb)...)
}

// registryServed is the registry endpoint of a walk that had no mirror.
func registryServed(probe *report.ProbeReport) string {
	for _, e := range probe.Endpoints {
		if e != nil && e.Role == verdict.RoleRegistry && e.Status == report.StepPass {
			return e.Host
		}
	}
	return ""
}
