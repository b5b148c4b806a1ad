package report

// The far side of the path (issue 38): what the walk learns past the
// node when a hop stalls, and where packets stop.

// RouteFacts is how the node's kernel sends to one address (`ip route
// get`): the interface and its MTU, the route's mtu and advmss metrics
// (a path MTU the kernel learned from ICMP shows as mtu), gateway and
// source.
type RouteFacts struct {
	Destination    string `json:"destination"`
	Interface      string `json:"interface,omitempty"`
	InterfaceIndex int    `json:"-"`
	InterfaceMTU   int    `json:"interfaceMtu,omitempty"`
	MTU            int    `json:"mtu,omitempty"`    // the route's mtu metric (0: none, the interface's applies)
	AdvMSS         int    `json:"advmss,omitempty"` // the route's advmss metric (0: none)
	Gateway        string `json:"gateway,omitempty"`
	Source         string `json:"source,omitempty"`
	Error          string `json:"error,omitempty"`
}

// MTU test results.
const (
	// MTUBlackHole: a connection with a clamped MSS completed where the
	// node's own stalled: the path MTU is lower than the node's and the
	// ICMP that would say so never arrives.
	MTUBlackHole = "black-hole"
	// MTUNotMTU: clamped connections stalled too: not the path MTU.
	MTUNotMTU = "not-mtu"
	// MTUNotRepeated: a new connection without clamping completed: the
	// stall did not repeat.
	MTUNotRepeated = "not-repeated"
	// MTUInterrupted: the walk ended (its deadline, another failure)
	// before any connection completed.
	MTUInterrupted = "interrupted"
)

// MTUTest is the path MTU test of one hop that stalled after TCP
// connected: the same exchange on new connections whose MSS is clamped
// (TCP_MAXSEG before connect), searching for the largest segment that
// gets through.
type MTUTest struct {
	After   string `json:"after"`   // what stalled: tls (the handshake) or blob (a body)
	Address string `json:"address"` // ip:port
	Result  string `json:"result"`  // black-hole | not-mtu | not-repeated | interrupted
	// NodeMSS is the MSS the node's own connections offer toward the
	// address (advmss, else the route's or interface's MTU less 40 for
	// IPv4, 60 for IPv6).
	NodeMSS int `json:"nodeMss"`
	// WorkingMSS is the largest MSS that completed, FailingMSS the
	// smallest that stalled (the node's own when none above WorkingMSS
	// was tried).
	WorkingMSS int `json:"workingMss,omitempty"`
	FailingMSS int `json:"failingMss,omitempty"`
	// PathMTU is WorkingMSS plus the IP and TCP headers (40 for IPv4, 60
	// for IPv6), when FailingMSS is WorkingMSS+1; else the lowest it may
	// be.
	PathMTU      int          `json:"pathMtu,omitempty"`
	PathMTUExact bool         `json:"pathMtuExact,omitempty"`
	Route        *RouteFacts  `json:"route,omitempty"`
	Attempts     []MSSAttempt `json:"attempts"`
	DurationMS   float64      `json:"durationMs"` // the extra time the test took
	BudgetMS     float64      `json:"budgetMs"`
	Note         string       `json:"note,omitempty"`
}

// MSSAttempt is one connection of the MTU test.
type MSSAttempt struct {
	MSS        int     `json:"mss"`    // 0: not clamped (the node's own)
	Result     string  `json:"result"` // completed | stalled | failed | cancelled
	DurationMS float64 `json:"durationMs"`
	Error      string  `json:"error,omitempty"`
}

// Trace hop results.
const (
	HopTimeExceeded = "time-exceeded" // a router on the way answered: its TTL ran out
	HopUnreachable  = "unreachable"   // a router answered it has no route (or the node has none)
	HopReached      = "reached"       // the destination answered SYN-ACK
	HopRefused      = "refused"       // the destination (or a firewall in its place) answered with a reset
	HopSilent       = "silent"        // nothing came back in time
	HopError        = "error"         // the probe could not be sent
)

