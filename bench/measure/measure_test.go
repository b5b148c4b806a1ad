package measure

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pullpath/pullpath/internal/testenv"
)

func TestParseTime(t *testing.T) {
	tests := []struct {
		file    string
		want    Usage
		wantErr string
	}{
		{file: "valid-time-ok.txt", want: Usage{PeakRSSKB: 48812, UserSec: 1.90, SysSec: 0.42}},
		{file: "valid-time-exit3.txt", want: Usage{PeakRSSKB: 1820, ExitCode: 3}},
		{file: "invalid-time-killed.txt", wantErr: "no \"pullbench-time\" line"},
		{file: "invalid-time-rss.txt", wantErr: "max RSS \"lots\""},
		{file: "invalid-time-short.txt", wantErr: "has 3 fields"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseTime(raw)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseTime(%s) error = %v, want one containing %q", tt.file, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseTime(%s) error: %v", tt.file, err)
			}
			if got != tt.want {
				t.Errorf("ParseTime(%s) = %+v, want %+v", tt.file, got, tt.want)
			}
		})
	}
}

func TestRunReportsExitAndRSS(t *testing.T) {
	if _, err := os.Stat(TimeBinary); err != nil {
		testenv.Unavailable(t, fmt.Sprintf("%s missing: %v", TimeBinary, err))
	}
	tests := []struct {
		name     string
		argv     []string
		wantCode int
		wantOut  string
	}{
		{name: "success", argv: []string{"/bin/sh", "-c", "echo hello"}, wantOut: "hello\n"},
		{name: "non-zero exit is data, not an error", argv: []string{"/bin/sh", "-c", "exit 3"}, wantCode: 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Run(context.Background(), Cmd{Argv: tt.argv, Timeout: 30 * time.Second})
			if err != nil {
				t.Fatalf("Run(%q) error: %v", tt.argv, err)
			}
			if res.ExitCode != tt.wantCode {
				t.Errorf("Run(%q) exit = %d, want %d", tt.argv, res.ExitCode, tt.wantCode)
			}
			if string(res.Stdout) != tt.wantOut {
				t.Errorf("Run(%q) stdout = %q, want %q", tt.argv, res.Stdout, tt.wantOut)
			}
			if res.PeakRSSKB <= 0 {
				t.Errorf("Run(%q) peak RSS = %d KiB, want > 0", tt.argv, res.PeakRSSKB)
			}
		})
	}
}

func TestRunTimeoutIsAnError(t *testing.T) {
	if _, err := os.Stat(TimeBinary); err != nil {
		t.Skipf("%s missing: %v", TimeBinary, err)
	}
	_, err := Run(context.Background(), Cmd{Argv: []string{"/bin/sleep", "30"}, Timeout: 200 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "budget") {
		t.Fatalf("Run(sleep 30) with 200ms budget error = %v, want a budget error", err)
	}
}

func TestRunRefusesNoTimeout(t *testing.T) {
	if _, err := Run(context.Background(), Cmd{Argv: []string{"/bin/true"}}); err == nil {
		t.Fatal("Run without Timeout error = nil, want an error")
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		in   []float64
		want float64
	}{
		{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5},
	}
	for _, tt := range tests {
		if got := Median(tt.in); got != tt.want {
			t.Errorf("Median(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestSHA256RateRejectsBadInput(t *testing.T) {
	if _, err := SHA256Rate(0, 1); err == nil {
		t.Error("SHA256Rate(0, 1) error = nil, want an error")
	}
	r, err := SHA256Rate(1<<20, 1)
	if err != nil || r <= 0 {
		t.Errorf("SHA256Rate(1MiB, 1) = %v, %v, want a positive rate", r, err)
	}
}

func TestRunSamplesMemory(t *testing.T) {
	if _, err := os.Stat(TimeBinary); err != nil {
		t.Skipf("%s missing: %v", TimeBinary, err)
	}
	res, err := Run(context.Background(), Cmd{Argv: []string{"/bin/sleep", "0.3"}, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("Run(sleep 0.3) error: %v", err)
	}
	if res.PeakAnonKB <= 0 || res.PeakFileKB <= 0 {
		t.Errorf("Run(sleep 0.3) sampled anon %d KiB, file %d KiB, want both > 0", res.PeakAnonKB, res.PeakFileKB)
	}
}
