package audit

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing/fstest"

	"github.com/pullpath/pullpath/internal/nodeplace"
	"github.com/pullpath/pullpath/internal/report"
)

// Provider is one cloud's audit as the list of providers holds it
// (internal/audit/clouds, in the manner of cluster-autoscaler's
// cloudprovider/builder): every provider has this one shape, so diagnose
// and the CLI loop over the list and never spell a cloud.
type Provider struct {
	Cloud nodeplace.Cloud
	// FromFolder audits the folder `pullpath CLOUD collect` wrote.
	FromFolder FromFolderFunc
	// Live is the live options with nothing named: the cloud's default
	// credential chain, its target found from the nodes.
	Live Live
	// Permissions are the read-only permissions a live audit or collect
	// needs (docs/CLOUD.md).
	Permissions []string
	// Outputs says what a collected folder holds ("AWS CLI outputs"), and
	// Objects whose objects the audit names ("AWS"): --from-CLOUD's help.
	Outputs, Objects string
}

// Folder is the Auditor of dir through the provider's FromFolder.
func (p Provider) Folder(dir string) Auditor { return folder{dir, p.FromFolder} }

// FromFolderFunc is a cloud package's FromFolder entry point.
type FromFolderFunc func(dir string, f Focus) (*report.AuditReport, error)

// Live is a cloud package's LiveOptions (the cluster, the credentials,
// the endpoints) as the list of providers uses them.
type Live interface {
	// Open finds the live target the options leave unnamed from the
	// nodes' providerIDs (credentials proven, and who they are; region,
	// project or subscription; the cluster) and returns its Auditor. A
	// cloud it cannot open returns why: *NoCredentialsError, *DeniedError
	// or a one-line error.
	Open(ctx context.Context, nodes []Node) (Auditor, error)
	// Collect reads the configuration once through the cloud's API and
	// returns the folder's files.
	Collect(ctx context.Context) (*Collection, error)
	// Target is what the options and the nodes name of the cluster, for
	// the command that collects it by hand.
	Target(nodes []Node) nodeplace.Target
}

// Collection is what a cloud's Collect returns, the same for every cloud.
type Collection struct {
	Files Files
	// Warnings are the calls that failed without stopping the collect
	// (a permission lacking): the files they leave out, and why.
	Warnings []report.AuditWarning
}

// Files are a folder's files by name, as collect writes them and
// FromFolder reads them.
type Files map[string][]byte

// FS serves the files to a cloud's loader.
func (f Files) FS() fs.FS {
	m := fstest.MapFS{}
	for k, v := range f {
		m[k] = &fstest.MapFile{Data: v, Mode: 0o644}
	}
	return m
}

// Names are the files' names, sorted.
func (f Files) Names() []string {
	var names []string
	for k := range f {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

// Write writes the files into dir, creating it.
func (f Files) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--out %s: %v", dir, errors.Unwrap(err))
	}
	for _, name := range f.Names() {
		if err := os.WriteFile(filepath.Join(dir, name), f[name], 0o644); err != nil {
			return fmt.Errorf("--out %s: %v", dir, errors.Unwrap(err))
		}
	}
	return nil
}

// Auditor is one cloud's audit with where its configuration comes from
// bound: what diagnose holds per cloud and calls with its focus.
type Auditor interface {
	Audit(ctx context.Context, f Focus) (*report.AuditReport, error)
	// Source says where the configuration comes from: the live target
	// ("live as WHO, cluster C in R") or the folder.
	Source() string
}

type folder struct {
	dir  string
	from FromFolderFunc
}

func (d folder) Audit(_ context.Context, f Focus) (*report.AuditReport, error) {
	return d.from(d.dir, f)
}
func (d folder) Source() string { return d.dir }

// LiveAuditor is the Auditor of a cloud's live API with its target bound
// (what a Live's Open returns): source says who reads what.
func LiveAuditor(source string, run func(context.Context, Focus) (*report.AuditReport, error)) Auditor {
	return liveAuditor{source, run}
}

type liveAuditor struct {
	source string
	run    func(context.Context, Focus) (*report.AuditReport, error)
}

func (l liveAuditor) Audit(ctx context.Context, f Focus) (*report.AuditReport, error) {
	return l.run(ctx, f)
}
func (l liveAuditor) Source() string { return l.source }

// SourceLive is AuditReport.Source for a live audit (a folder's is its path).
const SourceLive = "live"
