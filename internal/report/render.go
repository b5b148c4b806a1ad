package report

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"sigs.k8s.io/yaml"
)

// Formats are the values -o accepts.
var Formats = []string{"text", "wide", "json", "yaml"}

// TextOptions tune the text renderers.
type TextOptions struct {
	Wide  bool // every address, every exchange
	Color bool // the writer is a terminal
}

// TextWriter is implemented by every report kind: its text rendering.
type TextWriter interface {
	WriteText(w io.Writer, o TextOptions) error
}

// CheckFormat validates an -o value with a one-line error that lists the
// allowed values.
func CheckFormat(format string) error {
	for _, f := range Formats {
		if f == format {
			return nil
		}
	}
	return fmt.Errorf("unknown output format %q: want one of %s", format, strings.Join(Formats, ", "))
}

// Render writes v in format. json and yaml are the report itself; text and
// wide are its TextWriter rendering.
func Render(w io.Writer, format string, v any, o TextOptions) error {
	if err := CheckFormat(format); err != nil {
		return err
	}
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	case "yaml":
		b, err := yaml.Marshal(v)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	}
	tw, ok := v.(TextWriter)
	if !ok {
		return fmt.Errorf("report %T has no text rendering", v)
	}
	o.Wide = o.Wide || format == "wide"
	return tw.WriteText(w, o)
}
