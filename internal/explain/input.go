package explain

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"
)

// Format is the kind of offline input Parse found.
type Format string

const (
	FormatEvents   Format = "events-json" // kubectl get events -o json (List / EventList / one Event)
	FormatDescribe Format = "describe"    // kubectl describe pod
	FormatLines    Format = "lines"       // one message per line
)

// MaxInput is the most Parse reads from one input (a support bundle with
// 50,000 events is about 60 MB of JSON).
const MaxInput = 256 << 20

// Message is one message of offline input, with what the input tells about
// where it came from.
type Message struct {
	Ref       string    `json:"ref"` // namespace/name of the Event, or "line N"
	Namespace string    `json:"namespace,omitempty"`
	Kind      string    `json:"kind,omitempty"` // kind of the involved object
	Object    string    `json:"object,omitempty"`
	Node      string    `json:"node,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	Count     int       `json:"count,omitempty"`
	Time      time.Time `json:"time,omitempty"`
	Text      string    `json:"text"`
}

// Parse reads offline input and finds its format: a Kubernetes List or
// EventList in JSON (items of kind Event), `kubectl describe pod` text (its
// Events table), or plain text with one message per line. name is used in
// errors only.
func Parse(r io.Reader, name string) (Format, []Message, error) {
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
		msgs, err := parseEventsJSON(trimmed)
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

// eventJSON is the part of a core/v1 Event that explain reads.
type eventJSON struct {
	Kind     string `json:"kind"`
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	InvolvedObject struct {
		Kind      string `json:"kind"`
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"involvedObject"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
	Source  struct {
		Host string `json:"host"`
	} `json:"source"`
	ReportingInstance string               `json:"reportingInstance"`
	Count             int                  `json:"count"`
	Series            *struct{ Count int } `json:"series"`
	LastTimestamp     *time.Time           `json:"lastTimestamp"`
	EventTime         *time.Time           `json:"eventTime"`
	// events.k8s.io/v1 spells some fields differently.
	Note            string                                  `json:"note"`
	Regarding       *struct{ Kind, Name, Namespace string } `json:"regarding"`
	DeprecatedCount int                                     `json:"deprecatedCount"`
}

type listJSON struct {
	Kind  string            `json:"kind"`
	Items []json.RawMessage `json:"items"`
}

func parseEventsJSON(data []byte) ([]Message, error) {
	var raw []json.RawMessage
	if data[0] == '[' {
		if err := json.Unmarshal(data, &raw); err != nil {
			return nil, fmt.Errorf("not valid JSON: %v", oneLine(err))
		}
	} else {
		var l listJSON
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

var (
	reDescribeEvents = regexp.MustCompile(`(?m)^Events:\s*$[\r\n]+^\s+Type\s+Reason\s+Age\s+From\s+Message\s*$`)
	reDescribeField  = regexp.MustCompile(`^(Name|Namespace|Node):\s+(\S+)`)
	reColumns        = regexp.MustCompile(`\s{2,}`)
)

// parseDescribe reads the Events tables of one or more `kubectl describe pod`
// outputs. A message wrapped over several lines (kubectl wraps nothing, but
// terminals and tickets do) is joined back.
func parseDescribe(data []byte) ([]Message, error) {
	var (
		msgs          []Message
		ns, pod, node string
		inEvents      bool
		msgCol        = -1
		lineNo        int
		sc            = bufio.NewScanner(bytes.NewReader(data))
	)
	sc.Buffer(make([]byte, 64<<10), MaxMessage*2)
	for sc.Scan() {
		lineNo++
		line := strings.TrimRight(sc.Text(), "\r")
		if m := reDescribeField.FindStringSubmatch(line); m != nil {
			switch m[1] {
			case "Name":
				pod, ns, node, inEvents = m[2], "", "", false
			case "Namespace":
				ns = m[2]
			case "Node":
				node = m[2]
				if i := strings.IndexByte(node, '/'); i > 0 {
					node = node[:i]
				}
			}
			continue
		}
		if strings.HasPrefix(line, "Events:") {
			inEvents, msgCol = true, -1
			if strings.Contains(line, "<none>") {
				inEvents = false
			}
			continue
		}
		if !inEvents {
			continue
		}
		trim := strings.TrimSpace(line)
		if trim == "" {
			continue
		}
		if msgCol < 0 {
			if strings.HasPrefix(trim, "Type") {
				msgCol = strings.Index(line, "Message")
			}
			continue
		}
		if strings.HasPrefix(trim, "----") {
			continue
		}
		if len(line) > 0 && line[0] != ' ' && line[0] != '\t' {
			inEvents = false // the next section or pod
			continue
		}
		cols := reColumns.Split(trim, 5)
		if len(cols) == 5 && (cols[0] == "Normal" || cols[0] == "Warning") {
			m := Message{
				Ref:       fmt.Sprintf("pod %s line %d", joinNS(ns, pod), lineNo),
				Namespace: ns, Kind: "Pod", Object: pod, Node: node,
				Reason: cols[1], Text: cols[4], Count: countOf(cols[2]),
			}
			msgs = append(msgs, m)
			continue
		}
		// A continuation of the previous message.
		if n := len(msgs); n > 0 {
			msgs[n-1].Text += " " + trim
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading describe output: %v", err)
	}
	if len(msgs) == 0 {
		return nil, errors.New("kubectl describe output has an Events table but no event rows")
	}
	return msgs, nil
}

var reCount = regexp.MustCompile(`\(x(\d{1,9}) over`)

func countOf(age string) int {
	if m := reCount.FindStringSubmatch(age); m != nil {
		n := 0
		fmt.Sscanf(m[1], "%d", &n)
		return n
	}
	return 1
}

func joinNS(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

func parseLines(data []byte) []Message {
	var msgs []Message
	for i, line := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		msgs = append(msgs, Message{Ref: fmt.Sprintf("line %d", i+1), Text: t})
	}
	return msgs
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}
