package explain

import (
	"net"
	"net/url"
	"regexp"
	"strings"

	"github.com/distribution/reference"
)

// MaxMessage is the longest message Classify reads; the rest is ignored.
// Real kubelet events are far shorter (the API server caps an Event message
// at 1 KiB for new events); the cap keeps the work bounded for any input.
const MaxMessage = 64 << 10

// normalize makes one line of a message: JSON/Go escapes of quotes undone,
// whitespace runs (including newlines of wrapped events) collapsed.
func normalize(s string) string {
	if len(s) > MaxMessage {
		s = s[:MaxMessage]
	}
	s = strings.ToValidUTF8(s, "?")
	// Undo one or two levels of quoting as found in journald and JSON logs.
	s = strings.ReplaceAll(s, `\\\"`, `"`)
	s = strings.ReplaceAll(s, `\"`, `"`)
	s = strings.ReplaceAll(s, `\n`, " ")
	s = strings.ReplaceAll(s, `\t`, " ")
	return strings.Join(strings.Fields(s), " ")
}

// Patterns that pull facts out of a message. Every one is RE2 (linear time)
// and anchored on a fixed phrase of the runtime that emits it.
var (
	// The image, most specific phrase first.
	reImage = []*regexp.Regexp{
		regexp.MustCompile(`(?i)failed to pull and unpack image "([^"\s]{1,512})"`),
		regexp.MustCompile(`(?i)failed to pull image "([^"\s]{1,512})"`),
		regexp.MustCompile(`(?i)back-off pulling image "([^"\s]{1,512})"`),
		regexp.MustCompile(`(?i)container image "([^"\s]{1,512})" is not present`),
		regexp.MustCompile(`(?i)failed to apply default image tag "([^"\s]{1,512})"`),
		regexp.MustCompile(`(?i)failed to inspect image "([^"\s]{1,512})"`),
		regexp.MustCompile(`(?i)failed to resolve (?:reference|image) "([^"\s]{1,512})"`),
		regexp.MustCompile(`(?i)initializing source docker://([^\s:"]{1,256}(?::[^\s:"@]{1,128})?(?:@sha256:[0-9a-f]{64})?)`),
		regexp.MustCompile(`(?i)pullimage "([^"\s]{1,512})"`),
		regexp.MustCompile(`(?i)cancel pulling image ([^"\s]{1,512}) because`),
		regexp.MustCompile(`(?i)pulling image "([^"\s]{1,512})"`),
		regexp.MustCompile(`(?i)successfully pulled image "([^"\s]{1,512})"`),
		regexp.MustCompile(`(?i)image "([^"\s]{1,512})" already present`),
		regexp.MustCompile(`(?i)pull access denied for ([^\s,"]{1,512})`),
		regexp.MustCompile(`(?i)(?:error )?reading manifest ([^\s]{1,128}) in ([^\s:]{1,512})`),
	}
	// A request with its method and URL: Go's url.Error prints
	// `Get "https://..."` (Go >= 1.14) or `Get https://...` (older).
	reRequest = regexp.MustCompile(`\b(Head|Get|Post|Put|HEAD|GET|POST|PUT) "?(https?://[^\s"]+)"?:?`)
	// containerd >= 1.7: `unexpected status from GET request to URL: 403 Forbidden`.
	reStatusFrom = regexp.MustCompile(`(?i)unexpected status from (HEAD|GET|POST|PUT) request to (https?://[^\s"]+?):? `)
	// containerd 1.6: `unexpected status code URL: 429 Too Many Requests`.
	reStatusCode = regexp.MustCompile(`(?i)unexpected status code (https?://[^\s"]+?): `)
	// containerd: `pulling from host HOST failed with status code [manifests TAG]: 401 Unauthorized`.
	rePullingFromHost = regexp.MustCompile(`(?i)pulling from host ([^\s]{1,255}) failed with status code \[(\w+) [^\]]{0,256}\]`)
	// CRI-O / podman: `pinging container registry HOST:` and older `pinging docker registry HOST:`.
	rePinging = regexp.MustCompile(`(?i)(?:error )?pinging (?:container|docker) registry ([^\s:]{1,255}(?::\d{1,5})?)`)
	// Go's dialer: `dial tcp 10.0.0.1:443: ...`, `dial tcp [fd00::1]:443: ...`.
	reDial = regexp.MustCompile(`dial tcp ((?:\[[0-9a-fA-F:.%\w]{2,64}\]|[0-9.]{7,15}):\d{1,5})`)
	// Go's resolver: `lookup HOST on NS:53: no such host`, `lookup HOST: no such host`.
	reLookup = regexp.MustCompile(`lookup ([^\s:]{1,255})(?: on ((?:\[[0-9a-fA-F:.%\w]{2,64}\]|[0-9.]{7,15}):\d{1,5}))?:`)
	// Docker Hub rate-limit pages, S3/Azure XML error codes.
	reXMLCode = regexp.MustCompile(`<Code>(\w{1,64})</Code>`)
)

