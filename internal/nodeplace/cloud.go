package nodeplace

import "strings"

// Cloud is a cloud pullpath audits, named as its commands are (`pullpath
// aws audit`): the one vocabulary of clouds that verdict, sweep, diagnose
// and the CLI share. A node's cloud is read from its spec.providerID
// (ParseProviderID); GKE's gce:// IDs are GCP.
type Cloud string

// The clouds, each named once. Adding one is a line here, its facts below,
// and its audit package in internal/audit's list of providers.
const (
	AWS   Cloud = "aws"
	Azure Cloud = "azure"
	GCP   Cloud = "gcp"
)

// Clouds are every cloud, in the order lists name them.
var Clouds = []Cloud{AWS, Azure, GCP}

// cloudFacts are what the pure side knows of a cloud. The command lines
// are templates: an upper-case word is a placeholder Target fills, and a
// bracketed flag ("[--region REGION]") is written only when its value is
// known.
type cloudFacts struct {
	title   string // as prose names it
	scheme  string // the spec.providerID scheme of its nodes
	audit   string // the live audit of a cluster
	collect string // the collect of a cluster's folder (--out DIR follows)
}

var facts = map[Cloud]cloudFacts{
	AWS: {title: "AWS", scheme: "aws",
		audit:   "pullpath aws audit --cluster CLUSTER [--region REGION]",
		collect: "pullpath aws collect --cluster CLUSTER --region REGION"},
	Azure: {title: "Azure", scheme: "azure",
		audit:   "pullpath azure audit --resource-group RG --name CLUSTER",
		collect: "pullpath azure collect [--subscription SUBSCRIPTION] --resource-group RG --name CLUSTER"},
	GCP: {title: "GCP", scheme: "gce",
		audit:   "pullpath gcp audit IMAGE --project PROJECT --location LOCATION --cluster CLUSTER",
		collect: "pullpath gcp collect IMAGE --project PROJECT --location LOCATION --cluster CLUSTER"},
}

// ParseCloud reads a cloud's name (aws, azure, gcp, any case).
func ParseCloud(s string) (Cloud, bool) {
	c := Cloud(strings.ToLower(s))
	_, ok := facts[c]
	return c, ok
}

// Title is the cloud's name in prose: AWS, Azure, GCP.
func (c Cloud) Title() string {
	if f, ok := facts[c]; ok {
		return f.title
	}
	return strings.ToUpper(string(c))
}

// Target names a cluster in a cloud's command lines. A field left ""
// keeps its placeholder (IMAGE, CLUSTER, REGION, PROJECT, LOCATION,
// SUBSCRIPTION, RG) and drops an optional flag.
type Target struct {
	Image, Cluster, Region, Project, Location, Subscription, ResourceGroup string
}

// AuditCommand is the command line of the cloud's live audit of t.
func (c Cloud) AuditCommand(t Target) string { return fill(facts[c].audit, t) }

// CollectCommand is the command line that writes t's folder into DIR.
func (c Cloud) CollectCommand(t Target) string { return fill(facts[c].collect, t) + " --out DIR" }

// FromFlag is diagnose's flag for the cloud's collected folder.
func (c Cloud) FromFlag() string { return "--from-" + string(c) }

// FromCommand is the command line of the audit of a collected folder: the
// audit's words before its first flag, then --from DIR.
func (c Cloud) FromCommand() string {
	words := strings.Fields(facts[c].audit)
	for i, w := range words {
		if strings.HasPrefix(w, "-") || strings.HasPrefix(w, "[") {
			words = words[:i]
			break
		}
	}
	return strings.Join(append(words, "--from", "DIR"), " ")
}

// fill writes t's values into a command template.
func fill(tmpl string, t Target) string {
	vals := map[string]string{"IMAGE": t.Image, "CLUSTER": t.Cluster, "REGION": t.Region, "PROJECT": t.Project,
		"LOCATION": t.Location, "SUBSCRIPTION": t.Subscription, "RG": t.ResourceGroup}
	words := strings.Fields(tmpl)
	out := make([]string, 0, len(words))
	for i := 0; i < len(words); i++ {
		w := words[i]
		if flag, ok := strings.CutPrefix(w, "["); ok && i+1 < len(words) {
			i++
			if v := vals[strings.TrimSuffix(words[i], "]")]; v != "" {
				out = append(out, flag, v)
			}
			continue
		}
		if v := vals[w]; v != "" {
			w = v
		}
		out = append(out, w)
	}
	return strings.Join(out, " ")
}
