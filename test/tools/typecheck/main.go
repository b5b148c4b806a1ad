// Command typecheck type-checks Go packages from source for another
// GOOS/GOARCH, without compiling them: hack/test.sh's check that the CLI
// still builds where `lab` cannot run (release archives and krew ship
// darwin). A cross-compile of the whole CLI compiles every dependency again
// for that platform (about 9 minutes of a cold CI on 2 cores); type-checking
// finds the same mistakes a pure-Go cross build finds (a symbol defined only
// in a _linux.go file, a platform file missing) in a fraction of the time.
// Release builds (hack/release.sh) still cross-compile.
//
// Usage (from the module to check; GOOS, GOARCH and CGO_ENABLED from the
// environment as for go build):
//
//	GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 typecheck [-tags TAGS] PACKAGE...
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"golang.org/x/tools/go/packages"
)

func main() {
	tags := flag.String("tags", "", "build tags, as go build -tags")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: typecheck [-tags TAGS] PACKAGE... (GOOS/GOARCH from the environment)")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	cfg := &packages.Config{
		// Syntax and types for every package, dependencies included: all
		// of it is type-checked from source, nothing is compiled.
		Mode: packages.NeedName | packages.NeedFiles | packages.NeedImports | packages.NeedDeps |
			packages.NeedTypes | packages.NeedSyntax,
		Tests: false,
	}
	if *tags != "" {
		cfg.BuildFlags = []string{"-tags=" + *tags}
	}
	pkgs, err := packages.Load(cfg, flag.Args()...)
	if err != nil {
		fmt.Fprintf(os.Stderr, "typecheck: %v\n", err)
		os.Exit(1)
	}
	n := 0
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		for _, e := range p.Errors {
			fmt.Fprintln(os.Stderr, e)
			n++
		}
	})
	target := os.Getenv("GOOS") + "/" + os.Getenv("GOARCH")
	if n > 0 {
		fmt.Fprintf(os.Stderr, "typecheck: %d errors for %s (tags %q) in %s\n", n, target, *tags, strings.Join(flag.Args(), " "))
		os.Exit(1)
	}
	count := 0
	packages.Visit(pkgs, nil, func(*packages.Package) { count++ })
	fmt.Fprintf(os.Stderr, "typecheck: %d packages type-check for %s (tags %q)\n", count, target, *tags)
}
