package pull

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/pullpath/pullpath/internal/units"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/opencontainers/go-digest"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

const (
	mtOCIIndex       = "application/vnd.oci.image.index.v1+json"
	mtOCIManifest    = "application/vnd.oci.image.manifest.v1+json"
	mtDockerList     = "application/vnd.docker.distribution.manifest.list.v2+json"
	mtDockerManifest = "application/vnd.docker.distribution.manifest.v2+json"
)

var acceptManifests = strings.Join([]string{mtOCIIndex, mtOCIManifest, mtDockerList, mtDockerManifest}, ", ")

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

// manifestDoc holds both an image manifest and an index.
type manifestDoc struct {
	SchemaVersion int          `json:"schemaVersion"`
	MediaType     string       `json:"mediaType"`
	Config        *Descriptor  `json:"config"`
	Layers        []Descriptor `json:"layers"`
	Manifests     []Descriptor `json:"manifests"`
}

// manifest is step 7: the manifest, and for an index the node's platform.
func (s *session) manifest(ctx context.Context) (*manifestDoc, *failure) {
	start := time.Now()
	ref := s.w.ref
	m, mt, f := s.fetchManifest(ctx, ref.Reference(), ref.Digest)
	if f != nil {
		s.w.step("manifest", s.reg.rep.Host, report.StepFail, f.code, f.summary, since(start), 0)
		return nil, f
	}
	if isIndex(mt, m) {
		var avail []string
		var pick *Descriptor
		for i := range m.Manifests {
			d := &m.Manifests[i]
			if d.Platform == nil {
				continue
			}
			avail = append(avail, (Platform{d.Platform.OS, d.Platform.Architecture, d.Platform.Variant}).String())
			if pick == nil && s.w.platform.matches(d.Platform.OS, d.Platform.Architecture, d.Platform.Variant) {
				pick = d
			}
		}
		if pick == nil {
			f := fail(verdict.PlatformNotFound, verdict.StageRegistry, s.role, s.reg.rep.Host, "the image index of %s has no manifest for %s; it has: %s", ref.String(), s.w.platform, strings.Join(avail, ", "))
			s.w.step("manifest", s.reg.rep.Host, report.StepFail, f.code, f.summary, since(start), 0)
			return nil, f
		}
		s.w.step("index", s.reg.rep.Host, report.StepPass, "", fmt.Sprintf("%s selected from %d platforms (%s)", s.w.platform, len(avail), pick.Digest), since(start), 0)
		start = time.Now()
		m, mt, f = s.fetchManifest(ctx, pick.Digest.String(), pick.Digest.String())
		if f != nil {
			s.w.step("manifest", s.reg.rep.Host, report.StepFail, f.code, f.summary, since(start), 0)
			return nil, f
		}
		if isIndex(mt, m) {
			f := fail(verdict.ManifestInvalid, verdict.StageRegistry, s.role, s.reg.rep.Host, "the platform entry %s of the index is itself an index", pick.Digest)
			s.w.step("manifest", s.reg.rep.Host, report.StepFail, f.code, f.summary, since(start), 0)
			return nil, f
		}
	}
	if m.Config == nil || m.Config.Digest.Validate() != nil {
		f := fail(verdict.ManifestInvalid, verdict.StageRegistry, s.role, s.reg.rep.Host, "the manifest of %s has no valid config descriptor (media type %q)", ref.String(), mt)
		s.w.step("manifest", s.reg.rep.Host, report.StepFail, f.code, f.summary, since(start), 0)
		return nil, f
	}
	for _, l := range m.Layers {
		if l.Digest.Validate() != nil || l.Size < 0 {
			f := fail(verdict.ManifestInvalid, verdict.StageRegistry, s.role, s.reg.rep.Host, "the manifest of %s has an invalid layer descriptor %q", ref.String(), l.Digest)
			s.w.step("manifest", s.reg.rep.Host, report.StepFail, f.code, f.summary, since(start), 0)
			return nil, f
		}
	}
	var total int64
	for _, l := range m.Layers {
		total += l.Size
	}
	s.w.step("manifest", s.reg.rep.Host, report.StepPass, "", fmt.Sprintf("%s: %d layers, %s", shortMT(mt), len(m.Layers), units.Bytes(total)), since(start), 0)
	return m, nil
}