// Trace is where the packets to one address and port stop: a TCP SYN per
// TTL from 1 up, and the ICMP time-exceeded answers of the routers on the
// way (no privilege needed: connect(2) with IP_TTL and IP_RECVERR).
type Trace struct {
	Destination string     `json:"destination"` // ip:port
	Method      string     `json:"method"`      // tcp-syn
	MaxHops     int        `json:"maxHops"`
	Hops        []TraceHop `json:"hops,omitempty"`
	Reached     bool       `json:"reached"`
	// LastAnswered is the TTL of the last router that answered (0: none)
	// and LastAddress its address; FirstSilent the first TTL after it
	// that never answered (0: none, or the destination was reached).
	LastAnswered int     `json:"lastAnswered,omitempty"`
	LastAddress  string  `json:"lastAddress,omitempty"`
	FirstSilent  int     `json:"firstSilent,omitempty"`
	DurationMS   float64 `json:"durationMs"`
	Skipped      string  `json:"skipped,omitempty"` // why no trace ran
}

// TraceHop is one TTL of a trace.
type TraceHop struct {
	TTL     int     `json:"ttl"`
	Address string  `json:"address,omitempty"`
	Result  string  `json:"result"`
	RTTMS   float64 `json:"rttMs,omitempty"`
	Error   string  `json:"error,omitempty"`
}

// TraceSummary is a trace in the compact form a probe Pod's termination
// message carries: each hop's address, "*" for a silent one.
type TraceSummary struct {
	Destination string   `json:"dst"`
	Reached     bool     `json:"reached,omitempty"`
	Hops        []string `json:"hops"`
}

// SweepTraceCompare is one failing node's trace beside a healthy node's
// to the same address: the hop where they part.
type SweepTraceCompare struct {
	Destination string          `json:"destination"`
	Failing     string          `json:"failing"` // node names
	Healthy     string          `json:"healthy"`
	Rows        []SweepTraceRow `json:"rows"`
	// PartAt is the first TTL where the two differ (0: they do not).
	PartAt  int    `json:"partAt,omitempty"`
	Finding string `json:"finding"`
}

// SweepTraceRow is one TTL of the two traces.
type SweepTraceRow struct {
	TTL     int    `json:"ttl"`
	Failing string `json:"failing"` // an address, or "*"
	Healthy string `json:"healthy"`
}

// TransferPace is how fast the blobs came, and what that means for the
// whole pull: its projected time (the manifest's sizes at the measured
// rate) against --pull-budget, and the longest wait without a byte
// against the runtime's progress timeout.
type TransferPace struct {
	Hosts []HostRate `json:"hosts,omitempty"`
	// ImageBytes is the config and every layer of the manifest;
	// ProjectedMS the whole pull at the measured rate (a full walk: what
	// it took; --quick: none, its bytes are too few to time).
	ImageBytes  int64   `json:"imageBytes"`
	ProjectedMS float64 `json:"projectedMs,omitempty"`
	// MaxGapMS is the longest time no blob received a byte while
	// requests were open: what a progress timeout measures.
	MaxGapMS     float64 `json:"maxGapMs"`
	MaxGapHost   string  `json:"maxGapHost,omitempty"`
	PullBudgetMS float64 `json:"pullBudgetMs,omitempty"`
	// ProgressTimeoutMS is the node's runtime's progress timeout (0:
	// none or unknown); ProgressNote says which and why.
	ProgressTimeoutMS float64 `json:"progressTimeoutMs,omitempty"`
	ProgressNote      string  `json:"progressNote,omitempty"`
}

// HostRate is the blobs of one host: bytes, the time from its first
// request to its last byte, and the rate.
type HostRate struct {
	Host       string  `json:"host"`
	Blobs      int     `json:"blobs"`
	Bytes      int64   `json:"bytes"`
	DurationMS float64 `json:"durationMs"`
	MBps       float64 `json:"mbps"`
}
