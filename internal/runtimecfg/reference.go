package runtimecfg

import (
	"errors"
	"fmt"
	"strings"

	"github.com/distribution/reference"

	"github.com/pullpath/pullpath/internal/units"
)

// DockerHubHost is the host the runtimes contact for the registry "docker.io".
const DockerHubHost = "registry-1.docker.io"

// DockerHubRegistry is the normalized registry name of Docker Hub.
const DockerHubRegistry = "docker.io"

// Ref is an image reference as the kubelet and containerd understand it.
type Ref struct {
	Original   string // as given
	Registry   string // "docker.io", "myacr.azurecr.io", "reg.lab.test:5443" (domain as in the normalized name)
	Host       string // the host to contact: "registry-1.docker.io" for docker.io, else Registry
	Repository string // "library/nginx"
	Tag        string // "latest" when neither tag nor digest given; kept as given when both are
	Digest     string // "sha256:..." or ""
}

// ReferenceError is the error of ParseReference.
type ReferenceError struct {
	Input  string
	Reason string
}

func (e *ReferenceError) Error() string {
	return fmt.Sprintf("image reference %s: %s", quoteInput(e.Input), e.Reason)
}

// ParseReference parses s with github.com/distribution/reference
// normalization (ParseNormalizedNamed, then the default tag "latest" when
// neither tag nor digest is given), which is what the kubelet and containerd
// do: "nginx" is docker.io/library/nginx:latest. A reference with both a tag
// and a digest keeps both; the runtime pulls by the digest.
func ParseReference(s string) (Ref, error) {
	if strings.TrimSpace(s) == "" {
		return Ref{}, &ReferenceError{Input: s, Reason: "repository name is empty (want an image such as nginx:1.25)"}
	}
	named, err := reference.ParseNormalizedNamed(s)
	if err != nil {
		return Ref{}, &ReferenceError{Input: s, Reason: referenceReason(err)}
	}
	return refFromNamed(s, named), nil
}

// Reference is what goes into /v2/<repository>/manifests/<reference>: the
// digest when there is one, else the tag.
func (r Ref) Reference() string {
	if r.Digest != "" {
		return r.Digest
	}
	return r.Tag
}

// Name is registry/repository, without tag or digest.
func (r Ref) Name() string {
	return r.Registry + "/" + r.Repository
}

// String is the fully qualified normalized form:
// registry/repository[:tag][@digest].
func (r Ref) String() string {
	s := r.Name()
	if r.Tag != "" {
		s += ":" + r.Tag
	}
	if r.Digest != "" {
		s += "@" + r.Digest
	}
	return s
}

// referenceReason turns the library's error into a short, single-line reason.
func referenceReason(err error) string {
	switch {
	case errors.Is(err, reference.ErrNameContainsUppercase):
		return "repository name must be lowercase"
	case errors.Is(err, reference.ErrNameEmpty):
		return "repository name is empty"
	case errors.Is(err, reference.ErrNameTooLong):
		return "repository name is longer than 255 characters"
	}
	msg := err.Error()
	if strings.Contains(msg, "must be lowercase") {
		return "repository name must be lowercase"
	}
	if strings.Contains(msg, "64-byte hexadecimal") {
		return "a 64-character hexadecimal string is an image ID, not a reference"
	}
	if strings.Contains(msg, "digest") {
		// digest.Parse errors: "invalid checksum digest length", "invalid checksum digest format", ...
		return msg + " (want @sha256: followed by 64 lowercase hex characters)"
	}
	if errors.Is(err, reference.ErrReferenceInvalidFormat) {
		return "invalid reference format (want [registry[:port]/]repository[:tag][@sha256:digest], lowercase)"
	}
	return units.OneLine(msg)
}

// quoteInput quotes user input for an error message: one line, bounded.
func quoteInput(s string) string {
	const max = 256
	if len(s) > max {
		return fmt.Sprintf("%q...", s[:max])
	}
	return fmt.Sprintf("%q", s)
}
