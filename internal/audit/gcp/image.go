package gcp

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/distribution/reference"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/verdict"
)

// Registry kinds.
const (
	KindArtifactRegistry = "artifact-registry"
	KindGCR              = "gcr"
)

// Target is the image's registry: its host, project, location and
// repository.
type Target struct {
	Image    string
	Host     string // LOCATION-docker.pkg.dev, gcr.io, us.gcr.io, ...
	Kind     string
	Project  string // the registry's project id
	Location string // us-central1, us, europe, ...
	Repo     string // the Artifact Registry repository (gcr.io-style repositories are named after the host)
	// Guessed: no image was named; the target comes from the folder.
	Guessed bool
}

// ParseImage reads an Artifact Registry (LOCATION-docker.pkg.dev/PROJECT/
// REPO/IMAGE) or Container Registry ([REGION.]gcr.io/PROJECT/IMAGE)
// reference.
func ParseImage(image string) (Target, error) {
	named, err := reference.ParseNormalizedNamed(strings.TrimSpace(image))
	if err != nil {
		return Target{}, fmt.Errorf("image %q: %v", image, err)
	}
	host := strings.ToLower(reference.Domain(named))
	path := strings.Split(reference.Path(named), "/")
	t := Target{Image: image, Host: host}
	switch {
	case strings.HasSuffix(host, "-docker.pkg.dev"):
		if len(path) < 3 {
			return Target{}, fmt.Errorf("image %q: want LOCATION-docker.pkg.dev/PROJECT/REPOSITORY/IMAGE", image)
		}
		t.Kind, t.Location, t.Project, t.Repo = KindArtifactRegistry, strings.TrimSuffix(host, "-docker.pkg.dev"), path[0], path[1]
	case host == "gcr.io" || strings.HasSuffix(host, ".gcr.io"):
		if len(path) < 2 {
			return Target{}, fmt.Errorf("image %q: want [REGION.]gcr.io/PROJECT/IMAGE", image)
		}
		t.Kind, t.Project, t.Repo = KindGCR, path[0], host
		t.Location = "us"
		if r, ok := strings.CutSuffix(host, ".gcr.io"); ok {
			t.Location = r
		}
		if len(path) >= 3 && strings.Contains(path[0], ".") { // domain-scoped: example.com/project
			t.Project = path[0] + ":" + path[1]
		}
	default:
		return Target{}, fmt.Errorf("image %q: %s is not Artifact Registry (LOCATION-docker.pkg.dev) or Container Registry (gcr.io): the gcp audit checks the path to Google's registries", image, host)
	}
	return t, nil
}

// guessTarget is the target when no image was named: the one repository
// whose IAM policy the folder holds, in the cluster's region and the
// project projects-describe.json names.
func (m *Model) guessTarget() (Target, report.AuditWarning) {
	t := Target{Kind: KindArtifactRegistry, Location: m.Region(), Project: m.ClusterProject(), Guessed: true}
	if m.Project != nil && m.Project.ProjectId != "" {
		t.Project = m.Project.ProjectId
	}
	repos := sortedKeys(m.RepoPolicies)
	if len(repos) == 1 {
		t.Repo = repos[0]
	}
	if strings.HasSuffix(t.Repo, "gcr.io") {
		t.Kind, t.Host, t.Location = KindGCR, t.Repo, "us"
	} else {
		t.Host = t.Location + "-docker.pkg.dev"
	}
	what := "repository " + t.Repo
	if t.Repo == "" {
		what = "no repository"
	}
	w := report.AuditWarning{Message: fmt.Sprintf("no IMAGE named: auditing %s (%s, project %s); name the image the pods pull (pullpath gcp audit IMAGE ...) to audit its registry", t.Host, what, t.Project)}
	if t.Repo == "" {
		w.File = FileRepoPolicy("REPO")
		w.Message += "; no " + filePrefRepoPolicy + "REPO.json in the folder names a repository"
		w.Command = cmdRepoPolicy("REPO", t.Location, t.Project)
	}
	return t, w
}

// pullHost is one host of a pull, with its roles and the Google API
// service that VPC Service Controls names it by.
type pullHost struct {
	Name    string
	Roles   []verdict.Role
	Service string
	Answer  answer // what Cloud DNS answers the nodes for it
}

func (h *pullHost) role() verdict.Role { return h.Roles[0] }

func (h *pullHost) rolesString() string {
	var s []string
	for _, r := range h.Roles {
		s = append(s, string(r))
	}
	return strings.Join(s, ", ")
}

// Google API services, as VPC Service Controls perimeters list them.
const (
	svcArtifactRegistry  = "artifactregistry.googleapis.com"
	svcContainerRegistry = "containerregistry.googleapis.com"
	svcStorage           = "storage.googleapis.com"
)

// hosts are the hosts of a pull from t. Artifact Registry answers the
// registry API, the token (/v2/token) and the layers (a 307 to
// /artifacts-downloads/ on the same host) on LOCATION-docker.pkg.dev;
// Container Registry's token is on gcr.io and its layers are in Cloud
// Storage (storage.googleapis.com). The node's own access token comes from
// the metadata server (169.254.169.254), which needs no route.
func (t Target) hosts() []*pullHost {
	if t.Kind == KindGCR {
		return []*pullHost{
			{Name: t.Host, Roles: []verdict.Role{verdict.RoleRegistry, verdict.RoleAuth}, Service: svcContainerRegistry},
			{Name: "storage.googleapis.com", Roles: []verdict.Role{verdict.RoleBlob}, Service: svcStorage},
		}
	}
	return []*pullHost{{Name: t.Host, Roles: []verdict.Role{verdict.RoleRegistry, verdict.RoleAuth, verdict.RoleBlob}, Service: svcArtifactRegistry}}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
