package labhook

import (
	"context"

	"github.com/pullpath/pullpath/internal/crirun"
	"github.com/pullpath/pullpath/internal/lab"
	"github.com/pullpath/pullpath/internal/lab/scenario"
)

// A layout node (node.containerd, internal/lab/layout.go) runs the real
// containerd on its own config: the layout's file at its node path, in a
// mount namespace where the node's files lie at their paths, with the
// binary the scenario names (Debian's 1.6, or test/tools' containerd 2).

// layoutOptions points o at a layout node's config and binary.
func layoutOptions(ctx context.Context, env *lab.Env, o *crirun.Options) error {
	if env.ContainerdConfig == "" {
		return nil
	}
	o.ConfigFile, o.NodeRoot, o.CertsDir = env.ContainerdConfig, env.NodeRoot, ""
	if env.Containerd == scenario.Containerd2 {
		bin, err := EnsureContainerd2(ctx)
		if err != nil {
			return err
		}
		o.Containerd = bin
	}
	return nil
}

// EnsureContainerd2 finds containerd 2 (test/tools' build of
// github.com/containerd/containerd/v2/cmd/containerd, named containerd2).
func EnsureContainerd2(ctx context.Context) (string, error) {
	return ensureTool(ctx, "containerd2", "github.com/containerd/containerd/v2/cmd/containerd")
}

// chain says whether the pull goes through a mirror chain whose served-by
// host containerd's debug log tells.
func chain(env *lab.Env) bool {
	if env.CertsDir != "" {
		return true
	}
	return env.ContainerdConfig != "" && env.Scenario != nil && env.Scenario.Mirrors != nil
}

// runtimeOwnAuth says whether the node's credentials are the runtime's own
// (registry.configs auth): the kubelet then passes none through the CRI.
func runtimeOwnAuth(env *lab.Env) bool {
	return env.Scenario != nil && env.Scenario.Node.Containerd != nil && env.Scenario.Node.Containerd.Auth
}
