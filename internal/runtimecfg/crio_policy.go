package runtimecfg

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// CRI-O checks every image against containers/image's signature policy
// (policy.json) before it copies a layer: CRI-O's signature_policy, else
// root's ~/.config/containers/policy.json, else /etc/containers/policy.json
// (signature.DefaultPolicy; a missing file fails every pull). For the
// docker transport the requirement is the most specific scope that names
// the image (PolicyContext.requirementsForImageRef: the identity
// host/repo:tag or host/repo@digest, then each namespace up to the host,
// then *.domain wildcards, then the transport's "" scope), else the
// policy's default.

// DefaultPolicyPath is containers/image's built-in policy file.
const DefaultPolicyPath = "/etc/containers/policy.json"

// PolicyDecision is what the policy says about one image.
type PolicyDecision struct {
	File  string // node path of the policy read
	Scope string // the docker scope that matched; "default" for the policy's default
	// Types are the requirement types, in order: insecureAcceptAnything,
	// reject, signedBy, sigstoreSigned, ...
	Types []string
	// Err is a policy CRI-O cannot use (missing, not JSON, no default):
	// every pull fails with it.
	Err error
}

// Rejects says whether the requirements refuse the image whatever its
// signatures (a reject among them).
func (d PolicyDecision) Rejects() bool {
	for _, t := range d.Types {
		if t == "reject" {
			return true
		}
	}
	return false
}

// NeedsSignature says whether an image passes only with a signature.
func (d PolicyDecision) NeedsSignature() bool {
	for _, t := range d.Types {
		if t != "insecureAcceptAnything" && t != "reject" {
			return true
		}
	}
	return false
}

type policyRequirement struct {
	Type string `json:"type"`
}

type policyFile struct {
	Default    []policyRequirement                       `json:"default"`
	Transports map[string]map[string][]policyRequirement `json:"transports"`
}

// Policy is the signature policy's decision for ref, as CRI-O reads the
// policy (no pod namespace: signature_policy_dir is not used).
func (n *CRIONode) Policy(ref Ref) PolicyDecision {
	ro := RegistriesConfOptions{Root: n.Root, Home: n.Home}
	ro.defaults()
	file := n.Config.SignaturePolicy.Value
	if file == "" {
		file = DefaultPolicyPath
		if user := filepath.Join(ro.Home, ".config/containers/policy.json"); exists(ro.node(user)) {
			file = user
		}
	}
	d := PolicyDecision{File: file}
	b, err := os.ReadFile(ro.node(file))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			d.Err = fmt.Errorf("%s does not exist: containers/image needs a policy to pull anything", file)
		} else {
			d.Err = fmt.Errorf("%s: %s", file, pathErrReason(err))
		}
		return d
	}
	var p policyFile
	if err := json.Unmarshal(b, &p); err != nil {
		d.Err = fmt.Errorf("invalid policy in %q: %s", file, jsonReason(err))
		return d
	}
	if len(p.Default) == 0 {
		d.Err = fmt.Errorf("invalid policy in %q: Default policy is missing", file)
		return d
	}
	scopes := p.Transports["docker"]
	for _, s := range dockerPolicyScopes(ref) {
		if req, ok := scopes[s]; ok {
			d.Scope = s
			for _, r := range req {
				d.Types = append(d.Types, r.Type)
			}
			return d
		}
	}
	d.Scope = "default"
	for _, r := range p.Default {
		d.Types = append(d.Types, r.Type)
	}
	return d
}

// dockerPolicyScopes are the docker transport's scopes for ref, most
// specific first (PolicyConfigurationIdentity, then
// policyconfiguration.DockerReferenceNamespaces, then ""): the identity
// by digest for a digest reference, else by tag.
func dockerPolicyScopes(ref Ref) []string {
	var out []string
	if ref.Digest != "" {
		out = append(out, ref.Name()+"@"+ref.Digest)
	} else {
		out = append(out, ref.Name()+":"+ref.Tag)
	}
	name := ref.Name()
	for {
		out = append(out, name)
		i := strings.LastIndex(name, "/")
		if i == -1 {
			break
		}
		name = name[:i]
	}
	if i := strings.Index(name, ":"); i != -1 {
		name = name[:i]
	}
	for {
		dot := strings.Index(name, ".")
		if dot == -1 {
			break
		}
		name = name[dot+1:]
		out = append(out, "*."+name)
	}
	return append(out, "")
}
