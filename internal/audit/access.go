package audit

import (
	"fmt"

	"github.com/pullpath/pullpath/internal/nodeplace"
)

// The two ways a live audit cannot read a cloud, as typed errors every
// cloud returns, so that a caller (diagnose) can say which credential is
// missing or which permission, and what to run by hand instead.

// NoCredentialsError: the cloud's default credential chain found no
// credentials, or the cloud refused the ones it found (expired, unknown).
type NoCredentialsError struct {
	Cloud  nodeplace.Cloud
	Chain  string // what was looked at: "the AWS default chain (environment, shared config, SSO, IMDS)"
	Reason string // the SDK's words, one line, no secret
}

func (e *NoCredentialsError) Error() string {
	return fmt.Sprintf("no usable %s credentials from %s: %s", e.Cloud, e.Chain, e.Reason)
}

// DeniedError is a call the identity may not make.
type DeniedError struct {
	Cloud      nodeplace.Cloud
	Call       string // as the cloud's CLI names it: "ec2 describe-instances"
	Permission string // the action to grant: "ec2:DescribeInstances"
	Identity   string // who asked, when known
	Reason     string // the API's words, one line
}

func (e *DeniedError) Error() string {
	who := "the identity"
	if e.Identity != "" {
		who = e.Identity
	}
	return fmt.Sprintf("%s: %s may not call it: grant %s (%s)", e.Call, who, e.Permission, e.Reason)
}
