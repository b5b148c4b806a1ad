package runtimecfg

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v3"

	"github.com/pullpath/pullpath/internal/units"
	"github.com/pullpath/pullpath/internal/verdict"
)

// The kubelet's credential provider configuration
// (--image-credential-provider-config, kubelet.config.k8s.io
// CredentialProviderConfig), read as the kubelet reads it
// (k8s.io/kubernetes pkg/credentialprovider/plugin/config.go): a file, or a
// directory whose *.json, *.yaml and *.yml files are merged in lexical
// order; every provider validated the same way. The types are local
// structs with the API's JSON field names (k8s.io/kubelet's would link
// apimachinery into the node side).

// Config API versions the kubelet accepts, and the plugin protocol
// versions a provider may speak.
var (
	credentialProviderConfigVersions = []string{"kubelet.config.k8s.io/v1", "kubelet.config.k8s.io/v1beta1", "kubelet.config.k8s.io/v1alpha1"}
	credentialProviderAPIVersions    = []string{"credentialprovider.kubelet.k8s.io/v1", "credentialprovider.kubelet.k8s.io/v1beta1", "credentialprovider.kubelet.k8s.io/v1alpha1"}
)

// CredentialProviderConfig is the kubelet's CredentialProviderConfig.
type CredentialProviderConfig struct {
	APIVersion string               `json:"apiVersion"`
	Kind       string               `json:"kind"`
	Providers  []CredentialProvider `json:"providers"`
	// Files are the files read, in order (not part of the API).
	Files []string `json:"-"`
}

// CredentialProvider is one exec plugin of the config.
type CredentialProvider struct {
	Name                 string          `json:"name"`
	MatchImages          []string        `json:"matchImages"`
	DefaultCacheDuration *string         `json:"defaultCacheDuration"` // a Go duration ("12h"), as metav1.Duration
	APIVersion           string          `json:"apiVersion"`
	Args                 []string        `json:"args,omitempty"`
	Env                  []ExecEnvVar    `json:"env,omitempty"`
	TokenAttributes      json.RawMessage `json:"tokenAttributes,omitempty"`

	defaultCache time.Duration
}

// ExecEnvVar is an environment variable of a plugin. Values are secrets
// as far as pullpath is concerned (AKS passes a client secret this way).
type ExecEnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// DefaultCache is the provider's defaultCacheDuration.
func (p CredentialProvider) DefaultCache() time.Duration { return p.defaultCache }

// Matches reports whether the provider runs for image (a repository as
// KubeletImage returns it).
func (p CredentialProvider) Matches(image string) bool {
	for _, m := range p.MatchImages {
		if ok, _ := URLsMatchStr(m, image); ok {
			return true
		}
	}
	return false
}

// ECRDualStackGaps names the providers that would run for image under its
// IPv4-only ECR name but do not run for it as given: image is on ECR's
// dual-stack name (ACCOUNT.dkr-ecr.REGION.on.aws) and their matchImages
// lack a pattern for it (*.dkr-ecr.*.on.aws), so the kubelet pulls it with
// no credentials from them. Empty when image is not on a dual-stack name
// or some provider matches it.
func (c *CredentialProviderConfig) ECRDualStackGaps(image string) []string {
	if c == nil {
		return nil
	}
	registry, rest, _ := strings.Cut(image, "/")
	v4 := verdict.ECRIPv4Name(registry)
	if v4 == "" {
		return nil
	}
	var gaps []string
	for _, p := range c.Providers {
		if p.Matches(image) {
			return nil
		}
		if p.Matches(v4 + "/" + rest) {
			gaps = append(gaps, p.Name)
		}
	}
	return gaps
}

// LoadCredentialProviderConfig reads a CredentialProviderConfig file or
// directory. Every error is one line naming the file and what was expected.
func LoadCredentialProviderConfig(path string) (*CredentialProviderConfig, error) {
	if path == "" {
		return nil, errors.New("credential provider config: the path is empty")
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("credential provider config %s: %v", path, unwrapPathError(err))
	}
	var files []string
	if fi.IsDir() {
		entries, err := os.ReadDir(path)
		if err != nil {
			return nil, fmt.Errorf("credential provider config %s: %v", path, unwrapPathError(err))
		}
		for _, e := range entries {
			switch filepath.Ext(e.Name()) {
			case ".json", ".yaml", ".yml":
				if !e.IsDir() {
					files = append(files, filepath.Join(path, e.Name()))
				}
			}
		}
		sort.Strings(files)
		if len(files) == 0 {
			return nil, fmt.Errorf("credential provider config %s: no *.json, *.yaml or *.yml file in the directory", path)
		}
	} else {
		files = []string{path}
	}
	merged := &CredentialProviderConfig{Files: files}
	seen := map[string]string{}
	for _, f := range files {
		c, err := readCredentialProviderFile(f)
		if err != nil {
			return nil, err
		}
		merged.APIVersion, merged.Kind = c.APIVersion, c.Kind
		for _, p := range c.Providers {
			if prev, dup := seen[p.Name]; dup {
				return nil, fmt.Errorf("credential provider config %s: provider %q is also defined in %s", f, p.Name, prev)
			}
			seen[p.Name] = f
			merged.Providers = append(merged.Providers, p)
		}
	}
	return merged, nil
}

// maxConfigFile bounds what is read of one config file.
const maxConfigFile = 1 << 20

