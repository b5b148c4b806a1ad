package deadpath

import (
	"context"
	"strings"
	"testing"
)

func TestMeasureRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{name: "no binary", cfg: Config{Rounds: 1}, want: "PullpathBin"},
		{name: "no rounds", cfg: Config{PullpathBin: "/bin/true"}, want: "Rounds 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Measure(context.Background(), tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Measure(%+v) error = %v, want one containing %q", tt.cfg, err, tt.want)
			}
		})
	}
}

func TestGistKeepsTheTail(t *testing.T) {
	long := "failed to pull and unpack image " + strings.Repeat("x", 400) + ": dial tcp 10.0.20.10:443: i/o timeout"
	got := gist(long)
	if !strings.HasSuffix(got, "i/o timeout") || len(got) >= len(long) {
		t.Errorf("gist(%d chars) = %q, want a shorter text ending in the cause", len(long), got)
	}
	if short := "no such host"; gist(short) != short {
		t.Errorf("gist(%q) = %q, want it unchanged", short, gist(short))
	}
}

func TestMarkdownRows(t *testing.T) {
	r := &Result{Rows: []Row{{Scenario: "ecr-blob-host-dropped", What: "blob host black-holed", ProbeSec: 5, RuntimeSec: 30, Ratio: 5.0 / 30, ProbeCode: "CONNECT_TIMEOUT", Message: "a | b"}}}
	md := r.Markdown()
	for _, want := range []string{"| blob host black-holed (`ecr-blob-host-dropped`) | 5.00 | CONNECT_TIMEOUT | 30.00 | 0.17 (1/6.0) |", `a \| b`} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown() lacks %q:\n%s", want, md)
		}
	}
}
