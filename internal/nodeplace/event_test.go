package nodeplace

import (
	"testing"
	"time"
)

func TestEventTime(t *testing.T) {
	last := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	ev := last.Add(-time.Minute)
	created := last.Add(-time.Hour)
	var zero time.Time
	tests := []struct {
		name                string
		last, event, create time.Time
		want                time.Time
	}{
		{"lastTimestamp first", last, ev, created, last},
		{"eventTime without lastTimestamp", zero, ev, created, ev},
		{"creation without either", zero, zero, created, created},
		{"nothing", zero, zero, zero, zero},
	}
	for _, tt := range tests {
		if got := EventTime(tt.last, tt.event, tt.create); !got.Equal(tt.want) {
			t.Errorf("%s: EventTime = %v, want %v", tt.name, got, tt.want)
		}
	}
}