func readCredentialProviderFile(path string) (*CredentialProviderConfig, error) {
	fail := func(format string, a ...any) error {
		return fmt.Errorf("credential provider config %s: %s", path, fmt.Sprintf(format, a...))
	}
	b, err := readBounded(path, maxConfigFile)
	if err != nil {
		return nil, fail("%v", err)
	}
	j, err := yamlOrJSON(b)
	if err != nil {
		return nil, fail("%v (want a CredentialProviderConfig in YAML or JSON)", err)
	}
	var c CredentialProviderConfig
	dec := json.NewDecoder(bytes.NewReader(j))
	if err := dec.Decode(&c); err != nil {
		return nil, fail("%v (want a CredentialProviderConfig)", jsonReason(err))
	}
	if c.Kind != "CredentialProviderConfig" {
		return nil, fail("kind %q, want CredentialProviderConfig", c.Kind)
	}
	if !slices.Contains(credentialProviderConfigVersions, c.APIVersion) {
		return nil, fail("apiVersion %q, want one of %s", c.APIVersion, strings.Join(credentialProviderConfigVersions, ", "))
	}
	if len(c.Providers) == 0 {
		return nil, fail("no providers (want at least one)")
	}
	for i := range c.Providers {
		if err := c.Providers[i].validate(); err != nil {
			return nil, fail("providers[%d]: %v", i, err)
		}
	}
	return &c, nil
}

// validate is the kubelet's validateCredentialProviderConfig for one provider.
func (p *CredentialProvider) validate() error {
	switch {
	case p.Name == "":
		return errors.New("name is empty")
	case strings.Contains(p.Name, "/"), strings.Contains(p.Name, " "), p.Name == ".", p.Name == "..":
		return fmt.Errorf("name %q: a plugin name cannot contain '/' or spaces, or be '.' or '..'", p.Name)
	case p.APIVersion == "":
		return fmt.Errorf("provider %q: apiVersion is empty (want one of %s)", p.Name, strings.Join(credentialProviderAPIVersions, ", "))
	case !slices.Contains(credentialProviderAPIVersions, p.APIVersion):
		return fmt.Errorf("provider %q: apiVersion %q, want one of %s", p.Name, p.APIVersion, strings.Join(credentialProviderAPIVersions, ", "))
	case len(p.MatchImages) == 0:
		return fmt.Errorf("provider %q: matchImages is empty (want at least one pattern such as *.dkr.ecr.*.amazonaws.com)", p.Name)
	case p.DefaultCacheDuration == nil:
		return fmt.Errorf("provider %q: defaultCacheDuration is missing (want a duration such as 12h)", p.Name)
	}
	for _, m := range p.MatchImages {
		if _, err := ParseSchemelessURL(m); err != nil {
			return fmt.Errorf("provider %q: matchImages %q is not a valid pattern: %v", p.Name, m, unwrapURLError(err))
		}
		if _, err := URLsMatchStr(m, "x"); err != nil {
			return fmt.Errorf("provider %q: matchImages %q is not a valid glob: %v", p.Name, m, err)
		}
	}
	d, err := time.ParseDuration(*p.DefaultCacheDuration)
	if err != nil || d < 0 {
		return fmt.Errorf("provider %q: defaultCacheDuration %q, want a duration >= 0 such as 12h", p.Name, *p.DefaultCacheDuration)
	}
	p.defaultCache = d
	return nil
}

// yamlOrJSON turns a YAML or JSON document into JSON.
func yamlOrJSON(b []byte) ([]byte, error) {
	t := bytes.TrimSpace(b)
	if len(t) == 0 {
		return nil, errors.New("the file is empty")
	}
	if t[0] == '{' {
		if !json.Valid(t) {
			var v any
			return nil, errors.New(jsonReason(json.Unmarshal(t, &v)))
		}
		return t, nil
	}
	var v any
	if err := yaml.Unmarshal(t, &v); err != nil {
		return nil, fmt.Errorf("not YAML: %s", units.OneLine(err.Error()))
	}
	if _, ok := v.(map[string]any); !ok {
		return nil, errors.New("not a YAML mapping")
	}
	j, err := json.Marshal(jsonable(v))
	if err != nil {
		return nil, fmt.Errorf("not representable as JSON: %v", err)
	}
	return j, nil
}

// jsonable converts what yaml.v3 decodes into values encoding/json takes.
func jsonable(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = jsonable(e)
		}
		return x
	case map[any]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[fmt.Sprint(k)] = jsonable(e)
		}
		return m
	case []any:
		for i, e := range x {
			x[i] = jsonable(e)
		}
		return x
	}
	return v
}

func readBounded(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, unwrapPathError(err)
	}
	defer f.Close()
	var buf bytes.Buffer
	if fi, err := f.Stat(); err == nil && fi.Size() > 0 && fi.Size() <= max {
		buf.Grow(int(fi.Size()) + bytes.MinRead) // one allocation for a regular file
	}
	if _, err := buf.ReadFrom(io.LimitReader(f, max+1)); err != nil {
		return nil, unwrapPathError(err)
	}
	if int64(buf.Len()) > max {
		return nil, fmt.Errorf("larger than %d bytes", max)
	}
	return buf.Bytes(), nil
}

func unwrapPathError(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func unwrapURLError(err error) error {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) && ue.Unwrap() != nil {
		return ue.Unwrap()
	}
	return err
}
