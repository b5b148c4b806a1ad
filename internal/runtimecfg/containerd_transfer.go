package runtimecfg

import (
	"fmt"
	"strings"
)

// containerd 2.1 and later pull for the CRI through the transfer service
// (internal/cri/server/images/image_pull.go: pullImageWithTransferService
// unless use_local_image_pull), and the transfer service reads
// config_path as ONE folder (core/transfer/registry: registry.WithHostDir
// of the whole string, config.HostDirFromRoot): a list such as
// "/etc/containerd/certs.d:/etc/docker/certs.d", which is also 2.x's
// default, names no folder, and no hosts.toml applies (containerd issues
// 12415 and 12808, open as of 2.4). The CRI falls back to its local pull,
// which splits the list, when a setting the transfer service does not
// support is present (internal/cri/config CheckLocalImagePullConfigs):
// use_local_image_pull, disable_snapshot_annotations = false,
// discard_unpacked_layers, registry.mirrors, registry.configs,
// registry.auths, max_concurrent_downloads other than 3,
// image_pull_with_sync_fs. 2.0 has no transfer pull.

// pullMode is "transfer" or "local" for a containerd 2.x config, with what
// decided it.
func (c *ctrdConfig) pullMode(rc *RuntimeConfig, reg *ctrdRegistry) (mode, why string) {
	if c.major != 2 {
		return "local", "containerd 1.x"
	}
	if strings.HasPrefix(rc.Version, "2.0.") {
		return "local", "containerd 2.0 has no transfer pull"
	}
	images, _ := dig(c.values, "plugins", criImagesSection).(map[string]any)
	at := func(k string) string { return c.atNearest("plugins", criImagesSection, k) }
	if v, _ := images["use_local_image_pull"].(bool); v {
		return "local", "use_local_image_pull = true (" + at("use_local_image_pull") + ")"
	}
	if v, ok := images["disable_snapshot_annotations"].(bool); ok && !v {
		return "local", "disable_snapshot_annotations = false (" + at("disable_snapshot_annotations") + ")"
	}
	if v, _ := images["discard_unpacked_layers"].(bool); v {
		return "local", "discard_unpacked_layers = true (" + at("discard_unpacked_layers") + ")"
	}
	if v, ok := images["max_concurrent_downloads"].(int64); ok && v != 3 {
		return "local", fmt.Sprintf("max_concurrent_downloads = %d (%s)", v, at("max_concurrent_downloads"))
	}
	if v, _ := images["image_pull_with_sync_fs"].(bool); v {
		return "local", "image_pull_with_sync_fs = true (" + at("image_pull_with_sync_fs") + ")"
	}
	regm, _ := images["registry"].(map[string]any)
	for _, k := range []string{"mirrors", "configs", "auths"} {
		if m, _ := regm[k].(map[string]any); len(m) > 0 {
			return "local", "registry." + k + " is set (" + at("registry") + ")"
		}
	}
	return "transfer", "no setting the transfer service lacks (containerd 2.1 and later pull through it by default)"
}
