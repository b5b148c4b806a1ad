package pull

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/opencontainers/go-digest"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/units"
	"github.com/pullpath/pullpath/internal/verdict"
)

const (
	mtOCIIndex       = "application/vnd.oci.image.index.v1+json"
	mtOCIManifest    = "application/vnd.oci.image.manifest.v1+json"
	mtDockerList     = "application/vnd.docker.distribution.manifest.list.v2+json"
	mtDockerManifest = "application/vnd.docker.distribution.manifest.v2+json"

	mtDockerSchema1       = "application/vnd.docker.distribution.manifest.v1+json"
	mtDockerSchema1Signed = "application/vnd.docker.distribution.manifest.v1+prettyjws"
)

// acceptManifests is the Accept of containerd's resolve, in its order
// (core/remotes/docker/resolver.go); an index entry is fetched with its
// own media type, then */* (core/remotes/docker/fetcher.go createGetReq).
var acceptManifests = strings.Join([]string{mtDockerManifest, mtDockerList, mtOCIManifest, mtOCIIndex, "*/*"}, ", ")

func acceptEntry(mt string) string {
	if mt == "" {
		return "*/*"
	}
	return mt + ", */*"
}

// Descriptor is a content descriptor of a manifest.
type Descriptor struct {
	MediaType string         `json:"mediaType"`
	Digest    digest.Digest  `json:"digest"`
	Size      int64          `json:"size"`
	URLs      []string       `json:"urls,omitempty"`
	Platform  *descPlatform  `json:"platform,omitempty"`
	Annot     map[string]any `json:"annotations,omitempty"`
}

type descPlatform struct {
	OS           string `json:"os"`
	Architecture string `json:"architecture"`
	Variant      string `json:"variant,omitempty"`
}

// manifestDoc holds both an image manifest and an index, and the fields
// containerd's media-type check reads (core/images/image.go
// unknownDocument).
type manifestDoc struct {
	SchemaVersion int             `json:"schemaVersion"`
	MediaType     string          `json:"mediaType"`
	Config        *Descriptor     `json:"config"`
	Layers        []Descriptor    `json:"layers"`
	Manifests     []Descriptor    `json:"manifests"`
	FSLayers      json.RawMessage `json:"fsLayers"`
}

// maxIndexDepth bounds a chain of indexes inside indexes. containerd walks
// nested indexes without a bound of its own (core/images/handlers.go,
// LimitManifests over each index); every level is content-addressed, so a
// chain cannot loop, but a hostile registry can make it endless.
const maxIndexDepth = 8

// isManifestType and isIndexType are containerd's IsManifestType and
// IsIndexType (core/images/mediatypes.go): the only media types a pull
// walks. Anything else is not pulled.
func isManifestType(mt string) bool { return mt == mtOCIManifest || mt == mtDockerManifest }
func isIndexType(mt string) bool    { return mt == mtOCIIndex || mt == mtDockerList }

// manifest is step 7: the manifest, and for an index the node's platform,
// through nested indexes as containerd walks them.
func (s *session) manifest(ctx context.Context) (*manifestDoc, *Error) {
	return s.manifestAt(ctx, s.w.ref.Reference(), s.w.ref.Digest, acceptManifests)
}

// manifestAt is manifest for the root at reference (a tag or digest; want
// is the digest the bytes must hash to, "" for a tag) with the given
// Accept: a host of a chain is asked for the digest another host resolved,
// with that media type, as containerd's fetcher asks.
func (s *session) manifestAt(ctx context.Context, reference, want, accept string) (*manifestDoc, *Error) {
	start := time.Now()
	// The root's media type is the Content-Type of the answer, as
	// containerd's resolver takes it (core/remotes/docker/resolver.go,
	// getManifestMediaType); an index entry's is its descriptor's.
	b, mt, f := s.fetchManifest(ctx, reference, want, accept)
	if f != nil {
		return nil, s.w.failed(stepManifest, start, f)
	}
	return s.manifestFrom(ctx, start, b, mt)
}

