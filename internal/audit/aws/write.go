package aws

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"
	"unicode"

	"github.com/pullpath/pullpath/internal/audit"
)

// WriteDir writes raw as the offline folder (FilesOf) and returns the names
// of the files written. LoadDir reads them back into the same Raw.
func WriteDir(dir string, raw *Raw) ([]string, error) {
	files, err := FilesOf(raw)
	if err != nil {
		return nil, err
	}
	return files.Names(), files.Write(dir)
}

// FilesOf encodes raw as the offline folder's files: one per command, as the
// AWS CLI v2 prints it (4-space indent, members named as the service names
// them: camelCase for EKS, PascalCase for EC2 and IAM; absent members
// left out; timestamps in ISO 8601 with an offset).
func FilesOf(raw *Raw) (audit.Files, error) {
	type item struct {
		name  string
		v     any
		camel bool
	}
	var items []item
	add := func(name string, v any, ok bool, camel bool) {
		if ok {
			items = append(items, item{name, v, camel})
		}
	}
	add(FileCluster, raw.Cluster, raw.Cluster != nil, true)
	add(FileNodegroups, raw.Nodegroups, raw.Nodegroups != nil, true)
	for _, ng := range raw.NodegroupDetails {
		if ng != nil && ng.Nodegroup != nil {
			add(NodegroupFile(str(ng.Nodegroup.NodegroupName)), ng, true, true)
		}
	}
	add(FileInstances, raw.Instances, raw.Instances != nil, false)
	add(FileSubnets, raw.Subnets, raw.Subnets != nil, false)
	add(FileRouteTables, raw.RouteTables, raw.RouteTables != nil, false)
	add(FileEndpoints, raw.Endpoints, raw.Endpoints != nil, false)
	add(FileSecurityGroups, raw.SecurityGroups, raw.SecurityGroups != nil, false)
	add(FileNetworkACLs, raw.NetworkACLs, raw.NetworkACLs != nil, false)
	add(FileNATGateways, raw.NATGateways, raw.NATGateways != nil, false)
	add(FilePrefixLists, raw.PrefixLists, raw.PrefixLists != nil, false)
	add(FileDNSSupport, raw.DNSSupport, raw.DNSSupport != nil, false)
	add(FileDNSHostnames, raw.DNSHostnames, raw.DNSHostnames != nil, false)
	add(FileDHCPOptions, raw.DHCPOptions, raw.DHCPOptions != nil, false)
	add(FileVPCs, raw.VPCs, raw.VPCs != nil, false)
	add(FileSimulate, raw.Simulate, raw.Simulate != nil, false)
	add(FileCacheRules, raw.CacheRules, raw.CacheRules != nil, true)
	add(FileTemplates, raw.Templates, raw.Templates != nil, true)
	add(FileRepositories, raw.Repositories, raw.Repositories != nil, true)
	add(FileRegistryPolicy, raw.RegistryPolicy, raw.RegistryPolicy != nil, true)
	add(FileSecret, raw.Secret, raw.Secret != nil, false)
	for _, f := range sortedKeys(raw.Errors) {
		// an API's "not found" is an answer: boto3's error dict
		e := raw.Errors[f]
		add(f, map[string]any{"Error": map[string]any{"Code": e.Code, "Message": e.Message}}, true, false)
	}
	files := audit.Files{}
	for _, it := range items {
		b, err := EncodeCLI(it.v, it.camel)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", it.name, err)
		}
		files[it.name] = b
	}
	return files, nil
}

