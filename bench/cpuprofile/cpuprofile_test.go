package cpuprofile

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStartWritesAProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	stop, err := Start(path)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	if err := stop(); err != nil {
		t.Fatalf("stop: %v", err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// A profile is gzipped protobuf; a CPU profile's string table names
	// its sample types and units ("samples"/"count", "cpu"/"nanoseconds").
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s is not gzipped: %v", path, err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if !strings.Contains(string(b), "samples") || !strings.Contains(string(b), "nanoseconds") {
		t.Fatalf("%s (%d bytes unzipped) does not hold a CPU profile's sample types", path, len(b))
	}
}

func TestStartEmptyPathDoesNothing(t *testing.T) {
	stop, err := Start("")
	if err != nil || stop() != nil {
		t.Fatalf("Start(\"\"): %v", err)
	}
}

func TestStartNamesTheBadPath(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "missing", "cpu.pprof")
	_, err := Start(bad)
	if err == nil || !strings.Contains(err.Error(), "--cpuprofile") || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("Start(%q) = %v, want an error naming --cpuprofile and the path", bad, err)
	}
}
