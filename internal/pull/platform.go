package pull

import (
	"fmt"
	"runtime"
	"strings"
)

// Platform is os/arch[/variant], as in an image index.
type Platform struct {
	OS, Architecture, Variant string
}

func (p Platform) String() string {
	s := p.OS + "/" + p.Architecture
	if p.Variant != "" {
		s += "/" + p.Variant
	}
	return s
}

// DefaultPlatform is the running node's platform.
func DefaultPlatform() Platform {
	p := Platform{OS: runtime.GOOS, Architecture: runtime.GOARCH}
	if p.Architecture == "arm64" {
		p.Variant = "v8"
	}
	return p
}

// ParsePlatform parses "linux/amd64" or "linux/arm64/v8".
func ParsePlatform(s string) (Platform, error) {
	parts := strings.Split(s, "/")
	if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || parts[1] == "" {
		return Platform{}, fmt.Errorf("platform %q: want os/arch or os/arch/variant, like linux/amd64", s)
	}
	p := Platform{OS: strings.ToLower(parts[0]), Architecture: strings.ToLower(parts[1])}
	if len(parts) == 3 {
		p.Variant = strings.ToLower(parts[2])
	}
	if p.Architecture == "arm64" && p.Variant == "" {
		p.Variant = "v8"
	}
	return p, nil
}

// matches follows containerd's platform matcher loosely: os and
// architecture must match; a variant is compared when both name one
// (arm64's v8 is the default variant).
func (p Platform) matches(os, arch, variant string) bool {
	if !strings.EqualFold(p.OS, os) || !strings.EqualFold(p.Architecture, arch) {
		return false
	}
	if arch == "arm64" && variant == "" {
		variant = "v8"
	}
	return p.Variant == "" || variant == "" || strings.EqualFold(p.Variant, variant)
}
