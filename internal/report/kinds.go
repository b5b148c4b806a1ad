package report

// The kind of every pullpath/v1 report, in one place: a script tells one
// report from another by its kind, so a kind never changes once released.
const (
	ProbeKind    = "ProbeReport"    // pullpath probe
	ExplainKind  = "ExplainReport"  // pullpath explain
	SweepKind    = "SweepReport"    // pullpath sweep
	DiagnoseKind = "DiagnoseReport" // pullpath diagnose
	LabKind      = "LabReport"      // pullpath lab run|test|demo

	// The node agent's /status, and `pullpath monitor status` over the fleet.
	MonitorStatusKind = "MonitorStatus"
	MonitorFleetKind  = "MonitorFleetReport"

	// The cloud audits. They share AuditReport's shape, so a script reads
	// `subnets[].checks[]` and `changes[]` the same way for every cloud.
	AWSAuditKind   = "AWSAuditReport"
	AzureAuditKind = "AzureAuditReport"
	GCPAuditKind   = "GCPAuditReport"
)
