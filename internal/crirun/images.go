package crirun

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// criNamespace is the containerd namespace the CRI plugin keeps images in.
const criNamespace = "k8s.io"

// RemoveAll deletes every image of the k8s.io namespace synchronously
// (content garbage-collected), so the next pull fetches every blob again.
// It checks that no content is left.
func (r *Runtime) RemoveAll(ctx context.Context) error {
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := r.ctrCmd(cctx, "images", "ls", "-q").Output()
	if err != nil {
		return fmt.Errorf("crirun: list images: %w", exitDetail(err))
	}
	refs := strings.Fields(string(out))
	if len(refs) > 0 {
		args := append([]string{"images", "rm", "--sync"}, refs...)
		if out, err := r.ctrCmd(cctx, args...).CombinedOutput(); err != nil {
			return fmt.Errorf("crirun: remove images: %w: %s", err, lastLine(string(out)))
		}
	}
	out, err = r.ctrCmd(cctx, "content", "ls", "-q").Output()
	if err != nil {
		return fmt.Errorf("crirun: list content: %w", exitDetail(err))
	}
	if left := strings.Fields(string(out)); len(left) > 0 {
		return fmt.Errorf("crirun: %d blobs left in the content store after removing every image (first %s); the next pull would not be cold", len(left), left[0])
	}
	return nil
}

// ctrCmd is ctr against our socket in the k8s.io namespace.
func (r *Runtime) ctrCmd(ctx context.Context, args ...string) *exec.Cmd {
	full := append([]string{"--address", r.l.sock, "--namespace", criNamespace}, args...)
	cmd := exec.CommandContext(ctx, r.ctr, full...)
	cmd.Env = []string{cleanPath, "HOME=" + r.l.dir}
	cmd.Dir = r.l.dir
	cmd.WaitDelay = 2 * time.Second
	return cmd
}

func exitDetail(err error) error {
	if ee, ok := err.(*exec.ExitError); ok && len(ee.Stderr) > 0 {
		return fmt.Errorf("%w: %s", err, lastLine(string(ee.Stderr)))
	}
	return err
}
