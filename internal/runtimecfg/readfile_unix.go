//go:build unix

package runtimecfg

import (
	"io/fs"
	"syscall"
)

// readConfigFile reads a whole configuration file with plain system calls:
// os.ReadFile also sets the file non-blocking and offers it to the
// runtime's poller, which is half of its cost on a node with hundreds of
// small drop-ins (BenchmarkRuntimeConfigCRIO). Errors are *fs.PathError,
// as os.ReadFile's.
func readConfigFile(name string) ([]byte, error) {
	var fd int
	var err error
	for {
		fd, err = syscall.Open(name, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	defer syscall.Close(fd)
	size := 512
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) == nil && st.Size > 0 && st.Size < 1<<30 {
		size = int(st.Size) + 1 // one more byte to see the end in one read
	}
	b := make([]byte, 0, size)
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := syscall.Read(fd, b[len(b):cap(b)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: name, Err: err}
		}
		if n == 0 {
			return b, nil
		}
		b = b[:len(b)+n]
	}
}
