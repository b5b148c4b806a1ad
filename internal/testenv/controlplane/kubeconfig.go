package controlplane

import (
	"fmt"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// kubeconfigContext names the cluster, user and context in the written
// kubeconfig.
const kubeconfigContext = "pullpath-test"

// writeKubeconfig writes a kubeconfig for the admin token that trusts the
// test CA.
func writeKubeconfig(path, server string, creds *credentials) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[kubeconfigContext] = &clientcmdapi.Cluster{
		Server:                   server,
		CertificateAuthorityData: creds.caPEM,
	}
	cfg.AuthInfos[kubeconfigContext] = &clientcmdapi.AuthInfo{Token: creds.token}
	cfg.Contexts[kubeconfigContext] = &clientcmdapi.Context{
		Cluster:   kubeconfigContext,
		AuthInfo:  kubeconfigContext,
		Namespace: "default",
	}
	cfg.CurrentContext = kubeconfigContext
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return fmt.Errorf("write kubeconfig %s: %w", path, err)
	}
	return nil
}
