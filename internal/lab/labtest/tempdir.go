package labtest

import (
	"os"
	"sync"
)

// What a test binary builds once and shares between its tests (images,
// a pullpath binary: 145 MB each) lives in folders no single test owns,
// so t.TempDir cannot remove them. TempDir makes such a folder and Main
// removes it when the tests end: a day of test runs left 80 of them
// (about 10 GB) and filled the disk.
var (
	tempMu   sync.Mutex
	tempDirs []string
)

// TempDir is os.MkdirTemp("", pattern), removed when Main's tests end.
func TempDir(pattern string) (string, error) {
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		return "", err
	}
	tempMu.Lock()
	tempDirs = append(tempDirs, dir)
	tempMu.Unlock()
	return dir, nil
}

func removeTempDirs() {
	tempMu.Lock()
	defer tempMu.Unlock()
	for _, d := range tempDirs {
		os.RemoveAll(d)
	}
	tempDirs = nil
}
