package aws

// The price table of the cost note, in one place.
//
// Source: https://aws.amazon.com/vpc/pricing/ (NAT gateway: "Price per GB
// data processed") and https://aws.amazon.com/privatelink/pricing/
// (interface endpoint: "Price per VPC endpoint per AZ ($/hour)", "Price per
// GB data processed", first PB tier). S3 gateway endpoints are free
// (https://docs.aws.amazon.com/vpc/latest/privatelink/gateway-endpoints.html).
// Prices in USD, on-demand; update PriceAsOf with the table.
const (
	PriceSource = "aws.amazon.com/vpc/pricing and aws.amazon.com/privatelink/pricing (on-demand, USD)"
	PriceAsOf   = "2026-12-01 (table last checked by hand; verify before quoting)"
)

// Prices of one region.
type Prices struct {
	NATGB         float64 // NAT gateway data processing, per GB
	InterfaceHour float64 // interface endpoint, per endpoint per AZ per hour
	InterfaceGB   float64 // interface endpoint data processing, per GB (first PB)
}

// defaultPrices are us-east-1's, which most regions share.
var defaultPrices = Prices{NATGB: 0.045, InterfaceHour: 0.01, InterfaceGB: 0.01}

// regionPrices are the regions that differ from the default.
var regionPrices = map[string]Prices{
	"us-west-1":      {NATGB: 0.048, InterfaceHour: 0.011, InterfaceGB: 0.01},
	"eu-west-1":      {NATGB: 0.048, InterfaceHour: 0.011, InterfaceGB: 0.01},
	"eu-west-2":      {NATGB: 0.05, InterfaceHour: 0.011, InterfaceGB: 0.01},
	"eu-central-1":   {NATGB: 0.052, InterfaceHour: 0.012, InterfaceGB: 0.01},
	"ap-northeast-1": {NATGB: 0.062, InterfaceHour: 0.014, InterfaceGB: 0.01},
	"ap-northeast-2": {NATGB: 0.059, InterfaceHour: 0.013, InterfaceGB: 0.01},
	"ap-southeast-1": {NATGB: 0.059, InterfaceHour: 0.013, InterfaceGB: 0.01},
	"ap-southeast-2": {NATGB: 0.059, InterfaceHour: 0.013, InterfaceGB: 0.01},
	"ap-south-1":     {NATGB: 0.056, InterfaceHour: 0.011, InterfaceGB: 0.01},
	"sa-east-1":      {NATGB: 0.093, InterfaceHour: 0.017, InterfaceGB: 0.01},
}

// PriceFor is a region's prices (the default where the table has none).
func PriceFor(region string) Prices {
	if p, ok := regionPrices[region]; ok {
		return p
	}
	return defaultPrices
}
