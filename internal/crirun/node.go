package crirun

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// nodeScript runs in the node's network namespace and a new private mount
// namespace (nsenter --net, unshare --mount): it lays the node's etc and
// var/lib over the machine's with overlayfs (the machine's files below,
// the node's above, as on a node where the distribution wrote its files;
// the overlay's work folders in WorkDir), binds the namespace's
// /etc/netns/NS files (resolv.conf, hosts) over /etc as ip netns exec
// does, then execs containerd. Everything it mounts dies with the mount
// namespace when containerd exits; nothing is written on the machine.
const nodeScript = `set -e
root=$1 work=$2 ns=$3; shift 3
for d in etc var/lib; do
  if [ -d "$root/$d" ]; then
    w="$work/ovl-$(echo "$d" | tr / -)"
    mkdir -p "$w"
    mount -t overlay overlay -o "lowerdir=/$d,upperdir=$root/$d,workdir=$w" "/$d"
  fi
done
if [ -d "/etc/netns/$ns" ]; then
  for f in /etc/netns/"$ns"/*; do
    [ -f "$f" ] && [ -e "/etc/${f##*/}" ] && mount --bind "$f" "/etc/${f##*/}"
  done
fi
exec "$@"
`

// startNode starts containerd on the node's own config (Options.ConfigFile).
func (r *Runtime) startNode(ctx context.Context, containerd string) (*Runtime, error) {
	o, l := r.o, r.l
	for _, tool := range []string{"nsenter", "unshare"} {
		if _, err := exec.LookPath(tool); err != nil {
			return nil, fmt.Errorf("crirun: %s (util-linux) not found: %w", tool, err)
		}
	}
	if err := l.prepareDirs(); err != nil {
		_ = os.RemoveAll(l.dir)
		return nil, err
	}
	argv := []string{"--net=" + filepath.Join("/run/netns", o.Netns), "--",
		"unshare", "--mount", "--propagation", "private", "--",
		"sh", "-c", nodeScript, "sh", o.NodeRoot, l.dir, o.Netns,
		containerd, "--config", o.ConfigFile, "--address", l.sock, "--root", l.root, "--state", l.state}
	if o.Debug {
		argv = append(argv, "--log-level", "debug")
	}
	return r.run(ctx, exec.Command("nsenter", argv...))
}
