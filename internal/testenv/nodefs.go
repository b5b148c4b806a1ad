package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// NodeFS writes files (node path -> content) under a fresh node root, the
// --host-root of a test node, and returns it.
func NodeFS(t testing.TB, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	WriteTree(t, root, files)
	return root
}

// WriteTree writes files (node path -> content) under root, making their
// folders.
func WriteTree(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