// EncodeCLI writes v the way the AWS CLI prints an output: members in the
// struct's order, nil and empty members left out (the CLI prints what the
// service sent), timestamps as ISO 8601, 4-space indent, no HTML escaping.
// camel names members as EKS's REST-JSON does (clusterSecurityGroupId).
func EncodeCLI(v any, camel bool) ([]byte, error) {
	var b bytes.Buffer
	e := cliEncoder{b: &b, camel: camel}
	if err := e.value(reflect.ValueOf(v), 0); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

type cliEncoder struct {
	b     *bytes.Buffer
	camel bool
}

func (e *cliEncoder) indent(n int) {
	e.b.WriteByte('\n')
	e.b.WriteString(strings.Repeat("    ", n))
}

func (e *cliEncoder) str(s string) {
	var sb bytes.Buffer
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	e.b.Write(bytes.TrimRight(sb.Bytes(), "\n"))
}

// empty reports whether the CLI would leave the member out.
func empty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		return v.IsNil()
	case reflect.Slice, reflect.Map:
		return v.IsNil()
	case reflect.String:
		return v.Len() == 0 // enums: unset
	case reflect.Struct:
		if v.Type() == timeType {
			return v.Interface().(time.Time).IsZero()
		}
	}
	return false
}

func (e *cliEncoder) name(f reflect.StructField) string {
	if tag := f.Tag.Get("json"); tag != "" {
		if n, _, _ := strings.Cut(tag, ","); n != "" && n != "-" {
			return n
		}
	}
	if !e.camel {
		return f.Name
	}
	r := []rune(f.Name)
	r[0] = unicode.ToLower(r[0])
	return string(r)
}

func (e *cliEncoder) value(v reflect.Value, depth int) error {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			e.b.WriteString("null")
			return nil
		}
		v = v.Elem()
	}
	if v.Type() == timeType {
		t := v.Interface().(time.Time)
		e.str(t.Format("2006-01-02T15:04:05.999999-07:00"))
		return nil
	}
	switch v.Kind() {
	case reflect.Struct:
		t := v.Type()
		first := true
		e.b.WriteByte('{')
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() || f.Tag.Get("json") == "-" {
				continue
			}
			fv := v.Field(i)
			// The command's own output members are printed even when
			// empty ("NatGateways": []), as the CLI does.
			if depth == 0 && fv.Kind() == reflect.Slice && fv.Len() == 0 {
				if !first {
					e.b.WriteByte(',')
				}
				first = false
				e.indent(1)
				e.str(e.name(f))
				e.b.WriteString(": []")
				continue
			}
			if empty(fv) {
				continue
			}
			if !first {
				e.b.WriteByte(',')
			}
			first = false
			e.indent(depth + 1)
			e.str(e.name(f))
			e.b.WriteString(": ")
			if err := e.value(fv, depth+1); err != nil {
				return err
			}
		}
		if !first {
			e.indent(depth)
		}
		e.b.WriteByte('}')
	case reflect.Slice, reflect.Array:
		if v.Len() == 0 {
			e.b.WriteString("[]")
			return nil
		}
		e.b.WriteByte('[')
		for i := 0; i < v.Len(); i++ {
			if i > 0 {
				e.b.WriteByte(',')
			}
			e.indent(depth + 1)
			if err := e.value(v.Index(i), depth+1); err != nil {
				return err
			}
		}
		e.indent(depth)
		e.b.WriteByte(']')
	case reflect.Map:
		keys := v.MapKeys()
		if len(keys) == 0 {
			e.b.WriteString("{}")
			return nil
		}
		ks := make([]string, len(keys))
		for i, k := range keys {
			ks[i] = k.String()
		}
		sortStrings(ks)
		e.b.WriteByte('{')
		for i, k := range ks {
			if i > 0 {
				e.b.WriteByte(',')
			}
			e.indent(depth + 1)
			e.str(k)
			e.b.WriteString(": ")
			if err := e.value(v.MapIndex(reflect.ValueOf(k).Convert(v.Type().Key())), depth+1); err != nil {
				return err
			}
		}
		e.indent(depth)
		e.b.WriteByte('}')
	case reflect.String:
		e.str(v.String())
	case reflect.Bool:
		fmt.Fprint(e.b, v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		fmt.Fprint(e.b, v.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		fmt.Fprint(e.b, v.Uint())
	case reflect.Float32, reflect.Float64:
		b, err := json.Marshal(v.Float())
		if err != nil {
			return err
		}
		e.b.Write(b)
	default:
		return fmt.Errorf("cannot print a %s", v.Type())
	}
	return nil
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
