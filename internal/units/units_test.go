package units

import (
	"testing"
	"time"
)

func TestBytes(t *testing.T) {
	for _, tt := range []struct {
		n    int64
		want string
	}{
		{0, "0 B"},
		{1023, "1023 B"},
		{1024, "1.0 KiB"},
		{789811, "771.3 KiB"},
		{12 << 20, "12.0 MiB"},
		{1 << 30, "1.00 GiB"},
	} {
		if got := Bytes(tt.n); got != tt.want {
			t.Errorf("Bytes(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestMS(t *testing.T) {
	for d, want := range map[time.Duration]float64{0: 0, 1500 * time.Microsecond: 1.5, 2 * time.Second: 2000, 999 * time.Nanosecond: 0} {
		if got := MS(d); got != want {
			t.Errorf("MS(%v) = %v, want %v", d, got, want)
		}
	}
}

func TestOneLineAndClip(t *testing.T) {
	if got, want := OneLine("  a\n\tb  c\r\n"), "a b c"; got != want {
		t.Errorf("OneLine = %q, want %q", got, want)
	}
	if got, want := Clip("ab\ncdef", 4), "ab c..."; got != want {
		t.Errorf("Clip(4) = %q, want %q", got, want)
	}
	if got, want := Clip("ab", 4), "ab"; got != want {
		t.Errorf("Clip(short) = %q, want %q", got, want)
	}
}