// fetchManifest GETs one manifest and checks its size and, when the digest
// is known, its bytes.
func (s *session) fetchManifest(ctx context.Context, reference, want string) (*manifestDoc, string, *failure) {
	host := s.reg.rep.Host
	repo := s.w.ref.Repository
	u := s.url("/" + repo + "/manifests/" + reference)
	resp, err := s.do(ctx, s.reg, http.MethodGet, u, http.Header{"Accept": {acceptManifests}})
	if err != nil {
		return nil, "", requestFailure(err, s.reg, "GET manifest")
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, "", s.manifestStatus(resp)
	}
	if resp.ContentLength > maxManifestSize {
		return nil, "", fail(verdict.ManifestTooLarge, verdict.StageRegistry, s.role, host, "the manifest of %s is %d bytes, over the %d-byte limit", s.w.ref.String(), resp.ContentLength, maxManifestSize)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxManifestSize+1))
	if err != nil {
		return nil, "", requestFailure(err, s.reg, "reading the manifest")
	}
	if len(b) > maxManifestSize {
		return nil, "", fail(verdict.ManifestTooLarge, verdict.StageRegistry, s.role, host, "the manifest of %s is over the %d-byte limit", s.w.ref.String(), maxManifestSize)
	}
	expected := want
	if expected == "" {
		expected = resp.Header.Get("Docker-Content-Digest")
	}
	if expected != "" {
		if d, err := digest.Parse(expected); err == nil && d.Algorithm().Available() {
			if got := d.Algorithm().FromBytes(b); got != d {
				return nil, "", fail(verdict.BlobDigestMismatch, verdict.StageRegistry, s.role, host, "the manifest bytes of %s hash to %s, not %s", s.w.ref.String(), got, d)
			}
		}
	}
	var m manifestDoc
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, "", fail(verdict.ManifestInvalid, verdict.StageRegistry, s.role, host, "the manifest of %s is not valid JSON: %v", s.w.ref.String(), err)
	}
	mt := m.MediaType
	if mt == "" {
		mt = strings.TrimSpace(strings.Split(resp.Header.Get("Content-Type"), ";")[0])
	}
	if m.SchemaVersion != 2 {
		return nil, "", fail(verdict.ManifestInvalid, verdict.StageRegistry, s.role, host, "the manifest of %s has schemaVersion %d (want 2, media type %q)", s.w.ref.String(), m.SchemaVersion, mt)
	}
	return &m, mt, nil
}

// manifestStatus maps a non-200 manifest answer to its finding.
func (s *session) manifestStatus(resp *http.Response) *failure {
	host := s.reg.rep.Host
	ref := s.w.ref.String()
	switch resp.StatusCode {
	case http.StatusUnauthorized:
		es, text := readErrorBody(resp.Body)
		c, _ := Find(ParseAuthHeader(resp.Header), "bearer")
		msg := firstMessage(es, text)
		switch {
		case s.auth == "":
			return fail(verdict.RegistryUnauthorized, verdict.StageRegistry, s.role, host, "%s answered 401 for %s and the node has no credentials for it (%s)", host, ref, s.w.creds.String())
		case s.grantedEmpty || c.Params["error"] == "insufficient_scope":
			return fail(verdict.AuthAmbiguous, verdict.StageRegistry, s.role, host, "%s answered 401 insufficient_scope for %s with %s: the repository does not exist, or this identity may not read it (the registry will not say which)", host, ref, s.w.creds.String())
		}
		return fail(verdict.RegistryUnauthorized, verdict.StageRegistry, s.role, host, "%s refused %s for %s (401): %s", host, s.w.creds.String(), ref, msg)
	case http.StatusForbidden:
		es, text := readErrorBody(resp.Body)
		return fail(verdict.RegistryForbidden, verdict.StageRegistry, s.role, host, "%s refused %s for %s (403): %s", host, s.w.creds.String(), ref, firstMessage(es, text))
	case http.StatusNotFound:
		es, text := readErrorBody(resp.Body)
		if hasCode(es, "NAME_UNKNOWN") {
			return fail(verdict.RepositoryNotFound, verdict.StageRegistry, s.role, host, "%s has no repository %s: %s", host, s.w.ref.Repository, firstMessage(es, text))
		}
		return fail(verdict.ManifestNotFound, verdict.StageRegistry, s.role, host, "%s has no manifest %s in %s: %s", host, s.w.ref.Reference(), s.w.ref.Repository, firstMessage(es, text))
	}
	return statusFailure(resp, s.reg, "GET manifest")
}

func isIndex(mt string, m *manifestDoc) bool {
	return mt == mtOCIIndex || mt == mtDockerList || (mt == "" && len(m.Manifests) > 0 && m.Config == nil)
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
