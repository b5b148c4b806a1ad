package explain

import (
	"fmt"
	"strings"

	"github.com/distribution/reference"
	"github.com/pullpath/pullpath/internal/redact"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Multi-attempt messages.
//
// The kubelet pulls once per credential it holds for the image (the Pod's
// imagePullSecrets, then the node's docker config and credential provider
// plugins: pkg/kubelet/kuberuntime/kuberuntime_image.go PullImage) and
// joins the failures with k8s.io/apimachinery's errors.NewAggregate, whose
// Error() is the single message when every attempt said the same thing,
// else "[" + the distinct messages joined by ", " + "]". The event is
// `Failed to pull image "X": [a, b]`, the container's waiting message the
// bare `[a, b]`. Each attempt is one CRI PullImage call: an older kubelet
// prints it as `rpc error: code = C desc = D`, kubelet >= 1.27 as D alone
// (cri-client remote_image.go returns the gRPC status message).
//
// CRI-O (containers/image docker_image_src.go newImageSource) tries the
// registries.conf mirrors before the primary and says
// `(Mirrors also failed: [REF: err]\n[REF: err]): PRIMARY: err`.
//
// Attempts are classified one by one; the verdict is the attempt that got
// furthest (a blob beats a manifest answer, a manifest answer beats a
// refused scope, which beats rejected credentials, which beat an anonymous
// refusal), preferring an attempt with credentials over an anonymous one.

// Attempt is one pull attempt of a multi-attempt message, as evidence.
type Attempt struct {
	N           int               `json:"n"`                     // 1-based, in the runtime's order
	Credentials string            `json:"credentials,omitempty"` // "sent" | "anonymous" | "" (unknown)
	Source      string            `json:"source,omitempty"`      // the mirror or registry reference, when the runtime names it
	Code        verdict.Code      `json:"code,omitempty"`
	Cause       verdict.Cause     `json:"cause,omitempty"`
	Stage       verdict.Stage     `json:"stage,omitempty"`
	Condition   verdict.Condition `json:"condition,omitempty"`
	Host        string            `json:"host,omitempty"`
	Rule        string            `json:"rule,omitempty"`
	Summary     string            `json:"summary,omitempty"`
	Chosen      bool              `json:"chosen,omitempty"`
}

// Credential states of an attempt.
const (
	credUnknown   = ""
	credSent      = "sent"
	credAnonymous = "anonymous"
)

// attemptStarts are the phrases a CRI PullImage error begins with (any
// runtime, any kubelet): an aggregate item is split off only where one of
// them follows ", ".
var attemptStarts = []string{
	"rpc error: code = ",
	"failed to pull and unpack image ",
	"failed to pull image ",
	"failed to resolve reference ",
	"failed to resolve image",
	"initializing source ",
	"reading manifest ",
	"error reading manifest ",
	"pinging container registry ",
	"error pinging docker registry ",
	"unable to retrieve auth token",
	"error response from daemon",
	"copying system image",
	"writing blob",
	"reading blob",
	"choosing an image from manifest list",
	"(mirrors also failed",
	"image pull failed for ",
	"pull access denied",
	"failed to copy",
	"failed commit on ref",
	"failed to authorize",
}

func startsAttempt(lower string) bool {
	for _, p := range attemptStarts {
		if strings.HasPrefix(lower, p) {
			return true
		}
	}
	return false
}

// splitAggregate finds the kubelet's aggregate in a normalized message and
// returns the text before it (the kubelet's `Failed to pull image "X": `)
// and its items; items has fewer than two entries when msg is one attempt.
func splitAggregate(msg, _ string) (head string, items []string) {
	lower := asciiLower(msg) // the same byte offsets as msg
	open := -1
	for from := 0; from < len(lower); {
		i := strings.IndexByte(lower[from:], '[')
		if i < 0 {
			break
		}
		i += from
		// The aggregate is printed with %v right after a ": " (or is the
		// whole message); a bracket inside a runtime message (containerd
		// 1.6 "status code [manifests T]", CRI-O mirrors) is not.
		if (i == 0 || strings.HasSuffix(lower[:i], ": ")) && startsAttempt(lower[i+1:]) {
			open = i
			break
		}
		from = i + 1
	}
	if open < 0 {
		return "", nil
	}
	depth, start := 0, open+1
	for i := open; i < len(msg); i++ {
		switch msg[i] {
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				items = append(items, strings.TrimSpace(msg[start:i]))
				return msg[:open], items
			}
		case ',':
			if depth == 1 && i+2 <= len(msg) && strings.HasPrefix(msg[i:], ", ") && startsAttempt(lower[i+2:]) {
				items = append(items, strings.TrimSpace(msg[start:i]))
				start = i + 2
			}
		}
	}
	// No closing bracket: a message cut short (events are capped at 1 KiB).
	items = append(items, strings.TrimSpace(msg[start:]))
	return msg[:open], items
}

