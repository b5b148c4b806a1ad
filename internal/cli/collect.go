package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/nodeplace"
)

// collect runs a cloud's Collect (`pullpath CLOUD collect`), writes its
// folder into out and says how to audit it; image is the IMAGE argument
// the cloud's audit takes, if any.
func collect(ctx context.Context, w io.Writer, c nodeplace.Cloud, live audit.Live, out, image string) error {
	col, err := live.Collect(ctx)
	if err != nil {
		return errors.New(oneLineErr(err))
	}
	if err := col.Files.Write(out); err != nil {
		return err
	}
	if image != "" {
		image += " "
	}
	fmt.Fprintf(w, "wrote %d files to %s; audit them with: pullpath %s audit %s--from %s\n", len(col.Files), out, c, image, out)
	for _, warn := range col.Warnings {
		if warn.Command != "" {
			fmt.Fprintf(w, "warning: %s (%s)\n", warn.Message, warn.Command)
		} else {
			fmt.Fprintf(w, "warning: %s\n", warn.Message)
		}
	}
	return nil
}
