package runtimecfg

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/distribution/reference"
)

// FindRegistry is sysregistriesv2.FindRegistry: the [[registry]] whose
// prefix matches name (registry/repository, as reference.Named.Name()) and
// is the longest; nil when none matches.
func (c *RegistriesConf) FindRegistry(name string) *RegistryConfEntry {
	var best *RegistryConfEntry
	for _, e := range c.Registries {
		if refMatchingPrefix(name, e.Prefix) != -1 && (best == nil || len(e.Prefix) > len(best.Prefix)) {
			best = e
		}
	}
	return best
}

// refMatchingPrefix is the library's refMatchingPrefix: the length of the
// match, or -1. A prefix matches the whole name, or a part of it that ends
// at ':', '/' or '@' (so "example.com" also matches "example.com:5000",
// which the library documents as unintended and keeps). A "*.example.com"
// prefix matches any subdomain of the registry part, never the bare domain.
func refMatchingPrefix(ref, prefix string) int {
	switch {
	case strings.HasPrefix(prefix, "*."):
		return refMatchingSubdomainPrefix(ref, prefix)
	case len(ref) < len(prefix):
		return -1
	case len(ref) == len(prefix):
		if ref == prefix {
			return len(prefix)
		}
		return -1
	}
	if !strings.HasPrefix(ref, prefix) {
		return -1
	}
	switch ref[len(prefix)] {
	case ':', '/', '@':
		return len(prefix)
	}
	return -1
}

// refMatchingSubdomainPrefix is the library's function of that name.
func refMatchingSubdomainPrefix(ref, prefix string) int {
	index := strings.Index(ref, prefix[1:])
	if index == -1 || strings.Contains(ref[:index], "/") {
		return -1
	}
	index += len(prefix[1:])
	if index == len(ref) {
		return index
	}
	switch ref[index] {
	case ':', '/', '@':
		return index
	}
	return -1
}

// PullSource is one place CRI-O tries for an image, in order.
type PullSource struct {
	// Ref is the reference as asked of this source: the prefix of the
	// [[registry]] replaced by the source's location.
	Ref Ref
	// Mirror: a [[registry.mirror]], not the registry's own location.
	Mirror bool
	// Insecure: TLS verification off and plain HTTP tried after HTTPS
	// fails (the endpoint's insecure = true).
	Insecure bool
	// At is FILE:LINE of the table it comes from ("" when no
	// [[registry]] matched: the reference as written).
	At string
	// Blocked is the entry that blocks this source's own name (the
	// library checks blocked for each source it tries, by the source's
	// name: a mirror of a blocked registry still serves); nil when none.
	Blocked *RegistryConfEntry
}

// SkippedMirror is a mirror containers/image leaves out for this
// reference.
type SkippedMirror struct {
	Location string
	At       string
	// Only is MirrorDigestOnly or MirrorTagOnly: the kind of pull it is
	// used for.
	Only string
	// Setting is the setting that says so, as written:
	// `mirror-by-digest-only = true` or `pull-from-mirror = "digest-only"`.
	Setting string
}

// PullPlan is what containers/image does with one reference.
type PullPlan struct {
	Ref     Ref
	Entry   *RegistryConfEntry // the [[registry]] that matched, nil for none
	Sources []PullSource
	Skipped []SkippedMirror
}

// PullPlan is Registry.PullSourcesFromReference for ref (its tag dropped
// when it also has a digest, as CRI-O does): the mirrors that apply to a
// pull by digest or by tag, in file order, then the registry's location,
// each with the reference rewritten from the prefix to its location. A
// reference no [[registry]] matches is one source, itself.
func (c *RegistriesConf) PullPlan(ref Ref) (PullPlan, error) {
	plan := PullPlan{Ref: ref}
	byDigest := ref.Digest != ""
	e := c.FindRegistry(ref.Name())
	plan.Entry = e
	if e == nil {
		src := PullSource{Ref: ref}
		src.Blocked = c.blockedFor(ref)
		plan.Sources = []PullSource{src}
		return plan, nil
	}
	type endpoint struct {
		loc      string
		insecure bool
		mirror   bool
		at       string
	}
	var eps []endpoint
	for _, m := range e.Mirrors {
		only, setting := "", ""
		switch {
		case e.MirrorByDigestOnly:
			only, setting = MirrorDigestOnly, fmt.Sprintf("mirror-by-digest-only = true (%s)", e.At())
		case m.PullFromMirror == MirrorDigestOnly || m.PullFromMirror == MirrorTagOnly:
			only, setting = m.PullFromMirror, fmt.Sprintf("pull-from-mirror = %q", m.PullFromMirror)
		}
		if (only == MirrorDigestOnly && !byDigest) || (only == MirrorTagOnly && byDigest) {
			plan.Skipped = append(plan.Skipped, SkippedMirror{Location: m.Location, At: m.At(), Only: only, Setting: setting})
			continue
		}
		eps = append(eps, endpoint{loc: m.Location, insecure: m.Insecure, mirror: true, at: m.At()})
	}
	eps = append(eps, endpoint{loc: e.Location, insecure: e.Insecure, at: e.At()})
	for _, ep := range eps {
		r, err := rewriteReference(ref, e.Prefix, ep.loc)
		if err != nil {
			return plan, &ConfigError{File: ep.at, Reason: err.Error()}
		}
		plan.Sources = append(plan.Sources, PullSource{Ref: r, Mirror: ep.mirror, Insecure: ep.insecure, At: ep.at, Blocked: c.blockedFor(r)})
	}
	return plan, nil
}