// splitMirrors reads CRI-O's `(Mirrors also failed: [REF: err] [REF: err]):
// PRIMARY: err`. It returns the attempts (mirrors first, then the primary)
// with the reference each names, or nil.
func splitMirrors(msg, _ string) (head string, items, sources []string) {
	lower := asciiLower(msg)
	const lit = "(mirrors also failed: "
	at := strings.Index(lower, lit)
	if at < 0 {
		return "", nil, nil
	}
	i := at + len(lit)
	for i < len(msg) && msg[i] == '[' {
		depth, j := 0, i
		for ; j < len(msg); j++ {
			if msg[j] == '[' {
				depth++
			} else if msg[j] == ']' {
				depth--
				if depth == 0 {
					break
				}
			}
		}
		if j >= len(msg) {
			return "", nil, nil
		}
		src, text := splitRefPrefix(msg[i+1 : j])
		items, sources = append(items, text), append(sources, src)
		i = j + 1
		for i < len(msg) && msg[i] == ' ' {
			i++
		}
	}
	if len(items) == 0 {
		return "", nil, nil
	}
	if !strings.HasPrefix(msg[i:], "): ") {
		// A message cut after the mirrors (the primary's error dropped, as
		// a log line's or a thread's excerpt can be): the mirrors' errors
		// are all there is.
		if rest := strings.TrimSpace(msg[i:]); rest == ")" || rest == `)"` {
			return msg[:at], items, sources
		}
		return "", nil, nil
	}
	src, text := splitRefPrefix(msg[i+3:])
	items, sources = append(items, text), append(sources, src)
	return msg[:at], items, sources
}

// splitRefPrefix splits "REF: err" at the first ": " after a reference
// (a reference has no spaces).
func splitRefPrefix(s string) (ref, rest string) {
	i := strings.Index(s, ": ")
	if i <= 0 || strings.ContainsAny(s[:i], " \"") {
		return "", s
	}
	return s[:i], s[i+2:]
}

// credentialsOf reads whether an attempt presented credentials. Every
// attempt of a kubelet aggregate did (the kubelet aggregates only when it
// holds credentials), unless the runtime says it went anonymous: containerd
// drops credentials whose server address is another host (a mirror) and
// then fetches an anonymous token.
func credentialsOf(lower string, aggregate bool) string {
	switch {
	case strings.Contains(lower, "fetch anonymous token"), strings.Contains(lower, "no basic auth credentials"):
		return credAnonymous
	case strings.Contains(lower, "fetch oauth token"), strings.Contains(lower, "invalid username/password"),
		strings.Contains(lower, "incorrect username or password"):
		return credSent
	case aggregate:
		return credSent
	}
	return credUnknown
}

// progress ranks how far an attempt got: the verdict is the attempt that
// got furthest.
func progress(c Classification, cred string) int {
	switch {
	case !c.Failed() || c.Code == verdict.Other:
		return 0
	case c.Stage == verdict.StageBlob:
		return 60 // the manifest was read: a config or layer failed
	case c.Cause == verdict.CauseNotFound, c.Cause == verdict.CausePlatform,
		c.Code == verdict.ManifestInvalid, c.Code == verdict.ManifestTooLarge:
		return 50 // the registry answered about the image itself
	case c.Cause == verdict.CauseForbidden:
		return 40 // authenticated, but refused for this repository
	case c.Cause == verdict.CauseRateLimit, c.Code == verdict.RegistryServerError, c.Code == verdict.HTTPBadResponse:
		return 30
	case c.Cause == verdict.CauseUnauthorized && cred != credAnonymous && c.Stage != verdict.StageAuth:
		return 22 // past the token service, refused by the registry
	case c.Cause == verdict.CauseUnauthorized && cred != credAnonymous:
		return 20 // credentials rejected by the token service
	case c.Cause == verdict.CauseUnauthorized:
		return 10 // the anonymous fallback refused
	}
	return 15 // a network or TLS failure before the registry answered
}

