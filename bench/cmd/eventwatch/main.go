// Command eventwatch is the peer of `pullpath monitor events` in
// bench/cmd/eventsbench: what any client-go tool that follows the same
// Events pays, and nothing more. A SharedInformer (the standard way a
// controller or an event exporter watches) on the Warning Events of Pods,
// protobuf, counting the objects added after its first sync; it keeps every
// Event in its cache, as informers do.
//
//	eventwatch --kubeconfig FILE --listen 127.0.0.1:PORT
//
// GET /count answers the number added since the sync; /readyz is ok once
// synced. It runs until SIGTERM.
package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig file")
	listen := flag.String("listen", "127.0.0.1:0", "address of /count and /readyz")
	flag.Parse()
	if err := run(*kubeconfig, *listen); err != nil {
		fmt.Fprintln(os.Stderr, "eventwatch:", err)
		os.Exit(1)
	}
}

func run(kubeconfig, listen string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = 50, 300
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	sel := fields.Set{"involvedObject.kind": "Pod", "type": corev1.EventTypeWarning}.AsSelector().String()
	f := informers.NewSharedInformerFactoryWithOptions(c, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = sel }))
	inf := f.Core().V1().Events().Informer()
	var synced atomic.Bool
	var added atomic.Int64
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(any) {
		if synced.Load() {
			added.Add(1)
		}
	}}); err != nil {
		return err
	}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return fmt.Errorf("cache did not sync")
	}
	synced.Store(true)
	http.HandleFunc("/count", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, added.Load()) })
	http.HandleFunc("/readyz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	srv := &http.Server{Addr: listen}
	go func() { <-ctx.Done(); _ = srv.Close() }()
	if err := srv.ListenAndServe(); err != http.ErrServerClosed {
		return err
	}
	f.Shutdown()
	return nil
}
