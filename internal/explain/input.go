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
	"unicode"
	"unicode/utf8"

	"github.com/pullpath/pullpath/internal/nodeplace"
	"github.com/pullpath/pullpath/internal/units"
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
//
// JSON is read as a stream, one item at a time, so that a support bundle of
// 100 MB costs the messages it holds, not the bytes and their decoding
// (kubectl writes "items" before "kind": the kind is checked at the end).
// The other formats are read whole.
func Parse(r io.Reader, name string) (Format, []Message, error) {
	in := &inputReader{r: io.LimitReader(r, MaxInput+1)}
	br := bufio.NewReaderSize(in, 64<<10)
	// 1. Leading whitespace, as bytes.TrimSpace sees it.
	var lead []byte
	first := rune(-1)
	for {
		c, size, err := br.ReadRune()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", nil, fmt.Errorf("%s: %v", name, err)
		}
		if c == utf8.RuneError && size == 1 || !unicode.IsSpace(c) {
			first = c
			if err := br.UnreadRune(); err != nil {
				return "", nil, fmt.Errorf("%s: %v", name, err)
			}
			break
		}
		lead = utf8.AppendRune(lead, c)
	}
	// 2. JSON: streamed.
	if first == '{' || first == '[' {
		msgs, err := parseEventsJSON(br)
		if err != nil {
			// The whole input decides the errors that win over a
			// JSON error: its size, then binary data.
			if _, derr := io.Copy(io.Discard, br); derr != nil {
				return "", nil, fmt.Errorf("%s: %v", name, derr)
			}
		}
		switch {
		case in.n > MaxInput:
			return "", nil, fmt.Errorf("%s: larger than %d MiB: split the input", name, MaxInput>>20)
		case in.nul:
			return "", nil, fmt.Errorf("%s: binary data: want `kubectl get events -o json`, `kubectl describe pod` output, or one message per line", name)
		case err != nil:
			return "", nil, fmt.Errorf("%s: %v", name, err)
		}
		return FormatEvents, msgs, nil
	}
	// 3. Describe output or lines: read whole.
	rest, err := io.ReadAll(br)
	if err != nil {
		return "", nil, fmt.Errorf("%s: %v", name, err)
	}
	data := append(lead, rest...)
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
	if reDescribeEvents.Match(trimmed) {
		msgs, err := parseDescribe(trimmed)
		if err != nil {
			return "", nil, fmt.Errorf("%s: %v", name, err)
		}
		return FormatDescribe, msgs, nil
	}
	return FormatLines, parseLines(trimmed), nil
}

// inputReader counts the bytes read and notes a NUL byte (binary data).
type inputReader struct {
	r   io.Reader
	n   int64
	nul bool
}

