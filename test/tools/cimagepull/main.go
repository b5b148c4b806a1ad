// Command cimagepull pulls an image the way CRI-O's image service does,
// with containers/image itself (go.podman.io/image/v5 at the version
// CRI-O 1.36 links): the docker transport's source (ImageReference
// NewImageSource, what copy.Image opens: the registries.conf entry with
// the longest prefix, its mirrors for this pull by digest or by tag, then
// its location, blocked registries refused, certs.d TLS, the auth file and
// the CRI request's credentials, HTTPS then HTTP for an insecure source),
// then the manifest (an index's instance for the platform) and every blob,
// each verified against its digest, into a throwaway folder.
//
// It is pullpath's reference pull for a CRI-O node in the lab
// (internal/lab/labhook, cimage.go): started with `ip netns exec NODE` beside the
// probe, it reads the node's files under --root as a node at / would
// (SystemContext.RootForImplicitAbsolutePaths: /etc/containers/registries.conf
// and registries.conf.d, /etc/containers/certs.d and /etc/docker/certs.d,
// /run/containers/0/auth.json) and prints one JSON line: the outcome,
// containers/image's own error text, every source tried and the one that
// served. The kubelet's credentials (CRI-O's DockerAuthConfig) come from
// CIMAGEPULL_USERNAME and CIMAGEPULL_PASSWORD, never argv.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/opencontainers/go-digest"
	"github.com/sirupsen/logrus"
	"go.podman.io/image/v5/docker"
	"go.podman.io/image/v5/manifest"
	"go.podman.io/image/v5/pkg/blobinfocache/none"
	"go.podman.io/image/v5/types"
)

// Result is the one line cimagepull prints.
type Result struct {
	OK         bool     `json:"ok"`
	Error      string   `json:"error,omitempty"`  // containers/image's error, as CRI-O returns it
	Tried      []string `json:"tried,omitempty"`  // every source tried, in order ("Trying to access")
	Served     string   `json:"served,omitempty"` // the host[:port] of the source that served
	Digest     string   `json:"digest,omitempty"` // the manifest pulled
	Blobs      int      `json:"blobs,omitempty"`
	Bytes      int64    `json:"bytes,omitempty"`
	CImage     string   `json:"cimage"`
	DurationMS float64  `json:"durationMs"`
}

// tries records containers/image's "Trying to access" lines (Info with
// DockerLogMirrorChoice, as CRI-O sets it).
type tries struct {
	mu   sync.Mutex
	refs []string
}

func (t *tries) Levels() []logrus.Level { return logrus.AllLevels }

func (t *tries) Fire(e *logrus.Entry) error {
	const prefix = "Trying to access "
	if strings.HasPrefix(e.Message, prefix) {
		t.mu.Lock()
		t.refs = append(t.refs, strings.Trim(strings.TrimPrefix(e.Message, prefix), `"`))
		t.mu.Unlock()
	}
	return nil
}

func main() {
	root := flag.String("root", "/", "the node's filesystem: registries.conf, certs.d and auth.json are read under it")
	authFile := flag.String("authfile", "", "CRI-O's global_auth_file, as a node path (default: containers/image's own auth files)")
	registriesConf := flag.String("registries-conf", "", "CRI-O's --registries-conf, as a node path")
	platform := flag.String("platform", "", "os/arch to pick from an index (default: this machine's)")
	out := flag.String("out", "", "folder the blobs are written to (default: a temporary one, removed)")
	timeout := flag.Duration("timeout", 2*time.Minute, "the whole pull")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: cimagepull [flags] REGISTRY/REPOSITORY[:TAG|@DIGEST]")
		os.Exit(2)
	}
	logrus.SetOutput(io.Discard)
	logrus.SetLevel(logrus.DebugLevel)
	tr := &tries{}
	logrus.AddHook(tr)

	sys := &types.SystemContext{
		RootForImplicitAbsolutePaths: *root,
		DockerLogMirrorChoice:        true,
	}
	if *authFile != "" {
		sys.AuthFilePath = filepath.Join(*root, *authFile)
	}
	if *registriesConf != "" {
		sys.SystemRegistriesConfPath = filepath.Join(*root, *registriesConf)
	}
	if u := os.Getenv("CIMAGEPULL_USERNAME"); u != "" {
		sys.DockerAuthConfig = &types.DockerAuthConfig{Username: u, Password: os.Getenv("CIMAGEPULL_PASSWORD")}
	}
	if *platform != "" {
		parts := strings.Split(*platform, "/")
		sys.OSChoice = parts[0]
		if len(parts) > 1 {
			sys.ArchitectureChoice = parts[1]
		}
		if len(parts) > 2 {
			sys.VariantChoice = parts[2]
		}
	}
	dir := *out
	if dir == "" {
		d, err := os.MkdirTemp("", "cimagepull-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "cimagepull:", err)
			os.Exit(2)
		}
		defer os.RemoveAll(d)
		dir = d
	}

	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	start := time.Now()
	res := Result{CImage: cimageVersion()}
	n, size, dg, err := pull(ctx, sys, flag.Arg(0), dir)
	res.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	tr.mu.Lock()
	res.Tried = tr.refs
	tr.mu.Unlock()
	if err != nil {
		res.Error = strings.Join(strings.Fields(err.Error()), " ")
	} else {
		res.OK, res.Blobs, res.Bytes, res.Digest = true, n, size, dg
		if len(res.Tried) > 0 {
			res.Served = hostOf(res.Tried[len(res.Tried)-1])
		}
	}
	_ = json.NewEncoder(os.Stdout).Encode(res)
}