// classifyAttempts classifies each attempt and returns the one that matters,
// the others kept as evidence.
func classifyAttempts(head string, items, sources []string, aggregate bool) Classification {
	type one struct {
		c    Classification
		cred string
	}
	all := make([]one, 0, len(items))
	for _, it := range items {
		text := head + it
		lower := strings.ToLower(text)
		cred := credentialsOf(lower, aggregate)
		all = append(all, one{classifyOne(text, cred), cred})
	}
	best := -1
	for i, a := range all {
		if best < 0 {
			best = i
			continue
		}
		pb, pa := progress(all[best].c, all[best].cred), progress(a.c, a.cred)
		if pa > pb || pa == pb && all[best].cred == credAnonymous && a.cred == credSent {
			best = i
		}
	}
	c := all[best].c
	if c.Rule == "" {
		return c
	}
	c.Attempts = make([]Attempt, len(all))
	var others []string
	for i, a := range all {
		at := Attempt{
			N: i + 1, Credentials: a.cred, Code: a.c.Code, Cause: a.c.Cause, Stage: a.c.Stage,
			Condition: a.c.Condition, Host: a.c.Host, Rule: a.c.Rule, Summary: a.c.Summary, Chosen: i == best,
		}
		if i < len(sources) {
			at.Source = sources[i]
		}
		c.Attempts[i] = at
		if i != best {
			others = append(others, fmt.Sprintf("attempt %d%s: %s", i+1, credPhrase(a.cred), codeOr(a.c)))
		}
	}
	what := "the kubelet tried %d credentials"
	if !aggregate {
		what = "the runtime tried %d registries (mirrors, then the primary)"
	}
	c.Summary = redact.String(fmt.Sprintf("%s (attempt %d of %d%s, the one that got furthest; %s)",
		c.Summary, best+1, len(all), credPhrase(all[best].cred), fmt.Sprintf(what, len(all))))
	c.Advice = append(c.Advice, "The other attempts, as evidence: "+strings.Join(others, "; ")+".")
	return c
}

func credPhrase(cred string) string {
	switch cred {
	case credSent:
		return ", with credentials"
	case credAnonymous:
		return ", anonymous"
	}
	return ""
}

func codeOr(c Classification) string {
	if c.Code == "" {
		return "not recognized"
	}
	return string(c.Code)
}

// scopeSentence is what a refused scope after accepted credentials means.
func scopeSentence(image string) string {
	repo := "the repository"
	if named, err := reference.ParseNormalizedNamed(image); err == nil {
		repo = reference.Path(named)
	}
	return fmt.Sprintf("this identity is valid but may not pull %s; or %s does not exist and the registry will not say so to this identity", repo, repo)
}

// applyScope is the scope rule: a refusal after credentials the token
// service accepted is the identity's scope (cause forbidden), not missing
// credentials; only an anonymous or rejected identity is unauthorized.
func applyScope(c *Classification, cred string) {
	if cred != credSent || c.Step == StepToken && c.Code != verdict.AuthForbidden {
		return
	}
	switch c.Code {
	case verdict.AuthAmbiguous:
		// insufficient_scope / "requested access to the resource is
		// denied" after credentials were presented and not rejected.
		c.Code = verdict.AuthForbidden
		c.Ambiguous = false
	case verdict.AuthForbidden, verdict.RegistryForbidden:
	default:
		return
	}
	info, _ := verdict.Lookup(c.Code)
	c.Cause, c.Condition = info.Cause, info.Condition
	c.Summary = redact.String(fmt.Sprintf("scope: %s (the registry refused the pull after accepting the credentials)", scopeSentence(c.Image)))
	c.Advice = append(verdict.Advise(c.Code, c.Host, c.Role),
		"Grant this identity read on the repository (ACR: AcrPull, or Container Registry Repository Reader under ABAC; ECR: ecr:BatchGetImage and ecr:GetDownloadUrlForLayer on the repository policy and the node role), and check the repository path and tag against what was pushed.")
}

// asciiLower lowers ASCII letters only, so that offsets in the result are
// offsets in s (strings.ToLower may change the length of other text).
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
