package explain

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// NodeInfo is what the correlation needs to know about a node.
type NodeInfo struct {
	Name         string
	Pool         string
	PoolSource   string
	Zone         string
	Subnet       string
	SubnetSource string
	InternalIP   string
	Arch         string // node.status.nodeInfo: os/architecture, e.g. linux/arm64
	Created      time.Time
	// Images are the names and digests of node.status.images, normalized.
	// ImagesKnown is false when the node's image list was not read.
	Images      map[string]bool
	ImagesKnown bool
}

// Observation is one container of one pod and its image.
type Observation struct {
	Pod     string // namespace/name
	Node    string
	Image   string
	Failing bool // waiting in ErrImagePull / ImagePullBackOff / ...
	Running bool // the container runs (or ran) with this image
}

// Facts is everything the correlation reads. Nodes may be nil (offline
// input knows node names only).
type Facts struct {
	Nodes        map[string]NodeInfo
	Observations []Observation
	// Pulls records Pulled events: node + "\x00" + image -> true for a
	// fresh pull, false for "already present on machine".
	Pulls map[string]bool
}

func (f *Facts) notePull(node, image string, fresh bool) {
	if f.Pulls == nil {
		f.Pulls = map[string]bool{}
	}
	k := node + "\x00" + NormalizeImage(image)
	f.Pulls[k] = f.Pulls[k] || fresh
}

// NotePull records a Pulled event for the node and image.
func (f *Facts) NotePull(node, image string, fresh bool) { f.notePull(node, image, fresh) }

// dimensions the failing and healthy node sets are compared on, in the
// order a verdict names them: the usual causes first (subnet, zone, pool),
// then the trigger (node age).
var dimensions = []string{"subnet", "zone", "pool"}

func (n NodeInfo) dim(d string) string {
	switch d {
	case "subnet":
		return n.Subnet
	case "zone":
		return n.Zone
	case "pool":
		return n.Pool
	}
	return ""
}

// Correlate groups findings by image and compares the nodes where the image
// fails with the nodes where it runs. It is O(observations + findings +
// nodes involved).
func Correlate(f Facts, findings []report.ExplainFinding) []report.ExplainGroup {
	var c correlation
	for _, fd := range WithoutEchoes(findings) {
		if fd.Image != "" {
			c.image(NormalizeImage(fd.Image)).finding(fd)
		}
	}
	for _, o := range f.Observations {
		switch {
		case o.Failing:
			c.image(NormalizeImage(o.Image)).failedPod(o.Node, o.Pod)
		case o.Running:
			c.image(NormalizeImage(o.Image)).runningPod(o.Node, o.Pod)
		}
	}
	var out []report.ExplainGroup
	for _, img := range c.order {
		if e := c.images[img]; len(e.failing) > 0 { // only images that fail somewhere are reported
			out = append(out, e.group(f, img))
		}
	}
	return out
}

// correlation is what was seen, by image, in the order the images first
// appear.
type correlation struct {
	images map[string]*imageEvidence
	order  []string
}

// image is the evidence of image, new when it was not seen yet.
func (c *correlation) image(image string) *imageEvidence {
	if e, ok := c.images[image]; ok {
		return e
	}
	if c.images == nil {
		c.images = map[string]*imageEvidence{}
	}
	e := &imageEvidence{
		g:     report.ExplainGroup{Image: image},
		codes: map[verdict.Code]int{}, byCode: map[verdict.Code]report.ExplainFinding{},
		failing: map[string]map[string]bool{}, healthy: map[string]map[string]bool{},
		fpods: map[string]bool{}, hpods: map[string]bool{}, nodeCode: map[string]map[verdict.Code]bool{},
	}
	c.images[image] = e
	c.order = append(c.order, image)
	return e
}

// imageEvidence is one image's findings (counted by code, the first of
// each code kept) and the nodes and pods where it fails and where it runs.
type imageEvidence struct {
	g        report.ExplainGroup
	codes    map[verdict.Code]int
	byCode   map[verdict.Code]report.ExplainFinding
	failing  map[string]map[string]bool // node -> pods
	healthy  map[string]map[string]bool
	fpods    map[string]bool
	hpods    map[string]bool
	nodeCode map[string]map[verdict.Code]bool
}