// pull is copy.Image's source side: open the source (every mirror and the
// location in turn, until one serves the manifest), pick the instance,
// then every blob from that source. Errors carry copy.Image's prefixes.
func pull(ctx context.Context, sys *types.SystemContext, image, dir string) (int, int64, string, error) {
	ref, err := docker.ParseReference("//" + image)
	if err != nil {
		return 0, 0, "", err
	}
	src, err := ref.NewImageSource(ctx, sys)
	if err != nil {
		return 0, 0, "", fmt.Errorf("initializing source %s: %w", "docker://"+image, err)
	}
	defer src.Close()
	b, mt, err := src.GetManifest(ctx, nil)
	if err != nil {
		return 0, 0, "", fmt.Errorf("reading manifest: %w", err)
	}
	top := digest.FromBytes(b)
	if manifest.MIMETypeIsMultiImage(mt) {
		list, err := manifest.ListFromBlob(b, mt)
		if err != nil {
			return 0, 0, "", fmt.Errorf("parsing primary manifest as list: %w", err)
		}
		inst, err := list.ChooseInstance(sys)
		if err != nil {
			return 0, 0, "", fmt.Errorf("choosing an image from manifest list %s: %w", image, err)
		}
		if b, mt, err = src.GetManifest(ctx, &inst); err != nil {
			return 0, 0, "", fmt.Errorf("reading manifest %s in %s: %w", inst, image, err)
		}
	}
	m, err := manifest.FromBlob(b, mt)
	if err != nil {
		return 0, 0, "", fmt.Errorf("parsing manifest: %w", err)
	}
	blobs := []types.BlobInfo{m.ConfigInfo()}
	for _, l := range m.LayerInfos() {
		blobs = append(blobs, l.BlobInfo)
	}
	var total int64
	for i, bi := range blobs {
		what := "copying config"
		if i > 0 {
			what = fmt.Sprintf("copying layer %d", i)
		}
		n, err := fetch(ctx, src, bi, filepath.Join(dir, bi.Digest.Encoded()))
		if err != nil {
			return 0, 0, "", fmt.Errorf("%s: %w", what, err)
		}
		total += n
	}
	return len(blobs), total, top.String(), nil
}

// fetch reads one blob into file, verifying its digest as copy does.
func fetch(ctx context.Context, src types.ImageSource, bi types.BlobInfo, file string) (int64, error) {
	rc, _, err := src.GetBlob(ctx, bi, none.NoCache)
	if err != nil {
		return 0, fmt.Errorf("reading blob %s: %w", bi.Digest, err)
	}
	defer rc.Close()
	f, err := os.Create(file)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	v := bi.Digest.Verifier()
	n, err := io.Copy(io.MultiWriter(f, v), rc)
	if err != nil {
		return n, fmt.Errorf("reading blob %s: %w", bi.Digest, err)
	}
	if !v.Verified() {
		return n, errors.New("Digest did not match, expected " + bi.Digest.String())
	}
	return n, nil
}

func hostOf(ref string) string {
	h, _, _ := strings.Cut(ref, "/")
	return h
}

// cimageVersion is the containers/image version this program links.
func cimageVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == "go.podman.io/image/v5" {
				return d.Version
			}
		}
	}
	return "unknown"
}
