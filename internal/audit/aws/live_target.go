package aws

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	"github.com/aws/smithy-go"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/nodeplace"
)

// LiveTarget is what a live audit reads, found from the nodes themselves:
// who the default chain's credentials are, and which EKS cluster the
// nodes' instances belong to.
type LiveTarget struct {
	Identity string // the caller's ARN (sts get-caller-identity)
	Account  string
	Region   string
	Cluster  string
	// Config is the loaded configuration, credentials checked: Live takes
	// it (LiveOptions.Config) instead of loading the chain again.
	Config aws.Config
}

// Chain names what the AWS default credential chain looks at.
const Chain = "the AWS default chain (environment, shared config and SSO, web identity, container and instance metadata)"

// credentialsTimeout bounds how long the chain may look for credentials
// (the instance metadata service off EC2 answers nothing).
const credentialsTimeout = 10 * time.Second

// Permissions are the IAM actions the audit reads with (docs/aws.md).
var Permissions = []string{"eks:DescribeCluster", "eks:ListNodegroups", "eks:DescribeNodegroup", "ec2:Describe*", "iam:SimulatePrincipalPolicy"}

var notAuthorizedRE = regexp.MustCompile(`not authorized to perform:? ([a-z0-9-]+:[A-Za-z0-9*]+)`)

// FindTarget loads the default chain (o.Profile, o.Region), checks that it
// gives credentials and asks STS who they are, then reads the nodes'
// instances and the EKS cluster they are tagged with (eks:cluster-name,
// then aws:eks:cluster-name, then kubernetes.io/cluster/NAME owned). No
// credentials, or credentials AWS refuses, is a *audit.NoCredentialsError;
// a refused call a *audit.DeniedError naming the permission.
func FindTarget(ctx context.Context, o LiveOptions, instanceIDs []string) (LiveTarget, error) {
	var t LiveTarget
	cfg, err := loadConfig(ctx, o)
	if err != nil {
		return t, &audit.NoCredentialsError{Cloud: nodeplace.AWS, Chain: Chain, Reason: oneLineErr(err)}
	}
	if cfg.Credentials == nil {
		return t, &audit.NoCredentialsError{Cloud: nodeplace.AWS, Chain: Chain, Reason: "no credential provider configured"}
	}
	cctx, cancel := context.WithTimeout(ctx, credentialsTimeout)
	_, err = cfg.Credentials.Retrieve(cctx)
	cancel()
	if err != nil {
		return t, &audit.NoCredentialsError{Cloud: nodeplace.AWS, Chain: Chain, Reason: oneLineErr(err)}
	}
	t.Config, t.Region = cfg, cfg.Region
	who, err := sts.NewFromConfig(cfg, func(op *sts.Options) {
		if o.EndpointURL != "" {
			op.BaseEndpoint = aws.String(o.EndpointURL)
		}
	}).GetCallerIdentity(ctx, &sts.GetCallerIdentityInput{})
	if err != nil {
		if refusedCredentials(err) {
			return t, &audit.NoCredentialsError{Cloud: nodeplace.AWS, Chain: Chain, Reason: "AWS refuses them: " + apiError(err)}
		}
		return t, fmt.Errorf("sts get-caller-identity: %s", apiError(err))
	}
	t.Identity, t.Account = str(who.Arn), str(who.Account)
	t.Cluster = o.Cluster
	if t.Cluster != "" || len(instanceIDs) == 0 {
		return t, nil
	}
	out, err := ec2.NewFromConfig(cfg, func(op *ec2.Options) {
		if o.EndpointURL != "" {
			op.BaseEndpoint = aws.String(o.EndpointURL)
		}
	}).DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: instanceIDs})
	call := "ec2 describe-instances --instance-ids " + strings.Join(instanceIDs, " ")
	if err != nil {
		return t, deniedOr(err, call, "ec2:DescribeInstances", t.Identity)
	}
	votes := map[string]int{}
	for _, r := range out.Reservations {
		for _, in := range r.Instances {
			if c := clusterTag(in.Tags); c != "" {
				votes[c]++
			}
		}
	}
	if len(votes) == 0 {
		return t, fmt.Errorf("%s: no instance carries an EKS cluster tag (eks:cluster-name, kubernetes.io/cluster/NAME) in account %s, %s: name the cluster (--aws-cluster)", call, t.Account, t.Region)
	}
	var names []string
	for c := range votes {
		names = append(names, c)
	}
	sort.Slice(names, func(i, j int) bool {
		return votes[names[i]] > votes[names[j]] || (votes[names[i]] == votes[names[j]] && names[i] < names[j])
	})
	t.Cluster = names[0]
	return t, nil
}

func clusterTag(tags []ec2types.Tag) string {
	for _, key := range []string{"eks:cluster-name", "aws:eks:cluster-name"} {
		for _, tg := range tags {
			if str(tg.Key) == key && str(tg.Value) != "" {
				return str(tg.Value)
			}
		}
	}
	for _, tg := range tags {
		if c, ok := strings.CutPrefix(str(tg.Key), "kubernetes.io/cluster/"); ok && str(tg.Value) == "owned" {
			return c
		}
	}
	return ""
}

// refusedCredentials: AWS does not accept the credentials themselves.
func refusedCredentials(err error) bool {
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		return false
	}
	switch ae.ErrorCode() {
	case "InvalidClientTokenId", "ExpiredToken", "ExpiredTokenException", "SignatureDoesNotMatch", "UnrecognizedClientException", "AuthFailure", "InvalidAccessKeyId":
		return true
	}
	return false
}

// deniedOr is a *audit.DeniedError when AWS refused the call for want of
// permission (the permission as the message names it, else perm), else
// the call's one-line error.
func deniedOr(err error, call, perm, identity string) error {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "AccessDenied", "AccessDeniedException", "UnauthorizedOperation", "UnauthorizedAccess", "Client.UnauthorizedOperation":
			if m := notAuthorizedRE.FindStringSubmatch(ae.ErrorMessage()); m != nil {
				perm = m[1]
			}
			return &audit.DeniedError{Cloud: nodeplace.AWS, Call: call, Permission: perm, Identity: identity, Reason: apiError(err)}
		}
		if refusedCredentials(err) {
			return &audit.NoCredentialsError{Cloud: nodeplace.AWS, Chain: Chain, Reason: "AWS refuses them: " + apiError(err)}
		}
	}
	return fmt.Errorf("%s: %s", call, apiError(err))
}

func oneLineErr(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }
