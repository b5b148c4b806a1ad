package aws

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"

	"github.com/pullpath/pullpath/internal/report"
)

// maxFileBytes bounds one CLI output: an account far larger than the
// benchmark's (5,000 instances is about 40 MiB) still fits.
const maxFileBytes = 1 << 30

// LoadDir reads an offline folder (the contract in Files) into a Raw.
// A missing optional file is left nil (the audit warns with the command that
// writes it); a file that is not JSON, or is another command's output, is a
// one-line error naming the file and what was expected.
func LoadDir(dir string) (*Raw, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("--from %s: %w", dir, unwrapPathErr(err))
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("--from %s: not a folder (want a folder of AWS CLI JSON outputs, see docs/aws.md)", dir)
	}
	d := &dirLoader{dir: dir, raw: &Raw{}}
	raw := d.raw
	loadInto(d, FileCluster, &raw.Cluster)
	loadInto(d, FileNodegroups, &raw.Nodegroups)
	ngFiles, _ := filepath.Glob(filepath.Join(dir, "eks-describe-nodegroup-*.json"))
	sort.Strings(ngFiles)
	for _, p := range ngFiles {
		var v *NodegroupOutput
		if loadInto(d, filepath.Base(p), &v) {
			raw.NodegroupDetails = append(raw.NodegroupDetails, v)
		}
	}
	loadInto(d, FileInstances, &raw.Instances)
	loadInto(d, FileSubnets, &raw.Subnets)
	loadInto(d, FileRouteTables, &raw.RouteTables)
	loadInto(d, FileEndpoints, &raw.Endpoints)
	loadInto(d, FileSecurityGroups, &raw.SecurityGroups)
	loadInto(d, FileNetworkACLs, &raw.NetworkACLs)
	loadInto(d, FileNATGateways, &raw.NATGateways)
	loadInto(d, FilePrefixLists, &raw.PrefixLists)
	loadInto(d, FileDNSSupport, &raw.DNSSupport)
	loadInto(d, FileDNSHostnames, &raw.DNSHostnames)
	loadInto(d, FileDHCPOptions, &raw.DHCPOptions)
	loadInto(d, FileVPCs, &raw.VPCs)
	loadInto(d, FileSimulate, &raw.Simulate)
	loadInto(d, FileCacheRules, &raw.CacheRules)
	loadInto(d, FileTemplates, &raw.Templates)
	loadInto(d, FileRepositories, &raw.Repositories)
	loadInto(d, FileRegistryPolicy, &raw.RegistryPolicy)
	loadInto(d, FileSecret, &raw.Secret)
	if len(d.errs) > 0 {
		return nil, d.errs[0]
	}
	if d.found == 0 {
		return nil, fmt.Errorf("--from %s: no AWS CLI outputs in the folder (want %s, %s, ... see docs/aws.md)", dir, FileCluster, FileSubnets)
	}
	for _, f := range Files {
		if !f.Required {
			continue
		}
		if (f.Name == FileCluster && raw.Cluster == nil) || (f.Name == FileSubnets && raw.Subnets == nil) {
			return nil, fmt.Errorf("--from %s: %s is missing (want the output of `%s --output json`)", dir, f.Name, f.Command)
		}
	}
	return raw, nil
}

// dirLoader reads a folder's files one by one, counting those found and
// keeping the errors in order.
type dirLoader struct {
	dir   string
	raw   *Raw
	found int
	errs  []error
}

// loadInto reads the file name into a new T and sets *dst to it; false
// when the file is absent, its recorded call failed, or it is bad (the
// error kept).
func loadInto[T any](d *dirLoader, name string, dst **T) bool {
	v := new(T)
	ok, err := d.load(name, v)
	if err != nil {
		d.errs = append(d.errs, err)
		return false
	}
	if ok {
		*dst = v
	}
	return ok
}

