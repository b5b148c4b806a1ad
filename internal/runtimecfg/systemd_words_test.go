//go:build !fuzzonly

package runtimecfg

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/pullpath/pullpath/internal/testenv"
)

// environmentLines are Environment= values as people write them in
// containerd drop-ins, and the corners of systemd's quoting.
var environmentLines = []string{
	`"VAR1=word1 word2" VAR2=word3 "VAR3=$word 5 6"`,
	`"HTTP_PROXY=http://proxy.corp:3128" "HTTPS_PROXY=http://proxy.corp:3128"`,
	`HTTPS_PROXY="http://bob:p%%40ss@proxy.corp:3128"`,
	`LOST=http://bob:p%40ss@proxy.corp:3128 KEPT=after`,
	`A=b\x41c Z=\u00e9t\u00e9`,
	`'NO_PROXY=.corp, 10.0.0.0/8,localhost'`,
	`Q=a"b c"d R='x "y"'`,
	"T1=tab\tT2=sep",
	`BAD-NAME=1 GOOD=2`,
	`NOEQUALS GOOD2=3`,
	`S=one\stwo`,
	`FIRST=1 BROKEN=a\qb NEVER=2`,
	`OPEN=1 "UNTERMINATED=x`,
	`CONT=http://proxy:3128 \
 NEXT=continued`,
	`PCT=100% END=%`,
}

