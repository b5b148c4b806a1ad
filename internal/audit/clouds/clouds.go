// Package clouds is the list of pullpath's cloud audits, in the manner of
// cluster-autoscaler's cloudprovider/builder: every provider is named once,
// here, with the one shape audit.Provider gives it. Diagnose and the CLI
// loop over All; nothing outside internal/audit and nodeplace spells a
// cloud. Adding a cloud is its package and one line below.
package clouds

import (
	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/audit/aws"
	"github.com/pullpath/pullpath/internal/audit/azure"
	"github.com/pullpath/pullpath/internal/audit/gcp"
	"github.com/pullpath/pullpath/internal/nodeplace"
)

// All are the providers, in nodeplace.Clouds' order.
var All = []audit.Provider{
	aws.Provider,
	azure.Provider,
	gcp.Provider,
}

// Of is the provider of a cloud.
func Of(c nodeplace.Cloud) (audit.Provider, bool) {
	for _, p := range All {
		if p.Cloud == c {
			return p, true
		}
	}
	return audit.Provider{}, false
}
