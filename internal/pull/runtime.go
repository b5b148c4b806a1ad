package pull

import (
	"strings"

	"github.com/pullpath/pullpath/internal/report"
	"github.com/pullpath/pullpath/internal/runtimecfg"
	"github.com/pullpath/pullpath/internal/verdict"
)

// registry is the runtime's registry configuration the walk follows: what
// step 0 found, or the folders of CertsDir and DockerCertsDir.
func (w *walker) registry() runtimecfg.RegistryConfig {
	if rc := w.opts.Runtime; rc != nil && rc.Registry != nil {
		return rc.Registry
	}
	return runtimecfg.CertsDirs{Dirs: []string{w.opts.CertsDir}, DockerDir: w.opts.DockerCertsDir}
}

// runtimeReport puts step 0 in the report: the runtime, its file, how it
// was found, and the registry configuration's sources; its warnings join
// the report's.
func (w *walker) runtimeReport() {
	rc := w.opts.Runtime
	if rc == nil {
		return
	}
	out := &report.RuntimeConfig{
		Runtime:     rc.Runtime,
		Layout:      rc.Layout,
		Version:     rc.Version,
		VersionFrom: rc.VersionFrom,
		Rules:       rc.Rules,
		ConfigFile:  rc.ConfigFile,
		Files:       rc.Files,
		HowFound:    rc.HowFound,
		Override:    rc.Override,
		Notes:       rc.Notes,
	}
	for _, c := range rc.Candidates {
		out.Candidates = append(out.Candidates, report.RuntimeCandidate{Runtime: c.Runtime, Layout: c.Layout, ConfigFile: c.ConfigFile, PID: c.PID, Seen: c.Seen, Chosen: c.Chosen, Why: c.Why})
	}
	for _, s := range rc.Sources {
		out.Sources = append(out.Sources, report.RegistrySource{Kind: s.Kind, Path: s.Path, Line: s.Line, Registry: s.Registry, Detail: s.Detail, Missing: s.Missing})
	}
	w.rep.RuntimeConfig = out
	for _, cw := range rc.Warnings {
		w.rep.Warnings = append(w.rep.Warnings, report.Warning{Code: cw.Code, Message: w.sec.String(cw.Message), Advice: verdict.Advise(cw.Code, "", "")})
	}
}

// mirrorVia is how the walk came to a mirror: "hosts.toml mirror (FILE)",
// or "registry.mirrors (FILE:LINE)" for containerd's inline mirrors.
func mirrorVia(h runtimecfg.RegistryHost) string {
	if h.Source == "" || strings.Contains(h.Source, "hosts.toml") || !strings.Contains(h.Source, ".toml:") {
		return "hosts.toml mirror (" + h.Source + ")"
	}
	return "registry.mirrors (" + h.Source + ")"
}
