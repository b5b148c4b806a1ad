package aws_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/pullpath/pullpath/internal/audit"
	awsaudit "github.com/pullpath/pullpath/internal/audit/aws"
	"github.com/pullpath/pullpath/internal/audit/aws/fakeaws"
)

// FindTarget, through the real SDK clients: who the credentials are (STS),
// and the cluster the nodes' instances are tagged with; a denied
// describe-instances names the permission, refused or missing credentials
// are their own error.
func TestFindTarget(t *testing.T) {
	srv := fakeaws.New(filepath.Join("testdata", "valid-healthy"))
	defer srv.Close()
	ctx := context.Background()
	o := awsaudit.LiveOptions{EndpointURL: srv.URL, Config: staticConfig()}
	tg, err := awsaudit.FindTarget(ctx, o, []string{"i-0a00000000000a001"})
	if err != nil {
		t.Fatalf("FindTarget = %v", err)
	}
	if tg.Cluster != "prod" || tg.Account != "111122223333" || tg.Identity != "arn:aws:iam::111122223333:user/pullpath-fake" || tg.Region != "us-east-1" {
		t.Errorf("target = %+v, want cluster prod, account 111122223333, the caller's ARN, us-east-1", tg)
	}
	var asked bool
	for _, c := range srv.Calls() {
		asked = asked || (c.Action == "DescribeInstances" && c.Params.Get("InstanceId.1") == "i-0a00000000000a001")
	}
	if !asked {
		t.Errorf("calls %v: want describe-instances of the node's instance id", srv.Calls())
	}

	if _, err := awsaudit.FindTarget(ctx, o, []string{"i-0ffffffffffffffff"}); err == nil || !strings.Contains(err.Error(), "InvalidInstanceID.NotFound") {
		t.Errorf("an instance of another account: %v, want EC2's InvalidInstanceID.NotFound", err)
	}

	srv.Deny("DescribeInstances")
	_, err = awsaudit.FindTarget(ctx, o, []string{"i-0a00000000000a001"})
	var de *audit.DeniedError
	if !errors.As(err, &de) || de.Permission != "ec2:DescribeInstances" || de.Identity == "" || strings.Contains(err.Error(), "\n") {
		t.Errorf("denied describe-instances: %v, want a DeniedError naming ec2:DescribeInstances and who asked", err)
	}

	none := staticConfig()
	none.Credentials = aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
		return aws.Credentials{}, errors.New("no EC2 IMDS role found")
	})
	_, err = awsaudit.FindTarget(ctx, awsaudit.LiveOptions{EndpointURL: srv.URL, Config: none}, nil)
	var ne *audit.NoCredentialsError
	if !errors.As(err, &ne) || !strings.Contains(err.Error(), "no EC2 IMDS role found") {
		t.Errorf("no credentials: %v, want a NoCredentialsError with the chain's words", err)
	}
}
