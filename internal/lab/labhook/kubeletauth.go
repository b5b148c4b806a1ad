package labhook

import (
	"context"
	"fmt"

	"github.com/pullpath/pullpath/internal/crirun"
	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/runtimecfg"
)

// kubeletAuth plays the kubelet's part for the runtime's pull: it runs the
// node's credential provider plugin as the kubelet does (runtimecfg, the
// same code as the probe's) and returns the first credential the kubelet
// would pass through CRI auth. A plugin that fails or gives nothing means
// an anonymous pull (nil), as with the kubelet, which logs the failure and
// pulls without it. The error is for unreadable lab files only.
func kubeletAuth(ctx context.Context, files *lab.CredentialProviderFiles, image string) (*crirun.Auth, error) {
	cfg, err := runtimecfg.LoadCredentialProviderConfig(files.Config)
	if err != nil {
		return nil, fmt.Errorf("labhook: %v", err)
	}
	id := &runtimecfg.KubeletIdentity{Plugins: &runtimecfg.PluginRunner{Config: cfg, BinDir: files.BinDir}}
	ev, err := id.Credentials(ctx, image)
	if err != nil {
		return nil, fmt.Errorf("labhook: %v", err)
	}
	if len(ev.Credentials) == 0 {
		return nil, nil
	}
	c := ev.Credentials[0]
	return &crirun.Auth{Username: c.Username, Password: c.Password}, nil
}