// extractImageRE returns the image named in msg, or "": the regexps in
// turn. extractImage (fast.go) reads the same by hand on ASCII text.
func extractImageRE(msg string) string {
	for i, re := range reImage {
		m := re.FindStringSubmatch(msg)
		if m == nil {
			continue
		}
		if i == len(reImage)-1 { // reading manifest TAG in REPO
			return strings.TrimSuffix(m[2], ":") + ":" + m[1]
		}
		return strings.TrimSuffix(m[1], ":")
	}
	return ""
}

// registryOf is the registry host of an image reference, as the runtime
// normalizes it (nginx -> docker.io). "" when the reference does not parse.
func registryOf(image string) string {
	if image == "" {
		return ""
	}
	return imageRegistries.get(image, parseRegistry)
}

func parseRegistry(image string) string {
	named, err := reference.ParseNormalizedNamed(image)
	if err != nil {
		// Fall back to the first path element when it looks like a host.
		if i := strings.IndexByte(image, '/'); i > 0 {
			h := image[:i]
			if strings.ContainsAny(h, ".:") || h == "localhost" {
				return strings.ToLower(h)
			}
		}
		return ""
	}
	return reference.Domain(named)
}

// request is the innermost failing request found in a message.
type request struct {
	Method string
	URL    *url.URL
	Host   string // host[:port] as in the URL, or as named by the runtime
	Path   string // "manifests" | "blobs" | "token" | "ping" | "" when unknown
}

// extractRequest finds the innermost (last) request of a message. Each
// pattern runs only when its fixed phrase occurs; reRequest is read by
// findRequests.
func extractRequest(v textView) request {
	msg := v.msg
	var r request
	pick := func(method, raw string) {
		raw = strings.TrimRight(raw, ":.,;)")
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			return
		}
		r.Method = strings.ToUpper(method)
		r.URL = u
		r.Host = strings.ToLower(u.Host)
	}
	// Later phrases wrap earlier causes in Go's error chains, but the URL of
	// the innermost request is the last one printed.
	last := -1
	for _, m := range findRequests(msg, 16) {
		if m[0] > last {
			last = m[0]
			pick(msg[m[2]:m[3]], msg[m[4]:m[5]])
		}
	}
	if m := statusFrom(v); len(m) > 0 {
		x := m[len(m)-1]
		if x[0] > last {
			last = x[0]
			pick(msg[x[2]:x[3]], msg[x[4]:x[5]])
		}
	}
	if m := statusCode(v); len(m) > 0 {
		x := m[len(m)-1]
		if x[0] > last {
			last = x[0]
			pick("GET", msg[x[2]:x[3]])
		}
	}
	if r.URL != nil {
		r.Path = pathKind(r.URL)
		return r
	}
	if m := contentAt(v); m != nil {
		// containerd's fetcher (core/remotes/docker/resolver.go
		// withErrorCheck) says a 404 as "content at URL not found"; 1.4
		// printed only the request's path ("content at v2/REPO/manifests/
		// DIGEST?ns=docker.io not found"), which still says the step.
		raw := m[1]
		if u, err := url.Parse(raw); err == nil && u.Host != "" {
			r.Method, r.URL, r.Host = "GET", u, strings.ToLower(u.Host)
			r.Path = pathKind(u)
			return r
		}
		if u, err := url.Parse("/" + strings.TrimPrefix(raw, "/")); err == nil {
			r.Path = pathKind(u)
		}
		return r
	}
	if m := pullingFromHost(v); m != nil {
		r.Host = strings.ToLower(m[1])
		r.Method = "HEAD"
		switch strings.ToLower(m[2]) {
		case "manifests":
			r.Path = "manifests"
		case "blobs":
			r.Path = "blobs"
		}
		return r
	}
	if m := pinging(v); m != nil {
		r.Host = strings.ToLower(m[1])
		r.Method = "GET"
		r.Path = "ping"
	}
	return r
}

