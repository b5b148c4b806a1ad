// Command probeonly runs pullpath's probe engine (internal/pull.Probe) in
// a binary that links nothing else: no cobra commands for explain or lab,
// no client-go, no cli-runtime. The throughput benchmark runs it beside
// the real `pullpath probe` to show how much of pullpath's peak RSS is the
// engine and how much is the rest of the binary.
//
//	probeonly --nameserver IP:PORT --hosts-file F --certs-dir D --docker-config F IMAGE
//
// It prints the ProbeReport as JSON and exits 0 when the verdict is ok, 2
// otherwise, 1 on bad input.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/pullpath/pullpath/bench/cpuprofile"
	"github.com/pullpath/pullpath/internal/netcheck"
	"github.com/pullpath/pullpath/internal/pull"
	"github.com/pullpath/pullpath/internal/verdict"
)

func main() {
	var o pull.Options
	ns := flag.String("nameserver", "", "DNS server IP:PORT")
	flag.StringVar(&o.Net.HostsFile, "hosts-file", "/etc/hosts", "the node's hosts file")
	flag.StringVar(&o.Net.ResolvConf, "resolv-conf", "/etc/resolv.conf", "the node's resolv.conf")
	flag.StringVar(&o.CertsDir, "certs-dir", "/etc/containerd/certs.d", "containerd certs.d")
	flag.StringVar(&o.DockerCertsDir, "docker-certs-dir", "/etc/docker/certs.d", "docker certs.d")
	flag.StringVar(&o.DockerConfig, "docker-config", "", "docker config.json")
	flag.StringVar(&o.Platform, "platform", "linux/amd64", "platform")
	flag.IntVar(&o.Concurrency, "concurrency", 3, "blobs at once")
	timeout := flag.Duration("timeout", 15*time.Minute, "budget of the whole probe")
	profile := flag.String("cpuprofile", "", "write a CPU profile of the whole run to this file")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "probeonly: want exactly one IMAGE argument")
		os.Exit(1)
	}
	o.Image = flag.Arg(0)
	o.Node = "bench-node"
	if *ns != "" {
		o.Net.Nameservers = []string{*ns}
	}
	o.Net = withDefaults(o.Net)
	stopProfile, err := cpuprofile.Start(*profile)
	if err != nil {
		fmt.Fprintln(os.Stderr, "probeonly:", err)
		os.Exit(1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	rep, err := pull.Probe(ctx, o)
	if perr := stopProfile(); perr != nil && err == nil {
		err = perr
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "probeonly:", err)
		os.Exit(1)
	}
	if err := json.NewEncoder(os.Stdout).Encode(rep); err != nil {
		fmt.Fprintln(os.Stderr, "probeonly:", err)
		os.Exit(1)
	}
	if rep.Verdict.Code != verdict.OK {
		os.Exit(2)
	}
}

// withDefaults mirrors pullpath probe's flag defaults.
func withDefaults(c netcheck.Config) netcheck.Config {
	if c.DNSTimeout == 0 {
		c.DNSTimeout = 2 * time.Second
	}
	if c.ConnectTimeout == 0 {
		c.ConnectTimeout = 5 * time.Second
	}
	if c.TLSTimeout == 0 {
		c.TLSTimeout = 5 * time.Second
	}
	return c
}
