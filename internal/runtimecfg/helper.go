package runtimecfg

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"time"

	"github.com/pullpath/pullpath/internal/redact"
	"github.com/pullpath/pullpath/internal/units"
)

// DefaultHelperTimeout bounds one credential helper run unless
// CredentialOptions says otherwise.
const DefaultHelperTimeout = 10 * time.Second

// helperNotFound is what docker-credential-helpers print when the store
// has nothing for the server: not an error for the Docker CLI.
const helperNotFound = "credentials not found in native keychain"

type helperOutput struct {
	ServerURL string `json:"ServerURL"`
	Username  string `json:"Username"`
	Secret    string `json:"Secret"`
}

// runHelper runs `docker-credential-NAME get` with server on stdin, for at
// most timeout; cancelling ctx (Ctrl-C) kills it.
func runHelper(ctx context.Context, name, server string, timeout time.Duration) (Credentials, error) {
	prog := "docker-credential-" + name
	src := "credential helper " + prog
	fail := func(reason string, err error) (Credentials, error) {
		return Credentials{}, &CredentialsError{Source: src, Reason: reason, Err: err}
	}
	if strings.ContainsAny(name, "/\\") || name == "" {
		return fail("invalid helper name "+quoteInput(name), nil)
	}
	path, err := exec.LookPath(prog)
	if err != nil {
		return fail("not found in PATH", exec.ErrNotFound)
	}

	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "get")
	cmd.Stdin = strings.NewReader(server)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	cmd.WaitDelay = time.Second // a child holding the pipes cannot hold us
	runErr := cmd.Run()

	if ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return fail("timed out after "+timeout.String(), ctx.Err())
		}
		return fail("cancelled", ctx.Err())
	}
	if runErr != nil {
		// helpers write their error to stdout (docker-credential-helpers) or stderr
		msg := firstLine(stderr.String())
		if msg == "" {
			msg = firstLine(stdout.String())
		}
		if strings.Contains(strings.ToLower(stdout.String()+stderr.String()), helperNotFound) {
			return Credentials{Source: "anonymous (" + src + " has no credentials for " + server + ")"}, nil
		}
		reason := "get " + server + " failed: " + exitReason(runErr)
		if msg != "" {
			reason += ": " + msg
		}
		return fail(reason, runErr)
	}

	var out helperOutput
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		return fail("get "+server+": output is not the helper JSON {ServerURL, Username, Secret}: "+jsonReason(err), errors.New("invalid helper output"))
	}
	c := Credentials{Source: src}
	switch {
	case out.Username == tokenUsername:
		c.IdentityToken = out.Secret
	default:
		c.Username, c.Password = out.Username, out.Secret
	}
	if c.Anonymous() {
		c.Source = "anonymous (" + src + " returned empty credentials)"
	}
	return c, nil
}

func exitReason(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ProcessState.String()
	}
	return units.OneLine(err.Error())
}

// firstLine is the first non-empty line of s, redacted and bounded.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if len(l) > 200 {
			l = l[:200] + "..."
		}
		return redact.String(l)
	}
	return ""
}