// blockedFor is newDockerClient's check: the entry for r's own name, when
// it is blocked.
func (c *RegistriesConf) blockedFor(r Ref) *RegistryConfEntry {
	if e := c.FindRegistry(r.Name()); e != nil && e.Blocked {
		return e
	}
	return nil
}

// criString is the reference as CRI-O hands it to containers/image:
// name:tag or name@digest (the tag of a tag-and-digest reference dropped).
func (r Ref) criString() string {
	if r.Digest != "" {
		return r.Name() + "@" + r.Digest
	}
	return r.Name() + ":" + r.Tag
}

// CRIName is the reference as CRI-O hands it to containers/image, tag or
// digest (the tag of a tag-and-digest reference dropped).
func (r Ref) CRIName() string { return r.criString() }

// rewriteReference is Endpoint.rewriteReference: location plus what
// follows the prefix in the reference; an empty location (a wildcard
// prefix) keeps the reference. The result must parse as a canonical name
// (reference.ParseNamed), or the library fails the pull.
func rewriteReference(ref Ref, prefix, location string) (Ref, error) {
	s := ref.criString()
	n := refMatchingPrefix(s, prefix)
	if n == -1 {
		return Ref{}, fmt.Errorf("invalid prefix '%v' for reference '%v'", prefix, s)
	}
	if location == "" {
		if !strings.HasPrefix(prefix, "*.") {
			return Ref{}, fmt.Errorf("invalid prefix '%v' for empty location, should be in the format: *.example.com", prefix)
		}
		return ref, nil
	}
	named, err := reference.ParseNamed(location + s[n:])
	if err != nil {
		return Ref{}, fmt.Errorf("rewriting reference: %s + %s: %s", location, s[n:], referenceReason(err))
	}
	return refFromNamed(ref.Original, named), nil
}

// refFromNamed fills a Ref from a parsed name.
func refFromNamed(original string, named reference.Named) Ref {
	r := Ref{Original: original, Registry: reference.Domain(named), Repository: reference.Path(named)}
	if t, ok := named.(reference.Tagged); ok {
		r.Tag = t.Tag()
	}
	if d, ok := named.(reference.Digested); ok {
		r.Digest = d.Digest().String()
	}
	if r.Tag == "" && r.Digest == "" {
		r.Tag = "latest"
	}
	r.Host = r.Registry
	if r.Registry == DockerHubRegistry {
		r.Host = DockerHubHost
	}
	return r
}

// anchoredDomain is the library's anchoredDomainRegexp: host[:port].
var anchoredDomain = regexp.MustCompile("^" + reference.DomainRegexp.String() + "$")

func isDomain(s string) bool { return anchoredDomain.MatchString(s) }

// Short-name modes.
const (
	ShortNameDisabled   = "disabled"
	ShortNameEnforcing  = "enforcing"
	ShortNamePermissive = "permissive"
)

// ShortNameResolution is what containers/image's shortnames.Resolve makes
// of the image name CRI-O is given (the kubelet passes the Pod's image as
// written, with :latest added when it has no tag or digest).
type ShortNameResolution struct {
	Input string
	// Short: the name has no registry (no '.' or ':' in its first part,
	// and it is not localhost).
	Short bool
	// Candidates are the references CRI-O pulls, in order: the first
	// that succeeds is the image. One for a qualified name or an alias.
	Candidates []Ref
	// Rationale says where the candidates come from.
	Rationale string
}

// ShortNameError is a short name CRI-O cannot resolve: the pull fails
// before any packet. Message is containers/image's or CRI-O's text.
type ShortNameError struct {
	Input   string
	Message string
	Reason  string // what in the configuration leads there
}

func (e *ShortNameError) Error() string { return e.Message + ": " + e.Reason }

