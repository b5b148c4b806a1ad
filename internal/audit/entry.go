package audit

import (
	"context"

	"github.com/pullpath/pullpath/internal/report"
)

// FromFolderFunc is a cloud package's FromFolder entry point.
type FromFolderFunc func(dir string, f Focus) (*report.AuditReport, error)

// LiveFunc is a cloud package's Live entry point with its options bound:
// func(ctx, f) { return aws.Live(ctx, opts, f) }.
type LiveFunc func(ctx context.Context, f Focus) (*report.AuditReport, error)

// Auditor is one cloud's audit with where its configuration comes from
// bound: what diagnose holds per cloud and calls with its focus.
type Auditor interface {
	Audit(ctx context.Context, f Focus) (*report.AuditReport, error)
	// Source says where the configuration comes from: "live" or the folder.
	Source() string
}

// Folder is the Auditor of a folder through a cloud's FromFolder.
func Folder(dir string, from FromFolderFunc) Auditor { return folder{dir, from} }

// LiveAuditor is the Auditor of a cloud's live API through its Live.
func LiveAuditor(live LiveFunc) Auditor { return liveAuditor(live) }

type folder struct {
	dir  string
	from FromFolderFunc
}

func (d folder) Audit(_ context.Context, f Focus) (*report.AuditReport, error) {
	return d.from(d.dir, f)
}
func (d folder) Source() string { return d.dir }

type liveAuditor LiveFunc

func (l liveAuditor) Audit(ctx context.Context, f Focus) (*report.AuditReport, error) {
	return l(ctx, f)
}
func (liveAuditor) Source() string { return SourceLive }

// SourceLive is AuditReport.Source for a live audit (a folder's is its path).
const SourceLive = "live"