// knownNode is node, or a name for the node a finding or a pod did not say.
func knownNode(node string) string {
	if node == "" {
		return "(unknown node)"
	}
	return node
}

// addPod records pod on node in m (the node alone when pod is empty).
func addPod(m map[string]map[string]bool, node, pod string) {
	node = knownNode(node)
	if m[node] == nil {
		m[node] = map[string]bool{}
	}
	if pod != "" {
		m[node][pod] = true
	}
}

func (e *imageEvidence) finding(fd report.ExplainFinding) {
	e.g.Findings++
	if e.g.Registry == "" {
		e.g.Registry = fd.Registry
	}
	e.codes[fd.Code]++
	if _, ok := e.byCode[fd.Code]; !ok {
		e.byCode[fd.Code] = fd
	}
	addPod(e.failing, fd.Node, fd.Pod)
	if fd.Pod != "" {
		e.fpods[fd.Pod] = true
	}
	n := knownNode(fd.Node)
	if e.nodeCode[n] == nil {
		e.nodeCode[n] = map[verdict.Code]bool{}
	}
	e.nodeCode[n][fd.Code] = true
}

func (e *imageEvidence) failedPod(node, pod string) {
	addPod(e.failing, node, pod)
	e.fpods[pod] = true
}

func (e *imageEvidence) runningPod(node, pod string) {
	addPod(e.healthy, node, pod)
	e.hpods[pod] = true
}

// group is the image's group: its dominant code's verdict, its failing
// nodes then its healthy ones, and the judgement that compares them.
func (e *imageEvidence) group(f Facts, img string) report.ExplainGroup {
	// A node with both failing and running pods of the image counts as
	// failing: it could not pull.
	for n := range e.failing {
		delete(e.healthy, n)
	}
	for p := range e.fpods {
		delete(e.hpods, p)
	}
	g := e.g
	g.FailingPods = sortedKeys(e.fpods)
	g.HealthyPods = sortedKeys(e.hpods)
	if fd, ok := e.byCode[dominantCode(e.codes)]; ok {
		g.Code, g.Stage, g.Cause, g.Condition, g.Endpoint = fd.Code, fd.Stage, fd.Cause, fd.Condition, fd.Endpoint
		if g.Registry == "" {
			g.Registry = fd.Registry
		}
	}
	fn, hn := e.nodes(f, img)
	g.Nodes = append(fn, hn...)
	judge(&g, f, fn, hn)
	return g
}

// nodes are the image's failing nodes (with their pods and codes) and its
// healthy nodes (with the evidence that they are), each sorted by name.
func (e *imageEvidence) nodes(f Facts, img string) (failing, healthy []report.ExplainNode) {
	for _, name := range sortedSet(e.failing) {
		node := nodeOf(f, name, img)
		node.Status = report.NodeStatusFailed
		node.Evidence = report.EvidenceFailing
		node.Pods = sortedKeys(e.failing[name])
		for c := range e.nodeCode[name] {
			node.Codes = append(node.Codes, c)
		}
		sort.Slice(node.Codes, func(i, j int) bool { return node.Codes[i] < node.Codes[j] })
		failing = append(failing, node)
	}
	for _, name := range sortedSet(e.healthy) {
		node := nodeOf(f, name, img)
		node.Status = report.NodeStatusOK
		node.Pods = sortedKeys(e.healthy[name])
		node.Evidence = healthEvidence(f, name, img, node.HasImage)
		healthy = append(healthy, node)
	}
	return failing, healthy
}

