package azure

import (
	"encoding/json"
	"reflect"
	"strings"
	"sync"
)

// The Azure CLI prints most resources "flattened": the keys of the ARM
// resource's `properties` object are lifted to the top, next to id, name,
// type, location and tags, and the same happens inside every nested
// sub-resource (a VNet's subnets, an NSG's rules, a registry's private
// endpoint connections). SDK-based commands (az aks, az acr, az role) print
// null for an absent field; AAZ-based ones (az network ...) leave it out. Raw
// ARM JSON (what the REST API and the Azure SDK for Go speak) keeps
// `properties` nested.
//
// renest turns either shape into ARM shape, guided by the SDK model type the
// value will be unmarshalled into: for a struct with a Properties field,
// every key that is not one of the struct's own fields moves into
// `properties`. flatten does the reverse, for collect to write what the CLI
// prints.

// fieldSet maps a struct's JSON keys, lower-cased, to the key as the SDK
// spells it and the field's type. The SDK's generated UnmarshalJSON matches
// keys case-sensitively, and ARM's spelling is not always the CLI's
// (vnetSubnetID in ARM, vnetSubnetId in `az aks show`), so keys are
// renamed to the SDK's own.
type fieldSet struct {
	fields     map[string]field
	properties reflect.Type // nil when the struct has no Properties field
}

type field struct {
	key string
	typ reflect.Type
}

var fieldCache sync.Map // reflect.Type -> *fieldSet

// fieldsOf learns a struct's JSON keys from the SDK itself: each field is
// set alone and the value marshalled, so the key is what MarshalJSON writes.
func fieldsOf(t reflect.Type) *fieldSet {
	if v, ok := fieldCache.Load(t); ok {
		return v.(*fieldSet)
	}
	fs := &fieldSet{fields: map[string]field{}}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		key := jsonKeyOf(t, i)
		if key == "" {
			key = strings.ToLower(f.Name[:1]) + f.Name[1:]
		}
		fs.fields[strings.ToLower(key)] = field{key: key, typ: f.Type}
		if lk := strings.ToLower(f.Name); lk != strings.ToLower(key) {
			if _, dup := fs.fields[lk]; !dup {
				fs.fields[lk] = field{key: key, typ: f.Type}
			}
		}
		if f.Name == "Properties" {
			fs.properties = f.Type
		}
	}
	fieldCache.Store(t, fs)
	return fs
}

func jsonKeyOf(t reflect.Type, i int) string {
	v := reflect.New(t)
	fv := v.Elem().Field(i)
	switch fv.Kind() {
	case reflect.Pointer:
		fv.Set(reflect.New(fv.Type().Elem()))
	case reflect.Slice:
		fv.Set(reflect.MakeSlice(fv.Type(), 0, 0))
	case reflect.Map:
		fv.Set(reflect.MakeMap(fv.Type()))
	default:
		return ""
	}
	data, err := json.Marshal(v.Interface())
	if err != nil {
		return ""
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(data, &obj) != nil || len(obj) != 1 {
		return ""
	}
	for k := range obj {
		return k
	}
	return ""
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// elements applies f to each element of v, a slice or map of t's element
// type (renest and flatten walk containers alike); anything else is v as it is.
func elements(v any, t reflect.Type, f func(any, reflect.Type) any) any {
	switch t.Kind() {
	case reflect.Slice:
		if arr, ok := v.([]any); ok {
			for i := range arr {
				arr[i] = f(arr[i], t.Elem())
			}
		}
	case reflect.Map:
		if obj, ok := v.(map[string]any); ok {
			for k, e := range obj {
				obj[k] = f(e, t.Elem())
			}
		}
	}
	return v
}

// renest rewrites v (decoded JSON) in place into ARM shape for type t and
// returns it. Null values are dropped, so SDK-style nulls and AAZ-style
// omissions read the same.
func renest(v any, t reflect.Type) any {
	t = deref(t)
	if t.Kind() != reflect.Struct {
		return elements(v, t, renest)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return v
	}
	fs := fieldsOf(t)
	var props map[string]any
	if fs.properties != nil {
		if p, ok := obj["properties"].(map[string]any); ok {
			props = p
		} else {
			props = map[string]any{}
		}
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	for _, k := range keys {
		e := obj[k]
		if e == nil {
			delete(obj, k)
			continue
		}
		lk := strings.ToLower(k)
		if f, ok := fs.fields[lk]; ok {
			if lk == "properties" {
				continue
			}
			if f.key != k {
				delete(obj, k)
				if _, dup := obj[f.key]; dup {
					continue
				}
			}
			obj[f.key] = renest(e, f.typ)
			continue
		}
		if props != nil {
			// a flattened property; a nested one of the same name wins
			if _, dup := props[k]; !dup {
				props[k] = e
			}
			delete(obj, k)
		}
	}
	if props != nil {
		obj["properties"] = renest(props, fs.properties)
		if len(props) == 0 {
			delete(obj, "properties")
		}
	}
	return obj
}

// flatten rewrites v (ARM-shaped decoded JSON of type t) in place into the
// CLI's flattened shape: properties lifted, and a resourceGroup key beside
// every id that names one, as the CLI adds.
func flatten(v any, t reflect.Type) any {
	t = deref(t)
	if t.Kind() != reflect.Struct {
		return elements(v, t, flatten)
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return v
	}
	fs := fieldsOf(t)
	for k, e := range obj {
		lk := strings.ToLower(k)
		if lk == "properties" {
			continue
		}
		if f, ok := fs.fields[lk]; ok {
			obj[k] = flatten(e, f.typ)
		}
	}
	if fs.properties != nil {
		if p, ok := obj["properties"].(map[string]any); ok {
			delete(obj, "properties")
			p = flatten(p, fs.properties).(map[string]any)
			for k, e := range p {
				if _, dup := obj[k]; !dup {
					obj[k] = e
				}
			}
		}
	}
	if id, ok := obj["id"].(string); ok {
		if rg := resourceGroupOf(id); rg != "" {
			if _, has := obj["resourceGroup"]; !has {
				obj["resourceGroup"] = rg
			}
		}
	}
	return obj
}
