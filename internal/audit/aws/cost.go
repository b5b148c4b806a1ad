package aws

import (
	"fmt"

	"github.com/pullpath/pullpath/internal/audit"
	"github.com/pullpath/pullpath/internal/report"
)

// costNote estimates the monthly cost of the layers through NAT against the
// endpoints, when a size is known and some subnet pulls layers
// through a NAT gateway (or the caller asked with --image-size).
func costNote(m *Model, subnets []*NodeSubnet, o audit.Focus) *report.CostEstimate {
	if o.ImageBytes <= 0 {
		return nil
	}
	pulls := o.PullsPerDay
	if pulls <= 0 {
		pulls = 1
	}
	azs := map[string]bool{}
	throughNAT := 0
	for _, ns := range subnets {
		if ns.Subnet == nil {
			continue
		}
		azs[ns.AZ] = true
		if !m.path(ns, SvcS3).internet {
			continue
		}
		if r := m.lookupRoute(ns.RouteTable, anyIPv4); r != nil && str(r.Route.NatGatewayId) != "" && r.Route.State != "blackhole" {
			throughNAT++
		}
	}
	p := PriceFor(m.Region)
	gb := float64(o.ImageBytes) * float64(pulls) * 30 / 1e9
	nAZ := len(azs)
	if nAZ == 0 {
		nAZ = 1
	}
	const hours = 730
	// Interface endpoints for the whole pull: ecr.api, ecr.dkr and s3, one
	// ENI per AZ each; data per GB.
	iface := 3*float64(nAZ)*p.InterfaceHour*hours + gb*p.InterfaceGB
	e := &report.CostEstimate{
		Region: m.Region, ImageBytes: o.ImageBytes, PullsPerDay: pulls, GBPerMonth: round2(gb),
		Options: []report.CostLine{
			{Path: "nat-gateway", MonthlyUSD: round2(gb * p.NATGB), Basis: fmt.Sprintf("%.1f GB x $%.3f/GB NAT data processing (the NAT's hourly charge is paid anyway)", gb, p.NATGB)},
			{Path: "s3-gateway-endpoint", MonthlyUSD: 0, Basis: "S3 gateway endpoints have no hourly or data charge"},
			{Path: "interface-endpoints", MonthlyUSD: round2(iface), Basis: fmt.Sprintf("3 endpoints x %d AZ x %d h x $%.3f/h + %.1f GB x $%.3f/GB", nAZ, hours, p.InterfaceHour, gb, p.InterfaceGB)},
		},
		PriceSource: PriceSource, PriceAsOf: PriceAsOf,
	}
	if throughNAT > 0 {
		e.Note = fmt.Sprintf("%d of %d subnets pull layers through a NAT gateway; an S3 gateway endpoint on their route tables carries the layers for free", throughNAT, len(subnets))
	} else {
		e.Note = "no subnet pulls layers through a NAT gateway today"
	}
	return e
}

func round2(f float64) float64 { return float64(int64(f*100+0.5)) / 100 }