func sortedSet(m map[string]map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func dominantCode(codes map[verdict.Code]int) verdict.Code {
	var best verdict.Code
	n := 0
	keys := make([]string, 0, len(codes))
	for c := range codes {
		keys = append(keys, string(c))
	}
	sort.Strings(keys)
	for _, k := range keys {
		c := verdict.Code(k)
		w := codes[c]
		if c == verdict.Other {
			w = 0 // a back-off without a cause never outweighs a cause
			if best == "" {
				best = c
			}
		}
		if w > n {
			best, n = c, w
		}
	}
	return best
}

func nodeOf(f Facts, name, image string) report.ExplainNode {
	n := report.ExplainNode{Name: name}
	info, ok := f.Nodes[name]
	if !ok {
		return n
	}
	n.Pool, n.PoolSource, n.Zone = info.Pool, info.PoolSource, info.Zone
	n.Subnet, n.SubnetSource, n.InternalIP = info.Subnet, info.SubnetSource, info.InternalIP
	if !info.Created.IsZero() {
		t := info.Created.UTC()
		n.Created = &t
	}
	if info.ImagesKnown {
		has := info.Images[image]
		n.HasImage = &has
	}
	return n
}

// healthEvidence says what a healthy replica proves about the path.
func healthEvidence(f Facts, node, image string, hasImage *bool) string {
	if fresh, ok := f.Pulls[node+"\x00"+image]; ok {
		if fresh {
			return report.EvidenceFresh
		}
		return report.EvidenceCached
	}
	if hasImage != nil && *hasImage {
		return report.EvidenceCached
	}
	return report.EvidenceUnknown
}

// judge compares failing and healthy nodes and writes the group's verdict,
// advice and next commands:
//
//  1. nothing to compare with (no healthy node): one node, or all alike;
//  2. the facts that separate failing from healthy nodes (subnet, zone,
//     pool, node age);
//  3. none separates them: the cache explains the healthy ones, or the
//     failing nodes themselves differ;
//  4. some do: the split names them, and the advice follows the first.
func judge(g *report.ExplainGroup, f Facts, failing, healthy []report.ExplainNode) {
	g.Next = nextProbes(g.Image, failing, healthy)
	codeAdvice := groupCodeAdvice(g)
	what := "the pull"
	if g.Code != "" && g.Code != verdict.Other {
		what = fmt.Sprintf("%s (%s)", g.Code, g.Condition)
	}
	cached := 0
	for _, h := range healthy {
		if h.Evidence == report.EvidenceCached {
			cached++
		}
	}
	cacheNote := ""
	if len(healthy) > 0 && cached == len(healthy) {
		cacheNote = fmt.Sprintf(" Every healthy replica runs on a node that already had the image (%d node(s)): they prove nothing about the path, and may fail too once their cache is gone.", cached)
	}

	// 1. Nothing to compare with.
	if len(healthy) == 0 {
		judgeAlone(g, len(failing), what, codeAdvice)
		return
	}

	// 2. Which facts separate failing from healthy nodes?
	sep, cutoff := separators(f, failing, healthy)
	g.SeparatedBy = sep

	// 3. None does.
	if len(sep) == 0 {
		if cached == len(healthy) {
			g.Pattern = "cache-only"
			says(g, fmt.Sprintf("Every node that had to pull failed (%d node(s)) with %s.", len(failing), what), cacheNote)
			g.Advice = append(codeAdvice, "Treat this as all nodes failing: verify with a fresh pull on a node that does not have the image (a new node from scale-up or replacement).")
			return
		}
		g.Pattern = "mixed"
		says(g, "Failing and healthy nodes share subnet, zone and pool, and were not created apart: look at the failing nodes themselves (hand-made fixes, hosts-file entries, runtime config).", cacheNote)
		g.Advice = append(codeAdvice, "Compare /etc/containerd/certs.d, /etc/hosts and /etc/resolv.conf of a failing node with a healthy one.")
		return
	}

	// 4. The split.
	g.Pattern = sep[0]
	says(g, fmt.Sprintf("%d failing node(s), %d healthy: %s.", len(failing), len(healthy), splitSays(f, failing, healthy, sep, cutoff)), fmt.Sprintf(" Failing with %s.%s", what, cacheNote))
	g.Advice = append(splitAdvice(g.Pattern, g.Condition), codeAdvice...)
}

// says sets the group's verdict: where (its first sentence, kept alone in
// Where), then the rest.
func says(g *report.ExplainGroup, where, rest string) {
	g.Where = where
	g.Verdict = where + rest
}

// nextProbes are the commands that prove the verdict: a probe on a
// failing node, and one on a healthy node to compare.
func nextProbes(img string, failing, healthy []report.ExplainNode) []string {
	next := []string{
		fmt.Sprintf("pullpath probe %s   # on failing node %s, in the node's network namespace (a hostNetwork pod or a shell on the node)", img, failing[0].Name),
	}
	if len(healthy) > 0 {
		next = append(next, fmt.Sprintf("pullpath probe %s   # on healthy node %s, to compare a full pull of every layer", img, healthy[0].Name))
	}
	return next
}

// groupCodeAdvice is the advice of the group's code for its endpoint.
func groupCodeAdvice(g *report.ExplainGroup) []string {
	if g.Code == "" || g.Code == verdict.Other {
		return nil
	}
	role := verdict.RoleRegistry
	switch g.Stage {
	case verdict.StageAuth:
		role = verdict.RoleAuth
	case verdict.StageBlob:
		role = verdict.RoleBlob
	}
	return verdict.Advise(g.Code, g.Endpoint, role)
}

// judgeAlone is the verdict when no node runs the image: one failing
// node, or every node failing alike (whose condition says where to look).
func judgeAlone(g *report.ExplainGroup, failing int, what string, codeAdvice []string) {
	if failing == 1 {
		g.Pattern = "single-node"
		says(g, fmt.Sprintf("One node fails %s and no node runs the image: nothing to compare with.", what), "")
		g.Advice = append(codeAdvice, "Probe the failing node, then a node of another pool or subnet, to see whether the failure is the node's or everyone's.")
		return
	}
	g.Pattern = "all-nodes"
	switch g.Condition {
	case verdict.ConditionTLSIdentity, verdict.ConditionImage:
		says(g, fmt.Sprintf("All %d nodes fail alike with %s: identity or image, not the network.", failing, what), " A path problem would spare some subnets.")
	case verdict.ConditionRegistry:
		says(g, fmt.Sprintf("All %d nodes fail alike with %s: the registry side.", failing, what), "")
	default:
		says(g, fmt.Sprintf("All %d nodes fail alike with %s: a path common to every node (the whole VNet/VPC, its DNS, or the registry side), not one subnet.", failing, what), "")
	}
	g.Advice = codeAdvice
}

// separators are the dimensions whose values never overlap between
// failing and healthy nodes (a dimension unknown on one node is skipped),
// then "node-age" when every failing node is younger than every healthy
// one, with the youngest failing node's creation time as the cutoff.
func separators(f Facts, failing, healthy []report.ExplainNode) ([]string, time.Time) {
	valuesOf := func(nodes []report.ExplainNode, d string) (map[string]bool, bool) {
		vs := map[string]bool{}
		for _, n := range nodes {
			v := f.Nodes[n.Name].dim(d)
			if v == "" {
				return nil, false
			}
			vs[v] = true
		}
		return vs, true
	}
	var sep []string
	for _, d := range dimensions {
		fv, fok := valuesOf(failing, d)
		if !fok {
			continue
		}
		hv, hok := valuesOf(healthy, d)
		if !hok {
			continue
		}
		overlap := false
		for v := range fv {
			if hv[v] {
				overlap = true
			}
		}
		if !overlap {
			sep = append(sep, d)
		}
	}
	var cutoff time.Time
	if minF, maxH, ok := ages(failing, healthy, f); ok && minF.After(maxH) {
		sep = append(sep, "node-age")
		cutoff = minF
	}
	return sep, cutoff
}

// splitSays names each separating dimension with the failing and healthy
// values: "only nodes in subnet A fail (healthy: B); ...".
func splitSays(f Facts, failing, healthy []report.ExplainNode, sep []string, cutoff time.Time) string {
	fvals := func(d string) string { return values(failing, f, d) }
	hvals := func(d string) string { return values(healthy, f, d) }
	var parts []string
	for _, d := range sep {
		switch d {
		case "subnet":
			parts = append(parts, fmt.Sprintf("only nodes in subnet %s fail (healthy: %s)%s", fvals(d), hvals(d), guessNote(failing, healthy, f)))
		case "zone":
			parts = append(parts, fmt.Sprintf("only nodes in zone %s fail (healthy: %s)", fvals(d), hvals(d)))
		case "pool":
			parts = append(parts, fmt.Sprintf("only nodes of pool %s fail (healthy: %s)", fvals(d), hvals(d)))
		case "node-age":
			parts = append(parts, fmt.Sprintf("only nodes created after %s fail", cutoff.UTC().Format("2006-01-02 15:04:05 UTC")))
		}
	}
	return strings.Join(parts, "; ")
}

// splitAdvice is where to look for a split by pattern; a tls-identity
// failure on some nodes only is a path or per-pool difference, not a
// missing permission.
func splitAdvice(pattern string, c verdict.Condition) []string {
	var adv []string
	switch pattern {
	case "subnet":
		adv = append(adv, "The cause is the failing subnet's path, not the image or permissions: compare its route table, network ACL / NSG, and private endpoint ENIs (or NAT) with a working subnet's, top to bottom.")
	case "zone":
		adv = append(adv, "A per-zone difference: a NAT gateway or endpoint ENI present in one availability zone and not the other, or a zone-local resolver.")
	case "pool":
		adv = append(adv, "A per-pool difference: the pool's subnet, its node configuration (custom DNS, hosts file, /etc/containerd/certs.d), or its node identity.")
	case "node-age":
		adv = append(adv, "Scale-up or replacement is the trigger, not the cause: the new nodes lack something the old ones have (a subnet added later without endpoints or routes, hosts-file entries or hand fixes that vanished, a changed launch template).")
	}
	if c == verdict.ConditionTLSIdentity {
		adv = append(adv, "A permission problem fails every node alike: since only some nodes fail, look at what differs between them (their network path to the registry, their runtime's CA config, or a per-pool identity).")
	}
	return adv
}

func ages(failing, healthy []report.ExplainNode, f Facts) (minF, maxH time.Time, ok bool) {
	for i, n := range failing {
		c := f.Nodes[n.Name].Created
		if c.IsZero() {
			return minF, maxH, false
		}
		if i == 0 || c.Before(minF) {
			minF = c
		}
	}
	for i, n := range healthy {
		c := f.Nodes[n.Name].Created
		if c.IsZero() {
			return minF, maxH, false
		}
		if i == 0 || c.After(maxH) {
			maxH = c
		}
	}
	return minF, maxH, true
}

func values(nodes []report.ExplainNode, f Facts, d string) string {
	set := map[string]bool{}
	for _, n := range nodes {
		set[f.Nodes[n.Name].dim(d)] = true
	}
	return strings.Join(sortedKeys(set), ", ")
}

func guessNote(failing, healthy []report.ExplainNode, f Facts) string {
	for _, n := range append(append([]report.ExplainNode{}, failing...), healthy...) {
		if strings.HasPrefix(f.Nodes[n.Name].SubnetSource, "InternalIP") {
			return " [subnets guessed from InternalIP /24]"
		}
	}
	return ""
}

// WithoutEchoes leaves out the kubelet's back-off findings ("Back-off
// pulling image", "Error: ErrImagePull") of a pod or node whose runtime
// message is also there: they only repeat that a pull failed, and would
// otherwise stand beside the real cause as an OTHER.
func WithoutEchoes(fs []report.ExplainFinding) []report.ExplainFinding {
	key := func(f report.ExplainFinding) string {
		if f.Pod != "" {
			return "pod " + f.Pod + " " + f.Image
		}
		return "node " + f.Node + " " + f.Image
	}
	caused := map[string]bool{}
	for _, f := range fs {
		if f.Rule != "kubelet-backoff" {
			caused[key(f)] = true
		}
	}
	out := fs[:0:0]
	for _, f := range fs {
		if f.Rule == "kubelet-backoff" && caused[key(f)] {
			continue
		}
		out = append(out, f)
	}
	return out
}
