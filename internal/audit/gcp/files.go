package gcp

import (
	"fmt"
	"strings"
)

// The --from contract: one `gcloud ... --format=json` output per file,
// verbatim, named by the command that made it (docs/gcp.md has the table).
// collect writes exactly these.
const (
	FileCluster        = "container-clusters-describe.json"
	FileInstances      = "compute-instances-list.json"
	FileNetwork        = "compute-networks-describe.json"
	FileRoutes         = "compute-routes-list.json"
	FileFirewalls      = "compute-firewall-rules-list.json"
	FileRouters        = "compute-routers-list.json"
	FileZones          = "dns-managed-zones-list.json"
	FileDNSPolicies    = "dns-policies-list.json"
	FileProjectPolicy  = "projects-get-iam-policy.json"
	FileProject        = "projects-describe.json"
	FilePerimeters     = "access-context-manager-perimeters-list.json"
	filePrefSubnet     = "compute-networks-subnets-describe-"
	filePrefRecords    = "dns-record-sets-list-"
	filePrefRepoPolicy = "artifacts-repositories-get-iam-policy-"
	filePrefProject    = "projects-describe-"
	filePrefRepo       = "artifacts-repositories-describe-"
	filePrefSecretPol  = "secrets-get-iam-policy-"
	FileVPCSCConfig    = "artifacts-vpcsc-config.json"
	fileSuffix         = ".json"
)

// FileSubnet is the file of one node subnet.
func FileSubnet(name string) string { return filePrefSubnet + name + fileSuffix }

// FileRecords is the file of one private zone's record sets (by the zone's
// name, not its DNS name).
func FileRecords(zone string) string { return filePrefRecords + zone + fileSuffix }

// FileRepoPolicy is the file of one Artifact Registry repository's IAM
// policy.
func FileRepoPolicy(repo string) string { return filePrefRepoPolicy + repo + fileSuffix }

// FileNodeProject is the file of a nodes' project other than the
// registry's (the cluster's; the network's host project with Shared VPC):
// its number is how perimeters list it.
func FileNodeProject(project string) string { return filePrefProject + project + fileSuffix }

// FileRepo is the file of one Artifact Registry repository (its mode and,
// for a remote repository, its upstream and credentials).
func FileRepo(repo string) string { return filePrefRepo + repo + fileSuffix }

// FileSecretPolicy is the IAM policy of the Secret Manager secret a remote
// repository's upstream credentials live in (never the secret's value).
func FileSecretPolicy(secret string) string { return filePrefSecretPol + secret + fileSuffix }

// Commands that write each file, for warnings, changes and docs.
func cmdCluster(cluster, location string) string {
	return fmt.Sprintf("gcloud container clusters describe %s --location %s --format=json", cluster, location)
}
func cmdInstances(project, cluster string) string {
	return fmt.Sprintf("gcloud compute instances list --project %s --filter=\"labels.goog-k8s-cluster-name=%s\" --format=json", project, cluster)
}
func cmdNetwork(project, network string) string {
	return fmt.Sprintf("gcloud compute networks describe %s --project %s --format=json", network, project)
}
func cmdSubnet(project, region, name string) string {
	return fmt.Sprintf("gcloud compute networks subnets describe %s --region %s --project %s --format=json", name, region, project)
}
func cmdRoutes(project, network string) string {
	return fmt.Sprintf("gcloud compute routes list --project %s --filter=\"network:%s\" --format=json", project, network)
}
func cmdFirewalls(project, network string) string {
	return fmt.Sprintf("gcloud compute firewall-rules list --project %s --filter=\"network:%s\" --format=json", project, network)
}
func cmdRouters(project, network string) string {
	return fmt.Sprintf("gcloud compute routers list --project %s --filter=\"network:%s\" --format=json", project, network)
}
func cmdZones(project string) string {
	return fmt.Sprintf("gcloud dns managed-zones list --project %s --format=json", project)
}
func cmdRecords(project, zone string) string {
	return fmt.Sprintf("gcloud dns record-sets list --zone %s --project %s --format=json", zone, project)
}
func cmdDNSPolicies(project string) string {
	return fmt.Sprintf("gcloud dns policies list --project %s --format=json", project)
}
func cmdRepoPolicy(repo, location, project string) string {
	return fmt.Sprintf("gcloud artifacts repositories get-iam-policy %s --location %s --project %s --format=json", repo, location, project)
}
func cmdRepo(repo, location, project string) string {
	return fmt.Sprintf("gcloud artifacts repositories describe %s --location %s --project %s --format=json", repo, location, project)
}
func cmdSecretPolicy(secret, project string) string {
	return fmt.Sprintf("gcloud secrets get-iam-policy %s --project %s --format=json", secret, project)
}
func cmdVPCSCConfig(location, project string) string {
	return fmt.Sprintf("gcloud artifacts vpcsc-config describe --location %s --project %s --format=json", location, project)
}
func cmdProjectPolicy(project string) string {
	return fmt.Sprintf("gcloud projects get-iam-policy %s --format=json", project)
}
func cmdProject(project string) string {
	return fmt.Sprintf("gcloud projects describe %s --format=json", project)
}
func cmdPerimeters(policy string) string {
	if policy == "" {
		policy = "POLICY"
	}
	return fmt.Sprintf("gcloud access-context-manager perimeters list --policy %s --format=json", policy)
}