// manifestFrom is manifestAt once the root's bytes b (media type mt) are
// in: an image manifest is checked, an index selects the node's platform
// and its entry is fetched, through nested indexes.
func (s *session) manifestFrom(ctx context.Context, start time.Time, b []byte, mt string) (*manifestDoc, *Error) {
	ref := s.w.ref
	host := s.reg.rep.Host
	failed := func(f *Error) (*manifestDoc, *Error) { return nil, s.w.failed(stepManifest, start, f) }
	reg := s.registry()
	what := "the manifest of " + ref.String()
	for depth := 0; ; depth++ {
		m, f := s.decodeManifest(b, mt, what)
		if f != nil {
			return failed(f)
		}
		if isManifestType(mt) {
			if f := s.checkManifest(m, mt, what); f != nil {
				return failed(f)
			}
			var total int64
			for _, l := range m.Layers {
				total += l.Size
			}
			s.w.step(stepManifest, host, report.StepPass, "", fmt.Sprintf("%s: %d layers, %s", shortMT(mt), len(m.Layers), units.Bytes(total)), since(start), 0)
			return m, nil
		}
		if depth+1 > maxIndexDepth {
			return failed(reg.fail(verdict.ManifestInvalid, nil, "%s is an index nested %d deep, the probe's limit for indexes inside indexes", what, maxIndexDepth))
		}
		pick, avail := s.selectPlatform(m)
		if pick == nil {
			return failed(reg.fail(verdict.PlatformNotFound, nil, "the image index of %s has no manifest for %s; it has: %s", ref.String(), s.w.platform, strings.Join(avail, ", ")))
		}
		s.w.step(stepIndex, host, report.StepPass, "", fmt.Sprintf("%s selected from %d platforms (%s)", s.w.platform, len(avail), pick.Digest), since(start), 0)
		start = time.Now()
		mt, what = pick.MediaType, "the index entry "+pick.Digest.String()
		b, _, f = s.fetchManifest(ctx, pick.Digest.String(), pick.Digest.String(), acceptEntry(pick.MediaType))
		if f != nil {
			return failed(f)
		}
	}
}

// selectPlatform picks the index entry containerd pulls
// (core/images/handlers.go FilterPlatforms then LimitManifests with a
// limit of 1): entries for the node's platform first, in index order,
// then entries without a platform (a nested index usually has none).
func (s *session) selectPlatform(m *manifestDoc) (*Descriptor, []string) {
	var avail []string
	var match, noPlatform *Descriptor
	for i := range m.Manifests {
		d := &m.Manifests[i]
		if d.Platform == nil {
			if noPlatform == nil {
				noPlatform = d
			}
			continue
		}
		avail = append(avail, (Platform{d.Platform.OS, d.Platform.Architecture, d.Platform.Variant}).String())
		if match == nil && s.w.platform.matches(d.Platform.OS, d.Platform.Architecture, d.Platform.Variant) {
			match = d
		}
	}
	if match != nil {
		return match, avail
	}
	if noPlatform != nil && noPlatform.Digest.Validate() == nil {
		return noPlatform, append(avail, "an entry without a platform")
	}
	return nil, avail
}

// decodeManifest applies containerd's checks to the bytes of a manifest
// of media type mt: a known type (core/images/mediatypes.go), the body
// agreeing with it (core/images/image.go validateMediaType), JSON.
func (s *session) decodeManifest(b []byte, mt, what string) (*manifestDoc, *Error) {
	invalid := func(format string, args ...any) (*manifestDoc, *Error) {
		return nil, s.registry().fail(verdict.ManifestInvalid, nil, format, args...)
	}
	var m manifestDoc
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, s.registry().fail(verdict.ManifestInvalid, err, "%s is not valid JSON: %v", what, err)
	}
	switch {
	case mt == "text/plain" || mt == mtDockerSchema1 || mt == mtDockerSchema1Signed || len(m.FSLayers) > 0 && string(m.FSLayers) != "null":
		return invalid("%s is a Docker schema 1 manifest (media type %q), which containerd no longer pulls since 2.0", what, mt)
	case !isManifestType(mt) && !isIndexType(mt):
		return invalid("%s has media type %q, which containerd does not pull (it walks only %s, %s, %s and %s)", what, mt, mtOCIManifest, mtDockerManifest, mtOCIIndex, mtDockerList)
	case isManifestType(mt) && (len(m.Manifests) != 0 || isIndexType(m.MediaType)):
		return invalid("%s is announced as %s but its body is an index: containerd fails it (\"media-type: expected manifest but found index\"), as behind a mirror or proxy that rewrites headers", what, mt)
	case isIndexType(mt) && (m.Config != nil || len(m.Layers) != 0 || isManifestType(m.MediaType)):
		return invalid("%s is announced as %s but its body is an image manifest: containerd fails it (\"media-type: expected index but found manifest\"), as behind a mirror or proxy that rewrites headers", what, mt)
	}
	return &m, nil
}

// checkManifest checks the descriptors of an image manifest.
func (s *session) checkManifest(m *manifestDoc, mt, what string) *Error {
	if m.Config == nil || m.Config.Digest.Validate() != nil {
		return s.registry().fail(verdict.ManifestInvalid, nil, "%s has no valid config descriptor (media type %q)", what, mt)
	}
	for _, l := range m.Layers {
		if l.Digest.Validate() != nil || l.Size < 0 {
			return s.registry().fail(verdict.ManifestInvalid, nil, "%s has an invalid layer descriptor %q", what, l.Digest)
		}
	}
	return nil
}