func statusFrom(v textView) [][]int {
	if !v.may("unexpected status from ") {
		return nil
	}
	return reStatusFrom.FindAllStringSubmatchIndex(v.msg, 16)
}

func statusCode(v textView) [][]int {
	if !v.may("unexpected status code ") {
		return nil
	}
	return reStatusCode.FindAllStringSubmatchIndex(v.msg, 16)
}

// reContentAt is containerd's "content at %v not found".
var reContentAt = regexp.MustCompile(`(?i)content at (\S{1,1000}) not found`)

func contentAt(v textView) []string {
	if !v.may("content at ") {
		return nil
	}
	return reContentAt.FindStringSubmatch(v.msg)
}

func pullingFromHost(v textView) []string {
	if !v.may("pulling from host ") {
		return nil
	}
	return rePullingFromHost.FindStringSubmatch(v.msg)
}

func pinging(v textView) []string {
	if !v.may("pinging container registry ", "pinging docker registry ") {
		return nil
	}
	return rePinging.FindStringSubmatch(v.msg)
}

// pathKind names what a registry URL asks for.
func pathKind(u *url.URL) string {
	p := strings.ToLower(u.Path)
	switch {
	case strings.Contains(p, "/manifests/"):
		return "manifests"
	case strings.Contains(p, "/blobs/"), strings.Contains(p, "/docker/registry/v2/blobs/"):
		return "blobs"
	case p == "/v2" || p == "/v2/" || strings.HasSuffix(p, "/v1/_ping"):
		return "ping"
	case strings.Contains(p, "token"), strings.Contains(p, "/oauth2/"), strings.Contains(p, "/auth"):
		return "token"
	}
	return ""
}

// extractDial returns the address of a failed TCP dial, or "".
func extractDial(msg string) string {
	// Every match starts with the phrase: the regexp reads from its first
	// occurrence on (it has no anchor or word boundary to look behind).
	i := strings.Index(msg, "dial tcp ")
	if i < 0 {
		return ""
	}
	m := reDial.FindAllStringSubmatch(msg[i:], 16)
	if len(m) == 0 {
		return ""
	}
	return m[len(m)-1][1]
}

// extractLookup returns the host a DNS lookup was for and the nameserver
// asked, or "".
func extractLookup(msg string) (host, nameserver string) {
	i := strings.Index(msg, "lookup ")
	if i < 0 {
		return "", ""
	}
	m := reLookup.FindAllStringSubmatch(msg[i:], 16)
	if len(m) == 0 {
		return "", ""
	}
	x := m[len(m)-1]
	return strings.ToLower(strings.TrimSuffix(x[1], ".")), x[2]
}

// sameHost compares two host[:port] values, treating docker.io as its API
// host registry-1.docker.io; ports are compared only when both are given.
func sameHost(a, b string) bool {
	split := func(h string) (string, string) {
		h = strings.ToLower(h)
		host, port, err := net.SplitHostPort(h)
		if err != nil {
			host, port = h, ""
		}
		if host == "docker.io" || host == "index.docker.io" {
			host = "registry-1.docker.io"
		}
		return host, port
	}
	ha, pa := split(a)
	hb, pb := split(b)
	return ha == hb && (pa == "" || pb == "" || pa == pb)
}
