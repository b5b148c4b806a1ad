package monitor

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pullpath/pullpath/internal/labsvc"
)

// For the external tests (package monitor_test), which may import
// internal/monitor/fleet.

func LabOptionsT(t *testing.T, node string, st *labsvc.Stack) Options {
	return labOptions(t, labNode{name: node, stack: st})
}

type LogBuffer = syncWriter

func NewLogBuffer() *LogBuffer { return &syncWriter{b: &strings.Builder{}} }

// PlaceOfJSON is placeOf on a Node's JSON, as the agent decodes it.
func PlaceOfJSON(b []byte) (NodePlace, error) {
	var n node
	if err := json.Unmarshal(b, &n); err != nil {
		return NodePlace{}, err
	}
	return placeOf(&n), nil
}

// WalkCount is how many walks of image started (never twice in one
// interval).
func (a *Agent) WalkCount(image string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.walks[image]
}
