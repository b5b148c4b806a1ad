package gcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/pullpath/pullpath/internal/units"
)

// listMembers are the members a REST list page holds its resources in:
// Compute's items, Cloud DNS's managedZones, rrsets and policies, Access
// Context Manager's servicePerimeters.
var listMembers = []string{"items", "managedZones", "rrsets", "policies", "servicePerimeters"}

// aggregatedMembers are the members of a Compute aggregated list's scope
// ({"items": {"zones/Z": {"instances": [...]}, "regions/R": {"routers": [...]}}}).
var aggregatedMembers = []string{"instances", "routers"}

// listItems reads a list file in any of the shapes readList takes and
// returns its resources, in order.
func listItems(name string, data []byte) ([]json.RawMessage, error) {
	data = bytes.TrimSpace(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
	if len(data) == 0 {
		return nil, errors.New("empty")
	}
	var values []json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		var v json.RawMessage
		err := dec.Decode(&v)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("not JSON (%s)", units.Clip(err.Error(), 200))
		}
		values = append(values, v)
	}
	// One array: gcloud's list, or an array of pages.
	if len(values) == 1 && values[0][0] == '[' {
		var arr []json.RawMessage
		if err := json.Unmarshal(values[0], &arr); err != nil {
			return nil, fmt.Errorf("not a JSON array (%s)", units.Clip(err.Error(), 200))
		}
		if len(arr) == 0 || !allPages(arr) {
			return arr, nil
		}
		values = arr
	}
	var out []json.RawMessage
	for i, v := range values {
		items, err := pageItems(v)
		if err != nil {
			if len(values) > 1 {
				return nil, fmt.Errorf("page %d: %v", i+1, err)
			}
			return nil, err
		}
		out = append(out, items...)
	}
	return out, nil
}

// allPages: every element of an array is a list page (an object with a
// list member and a kind or page token), not a resource.
func allPages(arr []json.RawMessage) bool {
	for _, v := range arr {
		var top map[string]json.RawMessage
		if json.Unmarshal(v, &top) != nil {
			return false
		}
		if _, ok := pageMember(top); !ok {
			return false
		}
		_, kind := top["kind"]
		_, token := top["nextPageToken"]
		_, id := top["id"]
		if !kind && !token && !(id && top["items"] != nil) {
			// A resource that happens to have an "items" member (a
			// metadata item list) is not a page.
			if _, plain := top["name"]; plain {
				return false
			}
		}
	}
	return true
}

func pageMember(top map[string]json.RawMessage) (string, bool) {
	for _, k := range listMembers {
		if _, ok := top[k]; ok {
			return k, true
		}
	}
	return "", false
}

// pageItems are the resources of one REST list page.
func pageItems(page json.RawMessage) ([]json.RawMessage, error) {
	if len(page) == 0 || page[0] != '{' {
		return nil, errors.New("not a JSON array nor a list page")
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(page, &top); err != nil {
		return nil, fmt.Errorf("not JSON (%s)", units.Clip(err.Error(), 200))
	}
	k, ok := pageMember(top)
	if !ok {
		if len(top) == 0 {
			// An empty page: the API leaves the member out when there
			// is nothing to list.
			return nil, nil
		}
		if _, kind := top["kind"]; kind {
			if _, tok := top["nextPageToken"]; tok || strings.HasSuffix(kindOf(top), "List") {
				return nil, nil // a page with no resources
			}
		}
		return nil, fmt.Errorf("not a JSON array nor a list page: an object holding %s", keysOf(top))
	}
	raw := bytes.TrimSpace(top[k])
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '[' {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, fmt.Errorf("%s: %s", k, units.Clip(err.Error(), 200))
		}
		return items, nil
	}
	// Compute's aggregated list: items by scope.
	var scopes map[string]map[string]json.RawMessage
	if err := json.Unmarshal(raw, &scopes); err != nil {
		return nil, fmt.Errorf("%s is neither a list nor an aggregated list's scopes (%s)", k, units.Clip(err.Error(), 200))
	}
	names := make([]string, 0, len(scopes))
	for n := range scopes {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []json.RawMessage
	for _, n := range names {
		for _, member := range aggregatedMembers {
			list, ok := scopes[n][member]
			if !ok {
				continue
			}
			var items []json.RawMessage
			if err := json.Unmarshal(list, &items); err != nil {
				return nil, fmt.Errorf("%s[%q].%s: %s", k, n, member, units.Clip(err.Error(), 200))
			}
			out = append(out, items...)
		}
	}
	return out, nil
}

func kindOf(top map[string]json.RawMessage) string {
	var k string
	_ = json.Unmarshal(top["kind"], &k)
	return k
}

func keysOf(top map[string]json.RawMessage) string {
	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) > 6 {
		keys = append(keys[:6], "...")
	}
	return strings.Join(keys, ", ")
}

// unwrapRecording is the body of a recorded HTTP answer ({"headers": {...,
// "status": "200"}, "body": ...}, as Cloud Custodian's GCP flights save
// the REST API's responses), nil when data is not one; a recorded error
// status is an error naming it.
func unwrapRecording(data []byte) ([]byte, error) {
	trimmed := bytes.TrimSpace(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")))
	if len(trimmed) == 0 || trimmed[0] != '{' || !bytes.Contains(trimmed, []byte(`"headers"`)) {
		return nil, nil
	}
	var rec struct {
		Headers map[string]json.RawMessage `json:"headers"`
		Body    json.RawMessage            `json:"body"`
	}
	if json.Unmarshal(trimmed, &rec) != nil || rec.Headers == nil || len(rec.Body) == 0 {
		return nil, nil
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(trimmed, &top) != nil || len(top) != 2 {
		return nil, nil // a resource with a headers member, not a recording
	}
	var status string
	_ = json.Unmarshal(rec.Headers["status"], &status)
	if status != "" && !strings.HasPrefix(status, "2") {
		return nil, fmt.Errorf("a recorded answer with HTTP status %s, not the resource: want the output of the command or the API's answer", status)
	}
	return rec.Body, nil
}