// Contract is the table of docs/gcp.md: each file with the command that
// writes it, in the order the audit reads them.
var Contract = []struct{ File, Command string }{
	{FileCluster, "gcloud container clusters describe CLUSTER --location L"},
	{FileInstances, "gcloud compute instances list --filter=\"labels.goog-k8s-cluster-name=CLUSTER\""},
	{FileNetwork, "gcloud compute networks describe NETWORK"},
	{FileSubnet("NAME"), "gcloud compute networks subnets describe NAME --region R"},
	{FileRoutes, "gcloud compute routes list --filter=\"network:NETWORK\""},
	{FileFirewalls, "gcloud compute firewall-rules list --filter=\"network:NETWORK\""},
	{FileRouters, "gcloud compute routers list --filter=\"network:NETWORK\""},
	{FileZones, "gcloud dns managed-zones list"},
	{FileRecords("ZONE"), "gcloud dns record-sets list --zone ZONE"},
	{FileDNSPolicies, "gcloud dns policies list"},
	{FileRepo("REPO"), "gcloud artifacts repositories describe REPO --location L --project REGISTRY_PROJECT"},
	{FileRepoPolicy("REPO"), "gcloud artifacts repositories get-iam-policy REPO --location L --project REGISTRY_PROJECT"},
	{FileProjectPolicy, "gcloud projects get-iam-policy REGISTRY_PROJECT"},
	{FileProject, "gcloud projects describe REGISTRY_PROJECT"},
	{FileNodeProject("PROJECT"), "gcloud projects describe PROJECT, for the cluster's project and the network's host project when they are not the registry's"},
	{FilePerimeters, "gcloud access-context-manager perimeters list --policy POLICY"},
	{FileSecretPolicy("SECRET"), "gcloud secrets get-iam-policy SECRET --project SECRET_PROJECT, for a remote repository's upstream credentials"},
	{FileVPCSCConfig, "gcloud artifacts vpcsc-config describe --location L --project REGISTRY_PROJECT, for a remote repository"},
}

// lastSeg is the last path segment of a resource URL or name.
func lastSeg(s string) string {
	s = strings.TrimSuffix(s, "/")
	return s[strings.LastIndex(s, "/")+1:]
}

// resPath is a Compute resource URL or partial path reduced to
// "projects/P/...": https://www.googleapis.com/compute/v1/projects/P/...,
// //compute.googleapis.com/projects/P/... and projects/P/... all agree.
func resPath(u string) string {
	if i := strings.Index(u, "projects/"); i >= 0 {
		return strings.TrimSuffix(u[i:], "/")
	}
	return u
}

// segment is the value after key in a resource path (segment(p, "projects")).
func segment(p, key string) string {
	if !strings.Contains(p, "/") {
		return ""
	}
	parts := strings.Split(resPath(p), "/")
	for i := 0; i+1 < len(parts); i++ {
		if parts[i] == key {
			return parts[i+1]
		}
	}
	return ""
}

// sameRes reports whether two Compute references name the same resource.
func sameRes(a, b string) bool { return a != "" && strings.EqualFold(resPath(a), resPath(b)) }
