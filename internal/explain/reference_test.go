package explain

// The explain package as it was before the cluster-scale work (regexps run
// on every message, JSON read whole), kept as the reference the faster code
// must agree with: equivalence_test.go compares them.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"strings"
)

func refParse(r io.Reader, name string) (Format, []Message, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxInput+1))
	if err != nil {
		return "", nil, fmt.Errorf("%s: %v", name, err)
	}
	if len(data) > MaxInput {
		return "", nil, fmt.Errorf("%s: larger than %d MiB: split the input", name, MaxInput>>20)
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return "", nil, fmt.Errorf("%s: empty input: want `kubectl get events -o json`, `kubectl describe pod` output, or one message per line", name)
	}
	if bytes.IndexByte(trimmed, 0) >= 0 {
		return "", nil, fmt.Errorf("%s: binary data: want `kubectl get events -o json`, `kubectl describe pod` output, or one message per line", name)
	}
	switch {
	case trimmed[0] == '{' || trimmed[0] == '[':
		msgs, err := refParseEventsJSON(trimmed)
		if err != nil {
			return "", nil, fmt.Errorf("%s: %v", name, err)
		}
		return FormatEvents, msgs, nil
	case reDescribeEvents.Match(trimmed):
		msgs, err := parseDescribe(trimmed)
		if err != nil {
			return "", nil, fmt.Errorf("%s: %v", name, err)
		}
		return FormatDescribe, msgs, nil
	}
	return FormatLines, parseLines(trimmed), nil
}

type refListJSON struct {
	Kind  string            `json:"kind"`
	Items []json.RawMessage `json:"items"`
}

