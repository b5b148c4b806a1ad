package azure

import (
	"fmt"
	"strings"

	"github.com/distribution/reference"

	"github.com/pullpath/pullpath/internal/report"
)

// Image is an image in an ACR registry, as `azure audit IMAGE` names it:
// the login server picks the registry (--registry overrides it), the
// repository the cache rule that serves it.
type Image struct {
	Ref         string
	LoginServer string // REGISTRY.azurecr.io, lower-cased
	Repository  string // the path under the login server
}

// acrSuffixes are the login servers' domains: Azure's public cloud, Azure
// China and Azure US Government.
var acrSuffixes = []string{".azurecr.io", ".azurecr.cn", ".azurecr.us"}

// ParseImage reads an ACR image reference (REGISTRY.azurecr.io/REPO[:TAG|@DIGEST]).
func ParseImage(image string) (Image, error) {
	named, err := reference.ParseNormalizedNamed(strings.TrimSpace(image))
	if err != nil {
		return Image{}, fmt.Errorf("image %q: %v", image, err)
	}
	host := strings.ToLower(reference.Domain(named))
	for _, s := range acrSuffixes {
		if name, ok := strings.CutSuffix(host, s); ok && name != "" && !strings.Contains(name, ".") {
			return Image{Ref: image, LoginServer: host, Repository: reference.Path(named)}, nil
		}
	}
	return Image{}, fmt.Errorf("image %q: %s is not an ACR login server (REGISTRY.azurecr.io): the azure audit checks the path to ACR", image, host)
}

// registryName is the registry's name in a login server (REGISTRY.azurecr.io;
// a login server with a domain name label hash, REGISTRY-HASH.azurecr.io,
// gives REGISTRY-HASH: the list matches the login server too).
func registryName(loginServer string) string {
	name, _, _ := strings.Cut(strings.ToLower(loginServer), ".")
	return name
}

// imageWarning says when the image's registry is not the one the folder
// describes: the audit checks the folder's.
func (m *Model) imageWarning(image string) *report.AuditWarning {
	img, err := ParseImage(image)
	if err != nil {
		return &report.AuditWarning{Message: err.Error() + "; the audit checks " + m.LoginServer()}
	}
	if ls := m.LoginServer(); ls != "" && img.LoginServer != ls {
		return &report.AuditWarning{File: FileACR, Command: cmdACR(registryName(img.LoginServer)),
			Message: fmt.Sprintf("the image's registry is %s, %s describes %s: the audit checks %s's path; collect with the image (pullpath azure collect IMAGE ...) to audit its registry", img.LoginServer, FileACR, ls, ls)}
	}
	return nil
}
