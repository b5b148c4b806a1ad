package aws

import ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

func nameTag(tags []ec2types.Tag) string {
	for _, t := range tags {
		if str(t.Key) == "Name" {
			return str(t.Value)
		}
	}
	return ""
}
