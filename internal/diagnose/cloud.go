package diagnose

import (
	"context"
	"os"

	"github.com/pullpath/pullpath/internal/audit"
	awsaudit "github.com/pullpath/pullpath/internal/audit/aws"
	azureaudit "github.com/pullpath/pullpath/internal/audit/azure"
	"github.com/pullpath/pullpath/internal/report"
)

// AWSFolder audits a folder of AWS CLI outputs (`pullpath aws collect`, or
// the CLI's own files): every node subnet, so the failing ones stand beside
// the healthy ones; the answer keeps the changes of the subnets its failing
// nodes are in.
type AWSFolder string

// Source is the folder.
func (d AWSFolder) Source() string { return string(d) }

// Audit loads the folder and audits it.
func (d AWSFolder) Audit(_ context.Context, _ Focus) (*report.AuditReport, error) {
	return awsaudit.FromFolder(string(d), audit.Focus{})
}

// AzureFolder audits a folder of Azure CLI outputs (`pullpath azure
// collect`, or the CLI's own files), every pool.
type AzureFolder string

// Source is the folder.
func (d AzureFolder) Source() string { return string(d) }

// Audit loads the folder and audits it.
func (d AzureFolder) Audit(_ context.Context, _ Focus) (*report.AuditReport, error) {
	m, err := azureaudit.Load(os.DirFS(string(d)))
	if err != nil {
		return nil, err
	}
	return azureaudit.Audit(m, azureaudit.Options{Source: string(d)}), nil
}