// ResolveShortName is shortnames.Resolve as CRI-O calls it
// (CandidatesForPotentiallyShortImageName) with mode, CRI-O's own setting:
// up to CRI-O 1.33 always "disabled" (every candidate, in order); from
// 1.34 crio.conf's short_name_mode, "enforcing" unless it says
// "disabled". registries.conf's short-name-mode is never used by CRI-O
// (the SystemContext's mode wins).
//
//  1. a name with a registry is itself (normalized: docker.io/x is
//     docker.io/library/x);
//  2. an [aliases] entry for the name (without tag or digest) is the one
//     candidate, with the input's tag or digest;
//  3. otherwise each unqualified-search-registries entry + "/" + name, in
//     order; none is an error;
//  4. more than one candidate with mode enforcing is an error (CRI-O has
//     no TTY to prompt on).
func (c *RegistriesConf) ResolveShortName(input, mode string) (ShortNameResolution, error) {
	res := ShortNameResolution{Input: input}
	parsed, err := reference.Parse(input)
	if err != nil {
		return res, &ReferenceError{Input: input, Reason: referenceReason(err)}
	}
	named, ok := parsed.(reference.Named)
	if !ok {
		return res, &ReferenceError{Input: input, Reason: "is not a named reference"}
	}
	if dom := reference.Domain(named); strings.ContainsAny(dom, ".:") || dom == "localhost" {
		r, err := ParseReference(input)
		if err != nil {
			return res, err
		}
		res.Candidates = []Ref{r}
		return res, nil
	}
	res.Short = true
	tag, dg := "", ""
	if t, ok := named.(reference.Tagged); ok {
		tag = t.Tag()
	}
	if d, ok := named.(reference.Digested); ok {
		dg = d.Digest().String()
	}
	suffix := ""
	if tag != "" {
		suffix += ":" + tag
	}
	if dg != "" {
		suffix += "@" + dg
	}
	short := reference.TrimNamed(named).String()
	if a, ok := c.Aliases[short]; ok && a.Value != "" {
		r, err := ParseReference(a.Value + suffix)
		if err != nil {
			return res, &ConfigError{File: a.File, Reason: fmt.Sprintf("[aliases] %q = %q: %v", short, a.Value, err)}
		}
		res.Candidates = []Ref{r}
		res.Rationale = fmt.Sprintf("alias %q = %q (%s)", short, a.Value, a.File)
		return res, nil
	}
	if len(c.UnqualifiedSearch) == 0 {
		msg := fmt.Sprintf("short-name %q did not resolve to an alias and no containers-registries.conf(5) was found", input)
		reason := "no registries.conf was found"
		if c.UnqualifiedSearchFrom != "" {
			msg = fmt.Sprintf("short-name %q did not resolve to an alias and no unqualified-search registries are defined in %q", input, c.UnqualifiedSearchFrom)
			reason = "unqualified-search-registries is empty in " + c.UnqualifiedSearchFrom
		} else if len(c.Files) > 0 {
			reason = "no file sets unqualified-search-registries (" + strings.Join(c.Files, ", ") + ")"
		}
		return res, &ShortNameError{Input: input, Message: msg, Reason: reason}
	}
	for _, reg := range c.UnqualifiedSearch {
		r, err := ParseReference(reg + "/" + input)
		if err != nil {
			return res, &ConfigError{File: c.UnqualifiedSearchFrom, Reason: fmt.Sprintf("creating reference with unqualified-search registry %q: %v", reg, err)}
		}
		res.Candidates = append(res.Candidates, r)
	}
	res.Rationale = fmt.Sprintf("unqualified-search-registries of %s", c.UnqualifiedSearchFrom)
	if mode == ShortNameEnforcing && len(res.Candidates) > 1 {
		return res, &ShortNameError{Input: input,
			Message: fmt.Sprintf("short name mode is enforcing, but image name %s returns ambiguous list", input),
			Reason:  fmt.Sprintf("%s lists %d registries (%s) and no [aliases] entry names %q", c.UnqualifiedSearchFrom, len(c.UnqualifiedSearch), strings.Join(c.UnqualifiedSearch, ", "), short)}
	}
	return res, nil
}

// validateShortName is the library's check of an [aliases] name: a name
// without registry, tag or digest.
func validateShortName(name string) error {
	parsed, err := reference.Parse(name)
	if err != nil {
		return fmt.Errorf("cannot parse short name: %q: %s", name, referenceReason(err))
	}
	if _, ok := parsed.(reference.Digested); ok {
		return fmt.Errorf("invalid short name %q: must not contain digest", name)
	}
	if _, ok := parsed.(reference.Tagged); ok {
		return fmt.Errorf("invalid short name %q: must not contain tag", name)
	}
	named, ok := parsed.(reference.Named)
	if !ok {
		return fmt.Errorf("invalid short name %q: no name", name)
	}
	if d := reference.Domain(named); strings.ContainsAny(d, ".:") || d == "localhost" {
		return fmt.Errorf("invalid short name %q: must not contain registry", name)
	}
	return nil
}

// parseAliasValue is the library's parseShortNameValue: a fully
// qualified name without tag or digest.
func parseAliasValue(alias string) (reference.Named, error) {
	parsed, err := reference.Parse(alias)
	if err != nil {
		return nil, fmt.Errorf("parsing alias %q: %s", alias, referenceReason(err))
	}
	if _, ok := parsed.(reference.Digested); ok {
		return nil, fmt.Errorf("invalid alias %q: must not contain digest", alias)
	}
	if _, ok := parsed.(reference.Tagged); ok {
		return nil, fmt.Errorf("invalid alias %q: must not contain tag", alias)
	}
	named, ok := parsed.(reference.Named)
	if !ok {
		return nil, errors.New("invalid alias: must contain registry and repository")
	}
	if d := reference.Domain(named); !strings.ContainsAny(d, ".:") && d != "localhost" {
		return nil, fmt.Errorf("invalid alias %q: must contain registry and repository", alias)
	}
	return reference.ParseNormalizedNamed(alias)
}
