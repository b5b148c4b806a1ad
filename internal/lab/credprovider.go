package lab

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/pullpath/pullpath/internal/lab/scenario"
)

// The lab's own kubelet credential provider plugin. It speaks the real
// protocol (credentialprovider.kubelet.k8s.io/v1: a CredentialProviderRequest
// on stdin, a CredentialProviderResponse on stdout), so the probe runs it
// exactly as the kubelet runs ecr-credential-provider or
// acr-credential-provider: the binary is pullpath itself, linked into the
// node's plugin directory as lab-credential-provider and run with the args
// `lab credential-provider --config FILE`.

// LabPluginName is the plugin's name in the config and its binary's name.
const LabPluginName = "lab-credential-provider"

// labPluginConfig is what the plugin reads (written by the lab): the
// scenario's node.credentialProvider for one registry.
type labPluginConfig struct {
	Registry string `json:"registry"` // host[:port] it answers for
	scenario.CredentialProvider
}

// CredentialProviderFiles are the node's kubelet credential provider files.
type CredentialProviderFiles struct {
	Config, BinDir, PluginConfig string
}

// credentialProviderFiles writes the node's CredentialProviderConfig, the
// plugin's own config and the plugin binary (a link to self) under dir.
func credentialProviderFiles(dir, self, registry string, cp *scenario.CredentialProvider) (CredentialProviderFiles, error) {
	f := CredentialProviderFiles{
		Config:       filepath.Join(dir, "credential-provider-config.yaml"),
		BinDir:       filepath.Join(dir, "bin"),
		PluginConfig: filepath.Join(dir, "lab-credential-provider.json"),
	}
	if err := os.MkdirAll(f.BinDir, 0o755); err != nil {
		return f, err
	}
	b, _ := json.Marshal(labPluginConfig{Registry: registry, CredentialProvider: *cp})
	if err := os.WriteFile(f.PluginConfig, b, 0o600); err != nil {
		return f, err
	}
	bin := filepath.Join(f.BinDir, LabPluginName)
	_ = os.Remove(bin)
	if err := os.Symlink(self, bin); err != nil {
		return f, err
	}
	// matchImages as AKS and EKS write them: the registry host (with its
	// port when it has one).
	cfg := fmt.Sprintf(`apiVersion: kubelet.config.k8s.io/v1
kind: CredentialProviderConfig
providers:
  - name: %s
    matchImages:
      - %q
    defaultCacheDuration: 10m
    apiVersion: credentialprovider.kubelet.k8s.io/v1
    args: [lab, credential-provider, --config, %q]
`, LabPluginName, registry, f.PluginConfig)
	return f, os.WriteFile(f.Config, []byte(cfg), 0o644)
}

// RunCredentialProvider is the plugin: one request on in, one response on
// out. It returns an error (the caller exits 1) when it fails, after
// writing the reason to errOut.
func RunCredentialProvider(configFile string, in io.Reader, out, errOut io.Writer) error {
	b, err := os.ReadFile(configFile)
	if err != nil {
		return fmt.Errorf("lab credential provider: %v", err)
	}
	var cfg labPluginConfig
	if err := json.Unmarshal(b, &cfg); err != nil {
		return fmt.Errorf("lab credential provider: config %s: %v", configFile, err)
	}
	var req struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Image      string `json:"image"`
	}
	if err := json.NewDecoder(bufio.NewReader(io.LimitReader(in, 1<<20))).Decode(&req); err != nil {
		return fmt.Errorf("lab credential provider: stdin is not a CredentialProviderRequest: %v", err)
	}
	if req.Kind != "CredentialProviderRequest" || !strings.HasPrefix(req.APIVersion, "credentialprovider.kubelet.k8s.io/") || req.Image == "" {
		return fmt.Errorf("lab credential provider: got kind %q apiVersion %q image %q, want a CredentialProviderRequest", req.Kind, req.APIVersion, req.Image)
	}
	if cfg.Fail != "" {
		fmt.Fprintln(errOut, cfg.Fail)
		return errors.New("lab credential provider: " + cfg.Fail)
	}
	auth := map[string]any{}
	if strings.SplitN(req.Image, "/", 2)[0] == cfg.Registry {
		auth[cfg.Registry] = map[string]string{"username": cfg.Username, "password": cfg.Password}
	}
	return json.NewEncoder(out).Encode(map[string]any{
		"apiVersion":    req.APIVersion,
		"kind":          "CredentialProviderResponse",
		"cacheKeyType":  "Registry",
		"cacheDuration": "5m",
		"auth":          auth,
	})
}

// CredentialProviderFiles writes (once) the node's kubelet credential
// provider files for the scenario's node.credentialProvider, and returns
// them; nil when the node has none.
func (e *Env) CredentialProviderFiles() (*CredentialProviderFiles, error) {
	if e.Scenario == nil || e.Scenario.Node.CredentialProvider == nil {
		return nil, nil
	}
	if e.credProvider != nil {
		return e.credProvider, nil
	}
	if e.Self == "" {
		return nil, errors.New("lab: no pullpath binary to run as the credential provider plugin")
	}
	f, err := credentialProviderFiles(filepath.Join(e.RunDir, "node", "credential-provider"), e.Self, e.Scenario.RegistryKey(), e.Scenario.Node.CredentialProvider)
	if err != nil {
		return nil, fmt.Errorf("lab: credential provider files: %v", err)
	}
	e.credProvider = &f
	return e.credProvider, nil
}

// withoutFlag drops "--name VALUE" from argv.
func withoutFlag(argv []string, name string) []string {
	out := argv[:0:0]
	for i := 0; i < len(argv); i++ {
		if argv[i] == name && i+1 < len(argv) {
			i++
			continue
		}
		out = append(out, argv[i])
	}
	return out
}
