// Command ggcrpull is the benchmarks' peer: a full pull with
// go-containerregistry's remote package (the library under crane), reading
// the config and every layer to io.Discard through ggcr's own digest and
// size verification, Jobs layers at a time.
//
// Why not the crane binary: crane resolves through the system resolver and
// has no flag for another nameserver, and ggcr v0.22 refuses redirects to
// private IP literals, so the lab's names (registry.lab.test, blob.lab.test)
// must resolve through the lab's DNS. This peer gives ggcr's transport a
// DialContext that resolves through --nameserver and trusts --ca-file;
// everything above the dialer (ping, bearer token, manifest, redirects,
// verification) is ggcr's, as in `crane pull`. It also skips writing a
// tarball, which crane would do even to /dev/null.
//
//	ggcrpull --nameserver 127.0.0.53:5353 --ca-file ca.crt --docker-config config.json IMAGE
//
// It prints one JSON object (bytes, seconds, layers) and exits 0, or prints
// the error and exits 1.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/pullpath/pullpath/bench/cpuprofile"
)

// Result is what ggcrpull prints.
type Result struct {
	Image       string  `json:"image"`
	Layers      int     `json:"layers"`
	Bytes       int64   `json:"bytes"`       // config + layers, as read and verified
	Seconds     float64 `json:"seconds"`     // whole pull: ping, token, manifest, blobs
	BlobSeconds float64 `json:"blobSeconds"` // config and layers only
	MBps        float64 `json:"mbps"`        // Bytes / BlobSeconds
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "ggcrpull:", err)
		os.Exit(1)
	}
}

func run() (err error) {
	ns := flag.String("nameserver", "", "resolve every host through this DNS server, IP:PORT (required)")
	caFile := flag.String("ca-file", "", "PEM CA to trust (required)")
	dockerConfig := flag.String("docker-config", "", "docker config.json with the registry's credentials (default: anonymous)")
	platform := flag.String("platform", "linux/amd64", "platform to pull from an index")
	jobs := flag.Int("jobs", 3, "layers read at once")
	timeout := flag.Duration("timeout", 10*time.Minute, "budget of the whole pull")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the whole pull to this file")
	flag.Parse()
	if flag.NArg() != 1 {
		return fmt.Errorf("want exactly one IMAGE argument, got %d", flag.NArg())
	}
	if *ns == "" || *caFile == "" {
		return errors.New("--nameserver and --ca-file are required")
	}
	if *jobs < 1 || *jobs > 32 {
		return fmt.Errorf("--jobs %d: want 1 to 32", *jobs)
	}
	ref, err := name.ParseReference(flag.Arg(0))
	if err != nil {
		return fmt.Errorf("image %q: %v", flag.Arg(0), err)
	}
	plat, err := v1.ParsePlatform(*platform)
	if err != nil {
		return fmt.Errorf("--platform %q: %v", *platform, err)
	}
	tr, err := transport(*ns, *caFile)
	if err != nil {
		return err
	}
	var kc authn.Keychain = authn.DefaultKeychain
	if *dockerConfig != "" {
		// DefaultKeychain reads $DOCKER_CONFIG/config.json.
		if filepath.Base(*dockerConfig) != "config.json" {
			return fmt.Errorf("--docker-config %q: want a file named config.json", *dockerConfig)
		}
		os.Setenv("DOCKER_CONFIG", filepath.Dir(*dockerConfig))
	} else {
		kc = authn.NewMultiKeychain()
	}
	stopProfile, err := cpuprofile.Start(*profile)
	if err != nil {
		return err
	}
	defer func() {
		if perr := stopProfile(); perr != nil && err == nil {
			err = perr
		}
	}()

	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	start := time.Now()
	img, err := remote.Image(ref, remote.WithContext(ctx), remote.WithTransport(tr), remote.WithAuthFromKeychain(kc), remote.WithPlatform(*plat))
	if err != nil {
		return fmt.Errorf("image %s: %v", ref, err)
	}
	layers, err := img.Layers()
	if err != nil {
		return fmt.Errorf("layers of %s: %v", ref, err)
	}
	blobStart := time.Now()
	cfg, err := img.RawConfigFile() // fetched and verified against the manifest
	if err != nil {
		return fmt.Errorf("config of %s: %v", ref, err)
	}
	total := int64(len(cfg))

	var mu sync.Mutex
	var firstErr error
	sem := make(chan struct{}, *jobs)
	var wg sync.WaitGroup
	for i, l := range layers {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			n, err := readLayer(l)
			mu.Lock()
			defer mu.Unlock()
			total += n
			if err != nil && firstErr == nil {
				firstErr = fmt.Errorf("layer %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	end := time.Now()
	res := Result{Image: ref.String(), Layers: len(layers), Bytes: total, Seconds: end.Sub(start).Seconds(), BlobSeconds: end.Sub(blobStart).Seconds()}
	if res.BlobSeconds > 0 {
		res.MBps = float64(total) / 1e6 / res.BlobSeconds
	}
	return json.NewEncoder(os.Stdout).Encode(res)
}

// readLayer reads the layer as stored (Compressed: the blob's own bytes)
// through ggcr's verifying reader: a wrong size or digest fails at EOF.
func readLayer(l v1.Layer) (int64, error) {
	rc, err := l.Compressed()
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	return io.Copy(io.Discard, rc)
}

// transport is remote.DefaultTransport with a dialer that resolves through
// the lab's nameserver and TLS that trusts the lab CA.
func transport(nameserver, caFile string) (http.RoundTripper, error) {
	pem, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("--ca-file: %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--ca-file %s: no PEM certificate in it", caFile)
	}
	if _, _, err := net.SplitHostPort(nameserver); err != nil {
		return nil, fmt.Errorf("--nameserver %q: want IP:PORT", nameserver)
	}
	d := &net.Dialer{Timeout: 5 * time.Second}
	res := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return d.DialContext(ctx, network, nameserver)
	}}
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Resolver: res}
	t := remote.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = dialer.DialContext
	t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return t, nil
}
