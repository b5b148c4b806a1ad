package main

import (
	"context"
	"strings"
	"testing"
)

func TestParseSizes(t *testing.T) {
	tests := []struct {
		in      string
		want    []int64
		wantErr string
	}{
		{in: "", want: nil},
		{in: "256, 64", want: []int64{256 << 20, 64 << 20}},
		{in: "0", wantErr: `"0" is not a size`},
		{in: "12x", wantErr: `"12x" is not a size`},
		{in: "5000", wantErr: `"5000" is not a size`},
	}
	for _, tt := range tests {
		got, err := parseSizes(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseSizes(%q) error = %v, want one containing %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || len(got) != len(tt.want) {
			t.Errorf("parseSizes(%q) = %v, %v, want %v", tt.in, got, err, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("parseSizes(%q)[%d] = %d, want %d", tt.in, i, got[i], tt.want[i])
			}
		}
	}
}

func TestRunRejectsBadCommands(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{args: nil, want: "usage"},
		{args: []string{"speed"}, want: `unknown benchmark "speed"`},
		{args: []string{"throughput", "-rounds", "0"}, want: "-rounds 0"},
	}
	for _, tt := range tests {
		err := run(context.Background(), tt.args)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("run(%q) error = %v, want one containing %q", tt.args, err, tt.want)
		}
	}
}
