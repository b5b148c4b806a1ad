package runtimecfg

// loadCRIO reads CRI-O's configuration (crio.conf, crio.conf.d, and the
// registries.conf of containers/image it points at) into rc.Registry.
//
// Until CRI-O's reader lands (issue 37, item 3) it says so and walks the
// registry directly with CRI-O's default TLS folders, which is what CRI-O
// does on a node without registries.conf mirrors.
func loadCRIO(o RuntimeOptions, rc *RuntimeConfig) error {
	if rc.ConfigFile != "" {
		rc.Files = append(rc.Files, rc.ConfigFile)
	}
	rc.Rules = "cri-o (registries.conf not read yet)"
	rc.Notes = append(rc.Notes, "CRI-O's registries.conf is not read yet: the walk goes to each registry directly, with the CAs of /etc/containers/certs.d and /etc/docker/certs.d")
	rc.Registry = CertsDirs{Dirs: []string{underRoot(rc.Root, "/etc/containers/certs.d")}, DockerDir: underRoot(rc.Root, "/etc/docker/certs.d"), Root: rc.Root}
	return nil
}