// fetchManifest GETs one manifest and checks its size and, when the digest
// is known, its bytes. It returns the body and the media type of the
// Content-Type header.
func (s *session) fetchManifest(ctx context.Context, reference, want, accept string) ([]byte, string, *Error) {
	reg := s.registry()
	repo := s.w.ref.Repository
	u := s.url("/" + repo + "/manifests/" + reference)
	resp, _, f := s.get(ctx, u, http.Header{"Accept": {accept}}, verdict.StageRegistry, "GET manifest", "the manifest "+reference)
	if f != nil {
		return nil, "", f
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, "", s.manifestStatus(resp)
	}
	if resp.ContentLength > maxManifestSize {
		return nil, "", reg.fail(verdict.ManifestTooLarge, nil, "the manifest of %s is %d bytes, over containerd's %d-byte limit", s.w.ref.String(), resp.ContentLength, maxManifestSize)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxManifestSize+1))
	if err != nil {
		return nil, "", reg.requestFailure(err, "reading the manifest")
	}
	if len(b) > maxManifestSize {
		return nil, "", reg.fail(verdict.ManifestTooLarge, nil, "the manifest of %s is over containerd's %d-byte limit", s.w.ref.String(), maxManifestSize)
	}
	expected := want
	if expected == "" {
		expected = resp.Header.Get("Docker-Content-Digest")
	}
	if expected != "" {
		if d, err := digest.Parse(expected); err == nil && d.Algorithm().Available() {
			if got := d.Algorithm().FromBytes(b); got != d {
				return nil, "", reg.fail(verdict.BlobDigestMismatch, nil, "the manifest bytes of %s hash to %s, not %s", s.w.ref.String(), got, d)
			}
		}
	}
	mt, _, _ := strings.Cut(resp.Header.Get("Content-Type"), ";")
	return b, strings.TrimSpace(mt), nil
}

// manifestStatus maps a non-200 manifest answer to its finding.
func (s *session) manifestStatus(resp *http.Response) *Error {
	reg := s.registry()
	host := reg.host
	ref := s.w.ref.String()
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		es, text := readErrorBody(resp.Body)
		c, _ := Find(ParseAuthHeader(resp.Header), "bearer")
		msg := firstMessage(es, text)
		switch {
		case s.auth == "":
			return reg.fail(verdict.RegistryUnauthorized, nil, "%s answered 401 for %s and the node has no credentials for it (%s)", host, ref, s.w.creds.String())
		case s.grantedEmpty || c.Params["error"] == "insufficient_scope":
			if code, scope := identityDecision(s.w.creds, refusedInsufficient); scope {
				return reg.fail(code, nil, "scope: %s (%s answered 401 insufficient_scope for %s after the token service accepted %s)", scopeSentence(s.w.ref.Repository), host, ref, s.w.creds.String())
			}
			return reg.fail(verdict.AuthAmbiguous, nil, "%s answered 401 insufficient_scope for %s with %s: the repository does not exist, or it needs credentials the node did not send (the registry will not say which)", host, ref, s.w.creds.String())
		}
		return reg.fail(verdict.RegistryUnauthorized, nil, "%s refused %s for %s (401): %s", host, s.w.creds.String(), ref, msg)
	case http.StatusForbidden:
		es, text := readErrorBody(resp.Body)
		code, scope := identityDecision(s.w.creds, refusedRegistryDenied)
		if scope {
			return reg.fail(code, nil, "scope: %s (%s refused %s for %s, 403: %s)", scopeSentence(s.w.ref.Repository), host, s.w.creds.String(), ref, firstMessage(es, text))
		}
		return reg.fail(code, nil, "%s refused an anonymous pull of %s (403): the registry wants credentials the node did not send: %s", host, ref, firstMessage(es, text))
	case http.StatusNotFound:
		es, text := readErrorBody(resp.Body)
		if hasCode(es, "NAME_UNKNOWN") {
			return reg.fail(verdict.RepositoryNotFound, nil, "%s has no repository %s: %s", host, s.w.ref.Repository, firstMessage(es, text))
		}
		return reg.fail(verdict.ManifestNotFound, nil, "%s has no manifest %s in %s: %s", host, s.w.ref.Reference(), s.w.ref.Repository, firstMessage(es, text))
	}
	return reg.statusFailure(resp, "GET manifest")
}

func shortMT(mt string) string {
	switch mt {
	case mtOCIManifest:
		return "OCI manifest"
	case mtDockerManifest:
		return "Docker v2 manifest"
	}
	return mt
}