// TestEnvironmentAgainstSystemd parses Environment= lines with the real
// systemd (its test mode dumps each unit's environment as systemd built
// it) and with readUnitEnv, and wants the same variables.
func TestEnvironmentAgainstSystemd(t *testing.T) {
	systemd := "/lib/systemd/systemd"
	if _, err := os.Stat(systemd); err != nil {
		testenv.Unavailable(t, "needs systemd's binary "+systemd+" (apt-get install systemd)")
	}
	dir, err := os.MkdirTemp("", "pp-systemd-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	unitDir := filepath.Join(dir, "etc/systemd/system")
	if err := os.MkdirAll(unitDir, 0o755); err != nil {
		t.Fatal(err)
	}
	// One target wants every unit, so one run of systemd dumps them all.
	var units []string
	for i, line := range environmentLines {
		unit := fmt.Sprintf("pp-env%02d.service", i)
		units = append(units, unit)
		content := "[Unit]\nDefaultDependencies=no\n[Service]\nExecStart=/bin/true\nEnvironment=RESET=me\nEnvironment=\nEnvironment=" + line + "\n"
		if err := os.WriteFile(filepath.Join(unitDir, unit), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	target := "[Unit]\nDefaultDependencies=no\nWants=" + strings.Join(units, " ") + "\n"
	if err := os.WriteFile(filepath.Join(unitDir, "pp-env.target"), []byte(target), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err == nil {
			err = os.Chmod(p, 0o755)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	dump := systemdDump(t, systemd, unitDir, "pp-env.target")
	for i, line := range environmentLines {
		unit := units[i]
		got := map[string]string{}
		for k, v := range readUnitEnv(dir, unit).Vars {
			got[k] = v.Value
		}
		want, ok := dump[unit]
		if !ok {
			t.Fatalf("systemd's dump has no unit %s", unit)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Environment=%s: readUnitEnv differs from systemd (-systemd +readUnitEnv):\n%s", line, diff)
		}
	}
}

// systemdDump runs systemd in test mode with unit as the default unit (as
// nobody: systemd refuses test mode as root) and returns the Environment:
// lines of every unit of its dump.
func systemdDump(t *testing.T, systemd, unitDir, unit string) map[string]map[string]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := []string{systemd, "--test", "--system", "--unit=" + unit, "--no-pager"}
	if os.Geteuid() == 0 {
		if _, err := exec.LookPath("setpriv"); err != nil {
			testenv.Unavailable(t, "needs setpriv (apt-get install util-linux) to run systemd's test mode as nobody")
		}
		args = append([]string{"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"}, args...)
	}
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Env = []string{"SYSTEMD_UNIT_PATH=" + unitDir, "SYSTEMD_LOG_TARGET=console", "HOME=/tmp", "PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("systemd --test --unit=%s: %v\n%s", unit, err, out.String())
	}
	units := map[string]map[string]string{}
	var cur map[string]string
	for _, l := range strings.Split(out.String(), "\n") {
		if name, ok := strings.CutPrefix(strings.TrimSpace(l), "-> Unit "); ok {
			cur = map[string]string{}
			units[strings.TrimSuffix(name, ":")] = cur
			continue
		}
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "Environment: "); ok && cur != nil {
			k, val, _ := strings.Cut(v, "=")
			cur[k] = val
		}
	}
	return units
}

func TestParseEnvironmentValue(t *testing.T) {
	tests := []struct {
		in       string
		want     map[string]string
		specs    []string
		ignored  int
		resetAll bool
	}{
		{in: `"HTTPS_PROXY=http://p:3128" NO_PROXY=a,b`, want: map[string]string{"HTTPS_PROXY": "http://p:3128", "NO_PROXY": "a,b"}},
		{in: `X=a%nb`, want: map[string]string{"X": "a%nb"}, specs: []string{"%n"}},
		{in: `X=p%40ss Y=1`, want: map[string]string{"Y": "1"}, ignored: 1},
		{in: `X=1 Y=a\qb Z=3`, want: map[string]string{"X": "1"}, ignored: 1},
		{in: "  ", resetAll: true},
	}
	for _, tt := range tests {
		as, reset := parseEnvironmentValue(tt.in)
		got := map[string]string{}
		var specs []string
		ignored := 0
		for _, a := range as {
			if a.Ignored != "" {
				ignored++
				continue
			}
			got[a.Name] = a.Value
			specs = append(specs, a.Specifiers...)
		}
		if tt.resetAll {
			if !reset {
				t.Errorf("parseEnvironmentValue(%q) reset = false, want true", tt.in)
			}
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("parseEnvironmentValue(%q) (-want +got):\n%s", tt.in, diff)
		}
		if diff := cmp.Diff(tt.specs, specs); diff != "" {
			t.Errorf("parseEnvironmentValue(%q) specifiers (-want +got):\n%s", tt.in, diff)
		}
		if ignored != tt.ignored {
			t.Errorf("parseEnvironmentValue(%q) ignored %d words, want %d", tt.in, ignored, tt.ignored)
		}
	}
}

func TestParseEnvFile(t *testing.T) {
	content := "# k3s defaults\n" +
		"CONTAINERD_HTTPS_PROXY=http://proxy.corp:3128   \n" +
		"  NO_PROXY = \"127.0.0.0/8,.svc\" # not a comment: kept\n" +
		"; also a comment\n" +
		"export HTTP_PROXY=http://proxy.corp:3128\n" +
		"SQ='a \"b\" \\n'\n" +
		"DQ=\"x \\$y \\z\"\n" +
		"JOIN=\"a\"b'c'\n" +
		"CONT=one\\\ntwo\n" +
		"NOVALUE\n" +
		"EMPTY=\n" +
		"LAST=final"
	got := map[string]string{}
	var ignored []string
	for _, e := range parseEnvFile(content) {
		if e.Ignored != "" {
			ignored = append(ignored, e.Name)
			continue
		}
		got[e.Name] = e.Value
	}
	want := map[string]string{
		"CONTAINERD_HTTPS_PROXY": "http://proxy.corp:3128",
		"NO_PROXY":               "127.0.0.0/8,.svc# not a comment: kept",
		"SQ":                     `a "b" \n`,
		"DQ":                     `x $y \z`,
		"JOIN":                   "ab'c'", // a quote after unquoted text is literal
		"CONT":                   "onetwo",
		"EMPTY":                  "",
		"LAST":                   "final",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parseEnvFile (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"export HTTP_PROXY"}, ignored); diff != "" {
		t.Errorf("parseEnvFile ignored (-want +got):\n%s", diff)
	}
}