func (c *inputReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if !c.nul && bytes.IndexByte(p[:n], 0) >= 0 {
		c.nul = true
	}
	return n, err
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

// parseEventsJSON reads one JSON value from br: an array of Events, a List
// or EventList of Events, or one Event; nothing but whitespace may follow.
//
//  1. An array: each element is decoded as an Event as it comes.
//  2. An object: its members are walked; "items" is decoded element by
//     element, "kind" is kept, every other member is kept raw (small, and
//     needed only when the object is itself an Event).
//  3. At the end, the kind decides: List or EventList gives the items (or
//     the first item that is not an Event), Event gives the object itself.
func parseEventsJSON(br *bufio.Reader) ([]Message, error) {
	r := &eventsReader{dec: json.NewDecoder(br)}
	tok, err := r.dec.Token()
	if err != nil {
		return nil, notJSON(err)
	}
	switch tok {
	case json.Delim('['):
		if err := r.items(); err != nil {
			return nil, err
		}
		if err := endOfJSON(r.dec, br); err != nil {
			return nil, err
		}
		if r.itemErr != nil {
			return nil, r.itemErr
		}
		return nonNil(r.msgs), nil
	case json.Delim('{'):
		return r.object(br)
	}
	return nil, errors.New("not valid JSON: want an object or an array")
}

// eventsReader reads kubectl's events JSON token by token: an array of
// Events, a List or EventList of them, or one Event.
type eventsReader struct {
	dec     *json.Decoder
	msgs    []Message
	itemErr error // the first item that is not an Event
}

// items reads an array's items (its '[' read) up to its ']': the
// Events' messages, or the first item that is not an Event.
func (r *eventsReader) items() error {
	r.msgs, r.itemErr = r.msgs[:0], nil
	for i := 0; r.dec.More(); i++ {
		var e eventJSON
		if err := r.dec.Decode(&e); err != nil {
			if syntaxError(err) {
				return notJSON(err)
			}
			if r.itemErr == nil {
				r.itemErr = fmt.Errorf("item %d: not an Event: %v", i, units.OneLine(err.Error()))
			}
			continue
		}
		if e.Kind != "" && e.Kind != "Event" {
			if r.itemErr == nil {
				r.itemErr = fmt.Errorf("item %d is of kind %q: want Events (kubectl get events -o json)", i, e.Kind)
			}
			continue
		}
		if r.itemErr == nil {
			r.msgs = append(r.msgs, e.message(i))
		}
	}
	if _, err := r.dec.Token(); err != nil { // ]
		return notJSON(err)
	}
	return nil
}

// object reads an object (its '{' read) to the end of the input: a List or
// EventList of Events, or one Event.
func (r *eventsReader) object(br *bufio.Reader) ([]Message, error) {
	kind, hasItems, members, err := r.members()
	if err != nil {
		return nil, err
	}
	if err := endOfJSON(r.dec, br); err != nil {
		return nil, err
	}
	switch kind {
	case "List", "EventList":
		if r.itemErr != nil {
			return nil, r.itemErr
		}
		if !hasItems {
			return []Message{}, nil
		}
		return nonNil(r.msgs), nil
	case "Event":
		var e eventJSON
		if err := json.Unmarshal(members, &e); err != nil {
			return nil, fmt.Errorf("item 0: not an Event: %v", units.OneLine(err.Error()))
		}
		return []Message{e.message(0)}, nil
	}
	return nil, fmt.Errorf("JSON of kind %q: want a List or EventList of Events (kubectl get events -o json)", kind)
}

// members reads an object's members up to its '}': items through items,
// the object's kind, and the object without items (for a single Event).
func (r *eventsReader) members() (kind string, hasItems bool, members []byte, err error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for r.dec.More() {
		t, err := r.dec.Token()
		if err != nil {
			return "", false, nil, notJSON(err)
		}
		key, _ := t.(string)
		// encoding/json matches member names case-insensitively.
		if strings.EqualFold(key, "items") {
			t, err := r.dec.Token()
			if err != nil {
				return "", false, nil, notJSON(err)
			}
			switch t {
			case json.Delim('['):
				hasItems = true
				if err := r.items(); err != nil {
					return "", false, nil, err
				}
			case nil:
				hasItems, r.msgs, r.itemErr = false, nil, nil
			default:
				return "", false, nil, errors.New("not valid JSON: items is not an array")
			}
			continue
		}
		var raw json.RawMessage
		if err := r.dec.Decode(&raw); err != nil {
			return "", false, nil, notJSON(err)
		}
		if strings.EqualFold(key, "kind") {
			var k *string
			if err := json.Unmarshal(raw, &k); err != nil {
				return "", false, nil, notJSON(err)
			}
			kind = ""
			if k != nil {
				kind = *k
			}
		}
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		name, _ := json.Marshal(key)
		b.Write(name)
		b.WriteByte(':')
		b.Write(raw)
	}
	if _, err := r.dec.Token(); err != nil { // }
		return "", false, nil, notJSON(err)
	}
	b.WriteByte('}')
	return kind, hasItems, b.Bytes(), nil
}

// syntaxError tells a broken JSON text from a well-formed value of the
// wrong shape (which the decoder reads past).
func syntaxError(err error) bool {
	var se *json.SyntaxError
	return errors.As(err, &se) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

// endOfJSON: nothing but whitespace may follow the top-level value.
func endOfJSON(dec *json.Decoder, br *bufio.Reader) error {
	tail := bufio.NewReader(io.MultiReader(dec.Buffered(), br))
	for {
		c, _, err := tail.ReadRune()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if !unicode.IsSpace(c) {
			return fmt.Errorf("not valid JSON: invalid character %q after top-level value", c)
		}
	}
}

func notJSON(err error) error {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("not valid JSON: %v", units.OneLine(err.Error()))
}

func nonNil(msgs []Message) []Message {
	if msgs == nil {
		return []Message{}
	}
	return msgs
}

// message reads the Event at index i of its list into a Message.
func (e *eventJSON) message(i int) Message {
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
	m.Time = nodeplace.EventTime(deref(e.LastTimestamp), deref(e.EventTime), time.Time{})
	m.Ref = e.Metadata.Name
	if e.Metadata.Namespace != "" {
		m.Ref = e.Metadata.Namespace + "/" + e.Metadata.Name
	}
	if m.Ref == "" {
		m.Ref = fmt.Sprintf("item %d", i)
	}
	return m
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

// deref is *t, or the zero time when t is nil (an Event's unset time).
func deref(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}
