package scenario

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/pullpath/pullpath/internal/units"
)

//go:embed scenarios/*.yaml
var builtinFS embed.FS

// BuiltinPrefix marks a scenario read from the binary's built-in scenarios.
const BuiltinPrefix = "builtin:"

// Builtins returns the names of the built-in scenarios, sorted. Bases (files
// whose name starts with "_") are not scenarios and are not listed.
func Builtins() []string {
	ents, _ := fs.ReadDir(builtinFS, "scenarios")
	var names []string
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, "_") || !strings.HasSuffix(n, ".yaml") {
			continue
		}
		names = append(names, strings.TrimSuffix(n, ".yaml"))
	}
	sort.Strings(names)
	return names
}

// LoadBuiltin loads and validates a built-in scenario by name.
func LoadBuiltin(name string) (*Scenario, error) {
	b, err := builtinFS.ReadFile("scenarios/" + name + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("unknown scenario %q: want one of %s (see `pullpath lab list`) or a file path", name, strings.Join(Builtins(), ", "))
	}
	return parse(b, BuiltinPrefix+name, 0)
}

// LoadFile loads and validates a scenario file.
func LoadFile(file string) (*Scenario, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %v", file, errors.Unwrap(err))
	}
	return parse(b, file, 0)
}

// Load loads a built-in scenario by name, or else a file.
func Load(nameOrFile string) (*Scenario, error) {
	if !strings.ContainsAny(nameOrFile, "/.") {
		if _, err := builtinFS.ReadFile("scenarios/" + nameOrFile + ".yaml"); err == nil {
			return LoadBuiltin(nameOrFile)
		}
		if _, err := os.Stat(nameOrFile); err != nil {
			return LoadBuiltin(nameOrFile) // its error lists the scenarios
		}
	}
	return LoadFile(nameOrFile)
}

// LoadAll loads each name or file with Load, every built-in scenario when
// none is given: what `lab test` runs.
func LoadAll(namesOrFiles []string) ([]*Scenario, error) {
	if len(namesOrFiles) == 0 {
		namesOrFiles = Builtins()
	}
	topos := make([]*Scenario, 0, len(namesOrFiles))
	for _, n := range namesOrFiles {
		t, err := Load(n)
		if err != nil {
			return nil, err
		}
		topos = append(topos, t)
	}
	return topos, nil
}

// Parse reads a scenario from YAML; source names it in errors.
func Parse(b []byte, source string) (*Scenario, error) { return parse(b, source, 0) }

func parse(b []byte, source string, depth int) (*Scenario, error) {
	m, err := mergedDoc(b, source, depth)
	if err != nil {
		return nil, err
	}
	js, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %v", source, err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	var t Scenario
	if err := dec.Decode(&t); err != nil {
		return nil, fmt.Errorf("scenario %s: %s", source, jsonErr(err, m))
	}
	t.source = source
	t.Extends = ""
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", source, err)
	}
	return &t, nil
}

// mergedDoc reads one YAML document as a map and merges it over its base
// (extends:), JSON-merge-patch style: maps merge key by key, null deletes a
// key, anything else (lists included) replaces.
func mergedDoc(b []byte, source string, depth int) (map[string]any, error) {
	if depth > 4 {
		return nil, fmt.Errorf("scenario %s: extends: chain deeper than 4 (a loop?)", source)
	}
	js, err := yaml.YAMLToJSON(b)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: not valid YAML: %s", source, units.OneLine(err.Error()))
	}
	var m map[string]any
	if err := json.Unmarshal(js, &m); err != nil || m == nil {
		return nil, fmt.Errorf("scenario %s: want a YAML mapping at the top (apiVersion, kind, name, ...)", source)
	}
	ext, _ := m["extends"].(string)
	if ext == "" {
		if _, ok := m["extends"]; ok && m["extends"] != nil {
			return nil, fmt.Errorf("scenario %s: extends: want a base name or file path", source)
		}
		return m, nil
	}
	var baseBytes []byte
	var baseSource string
	switch {
	case !strings.ContainsAny(ext, "/."):
		// a built-in base (or scenario) by name
		baseBytes, err = builtinFS.ReadFile("scenarios/" + ext + ".yaml")
		baseSource = BuiltinPrefix + ext
	case strings.HasPrefix(source, BuiltinPrefix):
		baseBytes, err = builtinFS.ReadFile(path.Join("scenarios", ext))
		baseSource = BuiltinPrefix + ext
	default:
		p := ext
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(source), p)
		}
		baseBytes, err = os.ReadFile(p)
		baseSource = p
	}
	if err != nil {
		return nil, fmt.Errorf("scenario %s: extends: %q: no such built-in base or file", source, ext)
	}
	base, err := mergedDoc(baseBytes, baseSource, depth+1)
	if err != nil {
		return nil, err
	}
	delete(m, "extends")
	// The base's own name and summary never leak into the scenario.
	delete(base, "name")
	delete(base, "summary")
	return mergePatch(base, m), nil
}

// mergePatch applies patch over base (RFC 7386), except that a DNS record
// (dns.SERVER.records.NAME) replaces the base's record as a whole.
func mergePatch(base, patch map[string]any) map[string]any {
	return mergeAt(base, patch, nil)
}

func isRecordPath(path []string) bool {
	return len(path) == 4 && path[0] == "dns" && path[2] == "records"
}

func mergeAt(base, patch map[string]any, path []string) map[string]any {
	out := make(map[string]any, len(base)+len(patch))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range patch {
		if v == nil {
			delete(out, k)
			continue
		}
		pm, pok := v.(map[string]any)
		bm, bok := out[k].(map[string]any)
		sub := append(append([]string(nil), path...), k)
		if pok && bok && !isRecordPath(sub) {
			out[k] = mergeAt(bm, pm, sub)
			continue
		}
		out[k] = v
	}
	return out
}

// jsonErr turns a decoding error into a one-line message naming the field.
func jsonErr(err error, doc map[string]any) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		f := fieldPath(doc, te.Field, te.Value)
		if f == "" {
			f = "(top)"
		}
		return fmt.Sprintf("%s: want %s, got %s", f, kindName(te.Type.String()), te.Value)
	}
	s := err.Error()
	s = strings.TrimPrefix(s, "json: ")
	return units.OneLine(s)
}

func kindName(t string) string {
	switch {
	case strings.HasPrefix(t, "map["):
		return "a mapping"
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case t == "string" || t == "scenario.Duration":
		return "a string"
	case t == "int" || t == "int64":
		return "an integer"
	case t == "bool":
		return "true or false"
	}
	return "a mapping"
}

// fieldPath restores the map keys that encoding/json leaves out of a type
// error's field ("hosts.interfaces" -> "hosts.node.interfaces"), by walking
// the document to the first value of the wrong JSON kind.
func fieldPath(doc map[string]any, field, kind string) string {
	if field == "" {
		return ""
	}
	var walk func(v any, segs []string) []string
	walk = func(v any, segs []string) []string {
		if len(segs) == 0 {
			if jsonKind(v) == kind {
				return []string{}
			}
			return nil
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		if next, ok := m[segs[0]]; ok {
			if rest := walk(next, segs[1:]); rest != nil {
				return append([]string{segs[0]}, rest...)
			}
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if rest := walk(m[k], segs); rest != nil {
				return append([]string{k}, rest...)
			}
		}
		return nil
	}
	if p := walk(doc, strings.Split(field, ".")); len(p) > 0 {
		return strings.Join(p, ".")
	}
	return field
}

func jsonKind(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	}
	return "null"
}
