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