// load decodes one file of the contract in any shape decodePages reads;
// a missing file is not an error, and an optional file whose recorded
// call failed is left out as a live refusal would be.
func (d *dirLoader) load(name string, into any) (bool, error) {
	path := filepath.Join(d.dir, name)
	data, err := readFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("%s: %w", path, unwrapPathErr(err))
	}
	d.found++
	spec, ok := fileSpec(name)
	if !ok {
		return false, fmt.Errorf("%s: not a file of the contract (see docs/aws.md)", path)
	}
	truncated, err := decodePages(spec, bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), into)
	var re *RecordedError
	if errors.As(err, &re) && !spec.Required {
		// the recorded call failed: the file is left out, as a live refusal
		d.raw.noteFailed(name, re)
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("%s: %w", path, err)
	}
	if truncated {
		if d.raw.Truncated == nil {
			d.raw.Truncated = map[string]bool{}
		}
		d.raw.Truncated[name] = true
	}
	return true, nil
}

func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, fmt.Errorf("is a folder, want a JSON file")
	}
	if st.Size() > maxFileBytes {
		return nil, fmt.Errorf("%d bytes, more than the %d this reader takes", st.Size(), maxFileBytes)
	}
	return os.ReadFile(path)
}

func unwrapPathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// DecodeFile decodes one CLI output (named as in Files) into its output
// shape. The top-level member the command prints must be there: a file of
// another command says so, naming what it holds instead.
func DecodeFile(name string, data []byte, into any) error {
	spec, ok := fileSpec(name)
	if !ok {
		return fmt.Errorf("not a file of the contract (see docs/aws.md)")
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	_, err := decodePages(spec, data, into)
	return err
}

// decodePages reads a file in any of the shapes filePages takes into its
// output shape (the pages' lists joined), checking each page as the CLI's
// object; truncated says the last page names a next one.
func decodePages(spec File, data []byte, into any) (truncated bool, err error) {
	pages, truncated, perr := filePages(data)
	var re *RecordedError
	if errors.As(perr, &re) {
		return false, perr
	}
	if perr != nil || len(pages) == 1 {
		if perr == nil {
			data = pages[0]
		}
		return truncated, decodePage(spec, data, into)
	}
	dst := reflect.ValueOf(into).Elem()
	for i, p := range pages {
		v := reflect.New(dst.Type())
		if err := decodePage(spec, p, v.Interface()); err != nil {
			return false, fmt.Errorf("page %d of %d: %w", i+1, len(pages), err)
		}
		mergePage(dst, v.Elem())
	}
	return truncated, nil
}

// decodePage decodes one page, the CLI's object: the top-level member the
// command prints must be there, a file of another command says so.
func decodePage(spec File, data []byte, into any) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case len(bytes.TrimSpace(data)) == 0:
			return fmt.Errorf("empty, want the JSON output of `%s --output json`", spec.Command)
		case errors.As(err, &se):
			return fmt.Errorf("not JSON (%v at byte %d), want the output of `%s --output json`", se, se.Offset, spec.Command)
		case errors.As(err, &te):
			return fmt.Errorf("not a JSON object (found %s), want the output of `%s --output json`", te.Value, spec.Command)
		}
		return fmt.Errorf("not JSON (%v), want the output of `%s --output json`", err, spec.Command)
	}
	if _, ok := lookupKey(top, spec.Key); !ok {
		keys := make([]string, 0, len(top))
		for k := range top {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		holds := "nothing"
		if len(keys) > 0 {
			holds = strings.Join(keys, ", ")
		}
		if guess := guessCommand(keys); guess != "" {
			holds += " (the output of " + guess + "?)"
		}
		return fmt.Errorf("no %q member: holds %s, want the output of `%s --output json`", spec.Key, holds, spec.Command)
	}
	if err := decodeWithTimes(data, into); err != nil {
		return fmt.Errorf("not the shape of `%s` output: %v", spec.Command, err)
	}
	return nil
}

// lookupKey finds a member the way encoding/json does (case-insensitively).
func lookupKey(top map[string]json.RawMessage, key string) (json.RawMessage, bool) {
	if v, ok := top[key]; ok {
		return v, true
	}
	for k, v := range top {
		if strings.EqualFold(k, key) {
			return v, true
		}
	}
	return nil, false
}

func guessCommand(keys []string) string {
	for _, k := range keys {
		for _, f := range Files {
			if strings.EqualFold(k, f.Key) {
				return "`" + f.Command + "`"
			}
		}
	}
	return ""
}

// Warn is an audit warning about an input file.
func warnFile(file, msg, command string) report.AuditWarning {
	return report.AuditWarning{Message: msg, File: file, Command: command}
}