func refParseEventsJSON(data []byte) ([]Message, error) {
	var raw []json.RawMessage
	if data[0] == '[' {
		if err := json.Unmarshal(data, &raw); err != nil {
			return nil, fmt.Errorf("not valid JSON: %v", oneLine(err))
		}
	} else {
		var l refListJSON
		if err := json.Unmarshal(data, &l); err != nil {
			return nil, fmt.Errorf("not valid JSON: %v", oneLine(err))
		}
		switch l.Kind {
		case "List", "EventList":
			raw = l.Items
		case "Event":
			raw = []json.RawMessage{data}
		default:
			return nil, fmt.Errorf("JSON of kind %q: want a List or EventList of Events (kubectl get events -o json)", l.Kind)
		}
	}
	msgs := make([]Message, 0, len(raw))
	for i, item := range raw {
		var e eventJSON
		if err := json.Unmarshal(item, &e); err != nil {
			return nil, fmt.Errorf("item %d: not an Event: %v", i, oneLine(err))
		}
		if e.Kind != "" && e.Kind != "Event" {
			return nil, fmt.Errorf("item %d is of kind %q: want Events (kubectl get events -o json)", i, e.Kind)
		}
		m := Message{
			Namespace: e.Metadata.Namespace,
			Kind:      e.InvolvedObject.Kind,
			Object:    e.InvolvedObject.Name,
			Node:      e.Source.Host,
			Reason:    e.Reason,
			Count:     e.Count,
			Text:      e.Message,
		}
		if m.Text == "" {
			m.Text = e.Note
		}
		if e.Regarding != nil && m.Object == "" {
			m.Kind, m.Object = e.Regarding.Kind, e.Regarding.Name
		}
		if m.Node == "" {
			m.Node = e.ReportingInstance
		}
		if m.Count == 0 {
			m.Count = e.DeprecatedCount
		}
		if e.Series != nil && e.Series.Count > m.Count {
			m.Count = e.Series.Count
		}
		if e.LastTimestamp != nil {
			m.Time = *e.LastTimestamp
		} else if e.EventTime != nil {
			m.Time = *e.EventTime
		}
		m.Ref = e.Metadata.Name
		if e.Metadata.Namespace != "" {
			m.Ref = e.Metadata.Namespace + "/" + e.Metadata.Name
		}
		if m.Ref == "" {
			m.Ref = fmt.Sprintf("item %d", i)
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

// Patterns that pull facts out of a message. Every one is RE2 (linear time)
// and anchored on a fixed phrase of the runtime that emits it.
var (
	// The image, most specific phrase first.
	refReImage = []*regexp.Regexp{
		regexp.MustCompile(`(?i)failed to pull and unpack image "([^"\s]{1,512})"`),
		regexp.MustCompile(`(?i)failed to pull image "([^"\s]{1,512})"`),
		regexp.MustCompile(`(?i)back-off pulling image "([^"\s]{1,512})"`),
		regexp.MustCompile(`(?i)container image "([^"\s]{1,512})" is not present`),
		regexp.MustCompile(`(?i)failed to apply default image tag "([^"\s]{1,512})"`),
		regexp.MustCompile(`(?i)failed to resolve (?:reference|image) "([^"\s]{1,512})"`),
		regexp.MustCompile(`(?i)initializing source docker://([^\s:"]{1,256}(?::[^\s:"@]{1,128})?(?:@sha256:[0-9a-f]{64})?)`),
		regexp.MustCompile(`(?i)pulling image "([^"\s]{1,512})"`),
		regexp.MustCompile(`(?i)successfully pulled image "([^"\s]{1,512})"`),
		regexp.MustCompile(`(?i)image "([^"\s]{1,512})" already present`),
		regexp.MustCompile(`(?i)pull access denied for ([^\s,"]{1,512})`),
		regexp.MustCompile(`(?i)(?:error )?reading manifest ([^\s]{1,128}) in ([^\s:]{1,512})`),
	}
	// A request with its method and URL: Go's url.Error prints
	// `Get "https://..."` (Go >= 1.14) or `Get https://...` (older).
	refReRequest = regexp.MustCompile(`\b(Head|Get|Post|Put|HEAD|GET|POST|PUT) "?(https?://[^\s"]+)"?:?`)
	// containerd >= 1.7: `unexpected status from GET request to URL: 403 Forbidden`.
	refReStatusFrom = regexp.MustCompile(`(?i)unexpected status from (HEAD|GET|POST|PUT) request to (https?://[^\s"]+?):? `)
	// containerd 1.6: `unexpected status code URL: 429 Too Many Requests`.
	refReStatusCode = regexp.MustCompile(`(?i)unexpected status code (https?://[^\s"]+?): `)
	// containerd: `pulling from host HOST failed with status code [manifests TAG]: 401 Unauthorized`.
	refRePullingFromHost = regexp.MustCompile(`(?i)pulling from host ([^\s]{1,255}) failed with status code \[(\w+) [^\]]{0,256}\]`)
	// CRI-O / podman: `pinging container registry HOST:` and older `pinging docker registry HOST:`.
	refRePinging = regexp.MustCompile(`(?i)(?:error )?pinging (?:container|docker) registry ([^\s:]{1,255}(?::\d{1,5})?)`)
	// Go's dialer: `dial tcp 10.0.0.1:443: ...`, `dial tcp [fd00::1]:443: ...`.
	refReDial = regexp.MustCompile(`dial tcp ((?:\[[0-9a-fA-F:.%\w]{2,64}\]|[0-9.]{7,15}):\d{1,5})`)
	// Go's resolver: `lookup HOST on NS:53: no such host`, `lookup HOST: no such host`.
	refReLookup = regexp.MustCompile(`lookup ([^\s:]{1,255})(?: on ((?:\[[0-9a-fA-F:.%\w]{2,64}\]|[0-9.]{7,15}):\d{1,5}))?:`)
	// Docker Hub rate-limit pages, S3/Azure XML error codes.
	refReXMLCode = regexp.MustCompile(`<Code>(\w{1,64})</Code>`)
)

// extractImage returns the image named in msg, or "".
func refExtractImage(msg string) string {
	for i, re := range refReImage {
		m := re.FindStringSubmatch(msg)
		if m == nil {
			continue
		}
		if i == len(refReImage)-1 { // reading manifest TAG in REPO
			return strings.TrimSuffix(m[2], ":") + ":" + m[1]
		}
		return strings.TrimSuffix(m[1], ":")
	}
	return ""
}

// extractRequest finds the innermost (last) request of a message.
func refExtractRequest(msg string) request {
	var r request
	pick := func(method, raw string) {
		raw = strings.TrimRight(raw, ":.,;)")
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" {
			return
		}
		r.Method = strings.ToUpper(method)
		r.URL = u
		r.Host = strings.ToLower(u.Host)
	}
	// Later phrases wrap earlier causes in Go's error chains, but the URL of
	// the innermost request is the last one printed.
	last := -1
	for _, m := range refReRequest.FindAllStringSubmatchIndex(msg, 16) {
		if m[0] > last {
			last = m[0]
			pick(msg[m[2]:m[3]], msg[m[4]:m[5]])
		}
	}
	if m := refReStatusFrom.FindAllStringSubmatchIndex(msg, 16); len(m) > 0 {
		x := m[len(m)-1]
		if x[0] > last {
			last = x[0]
			pick(msg[x[2]:x[3]], msg[x[4]:x[5]])
		}
	}
	if m := refReStatusCode.FindAllStringSubmatchIndex(msg, 16); len(m) > 0 {
		x := m[len(m)-1]
		if x[0] > last {
			last = x[0]
			pick("GET", msg[x[2]:x[3]])
		}
	}
	if r.URL != nil {
		r.Path = pathKind(r.URL)
		return r
	}
	if m := refRePullingFromHost.FindStringSubmatch(msg); m != nil {
		r.Host = strings.ToLower(m[1])
		r.Method = "HEAD"
		switch strings.ToLower(m[2]) {
		case "manifests":
			r.Path = "manifests"
		case "blobs":
			r.Path = "blobs"
		}
		return r
	}
	if m := refRePinging.FindStringSubmatch(msg); m != nil {
		r.Host = strings.ToLower(m[1])
		r.Method = "GET"
		r.Path = "ping"
	}
	return r
}

// extractDial returns the address of a failed TCP dial, or "".
func refExtractDial(msg string) string {
	m := refReDial.FindAllStringSubmatch(msg, 16)
	if len(m) == 0 {
		return ""
	}
	return m[len(m)-1][1]
}

// extractLookup returns the host a DNS lookup was for and the nameserver
// asked, or "".
func refExtractLookup(msg string) (host, nameserver string) {
	m := refReLookup.FindAllStringSubmatch(msg, 16)
	if len(m) == 0 {
		return "", ""
	}
	x := m[len(m)-1]
	return strings.ToLower(strings.TrimSuffix(x[1], ".")), x[2]
}
