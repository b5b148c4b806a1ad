package cli

import (
	"fmt"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// kubeClient is a clientset from kubectl's connection flags (--kubeconfig,
// --context, -n, --token, --as, ...) and the namespace they name; explicit
// is true when -n or the context names it.
//
// It takes kubectl's client rate limits (50 requests/s, burst 300) unless
// the kubeconfig sets its own: client-go's default (5/s, burst 10) turns
// the ~200 paged Lists of a 5,000-node cluster into 40 s of waiting.
func kubeClient(loading *clientcmd.ClientConfigLoadingRules, overrides *clientcmd.ConfigOverrides) (c kubernetes.Interface, ns string, explicit bool, err error) {
	cc, cfg, err := kubeConfig(loading, overrides)
	if err != nil {
		return nil, "", false, err
	}
	if c, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, "", false, fmt.Errorf("kubernetes client: %v", oneLineErr(err))
	}
	if ns, explicit, err = cc.Namespace(); err != nil {
		return nil, "", false, fmt.Errorf("namespace: %v", oneLineErr(err))
	}
	return c, ns, explicit, nil
}

// kubeConfig is the client configuration kubeClient builds on, with
// kubectl's rate limits; in a Pod without a kubeconfig it is the
// in-cluster one (the service account's token and CA).
func kubeConfig(loading *clientcmd.ClientConfigLoadingRules, overrides *clientcmd.ConfigOverrides) (clientcmd.ClientConfig, *rest.Config, error) {
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(loading, overrides)
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, nil, fmt.Errorf("kubeconfig: %v", oneLineErr(err))
	}
	if cfg.QPS == 0 {
		cfg.QPS, cfg.Burst = 50, 300
	}
	return cc, cfg, nil
}
