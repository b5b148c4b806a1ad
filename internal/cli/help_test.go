package cli

import (
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/pullpath/pullpath/internal/exitcode"
	"github.com/pullpath/pullpath/internal/verdict"
)

// commands is every command of the tree, with the arguments that reach it.
func commands(t *testing.T) map[string]*cobra.Command {
	t.Helper()
	out := map[string]*cobra.Command{}
	var walk func(path []string, c *cobra.Command)
	walk = func(path []string, c *cobra.Command) {
		out[strings.Join(path, " ")] = c
		for _, sub := range c.Commands() {
			walk(append(append([]string(nil), path...), sub.Name()), sub)
		}
	}
	walk(nil, NewRootCommand(Streams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard}))
	if len(out) < 10 {
		t.Fatalf("the command tree has %d commands, want the whole tree", len(out))
	}
	return out
}

// placeholder is what pflag may print as a flag's value: one word in
// capitals (DIR, FILE, KEY=VALUE, 0|1).
var placeholder = regexp.MustCompile(`^[A-Z0-9][A-Za-z0-9_.:=,|/-]*$`)

// TestFlagPlaceholders: pflag takes the first backquoted word of a flag's
// usage as the value's placeholder, so "a folder written by `pullpath aws
// collect`" printed `--from-aws pullpath aws collect`. Every flag of every
// command shows a placeholder word, or none for a bool.
func TestFlagPlaceholders(t *testing.T) {
	for path, c := range commands(t) {
		c.LocalFlags().VisitAll(func(f *pflag.Flag) {
			name, _ := pflag.UnquoteUsage(f)
			if !strings.Contains(f.Usage, "`") {
				return
			}
			if f.Value.Type() == "bool" {
				t.Errorf("pullpath %s --%s: a bool flag takes no value, but its usage backquotes %q", path, f.Name, name)
				return
			}
			if !placeholder.MatchString(name) {
				t.Errorf("pullpath %s --%s prints %q as its value's placeholder: backquote one word in capitals (DIR, FILE) or nothing", path, f.Name, name)
			}
		})
	}
}

// TestHelpExitCodesFromTheTable: every exit code a command's help names is
// the table's: table lines ("  3  route ..."), prose pairs ("3 route",
// "2 other", "9 when")).
func TestHelpExitCodesFromTheTable(t *testing.T) {
	var conds []string
	for _, c := range verdict.Conditions {
		conds = append(conds, regexp.QuoteMeta(string(c)))
	}
	// "3 route", not "v0.1.0 registry.internal"
	pair := regexp.MustCompile(`(?:^|[^.\w])(\d+)\s+(` + strings.Join(conds, "|") + `)(?:$|[^.\w-])`)
	others := []struct {
		re   *regexp.Regexp
		want int
	}{
		{regexp.MustCompile(`\b(\d+)\s+(?:other|a failure outside|failures outside)\b`), exitcode.Other},
		{regexp.MustCompile(`\b(\d+)\s+(?:usage|when the\s+lab itself|when a scenario could not)\b`), exitcode.Error},
		{regexp.MustCompile(`\b(\d+)\s+(?:when the verdict differs|when one differed)\b`), exitcode.Mismatch},
		{regexp.MustCompile(`\b(\d+)\s+(?:nothing broken|when no node fails|no pull failure|every chosen node pulls|ok\b|when every verdict)`), exitcode.OK},
	}
	rows := conditionRows()
	checked := 0
	for path := range commands(t) {
		args := strings.Fields(path)
		help := helpOf(t, args...)
		if !strings.Contains(strings.ToLower(help), "exit") {
			continue
		}
		for n, word := range helpCodes(help) {
			checked++
			if r, ok := rowOf(n); !ok {
				t.Errorf("pullpath %s --help lists exit code %d, which the table does not have", path, n)
			} else if r.Condition != "" && word != string(r.Condition) {
				t.Errorf("pullpath %s --help: exit %d is %q, the table says %q", path, n, word, r.Condition)
			}
		}
		for _, m := range pair.FindAllStringSubmatch(help, -1) {
			checked++
			if n, _ := strconv.Atoi(m[1]); n != exitcode.For(verdict.Condition(m[2])) {
				t.Errorf("pullpath %s --help says %q: the table gives %s exit %d", path, m[1]+" "+m[2], m[2], exitcode.For(verdict.Condition(m[2])))
			}
		}
		for _, o := range others {
			for _, m := range o.re.FindAllStringSubmatch(help, -1) {
				checked++
				if n, _ := strconv.Atoi(m[1]); n != o.want {
					t.Errorf("pullpath %s --help says %q: the table says %d", path, m[0], o.want)
				}
			}
		}
	}
	if checked < 50 {
		t.Errorf("checked %d exit codes in the help texts, want the numbers of every command that names them", checked)
	}
	// The commands that exit by the repair direction name every one.
	for _, args := range [][]string{{"probe"}, {"explain"}, {"diagnose"}, {"sweep"}, {"monitor", "status"}} {
		help := helpOf(t, args...)
		for _, r := range rows {
			if !regexp.MustCompile(`\b` + strconv.Itoa(r.Code) + `\s+` + regexp.QuoteMeta(string(r.Condition)) + `\b`).MatchString(help) {
				t.Errorf("pullpath %s --help does not give exit %d %s", strings.Join(args, " "), r.Code, r.Condition)
			}
		}
	}
}

func rowOf(code int) (exitRow, bool) {
	for _, r := range exitTable {
		if r.Code == code {
			return r, true
		}
	}
	return exitRow{}, false
}
