package azure

import "fmt"

// The --from contract: one verbatim Azure CLI JSON output per file, named by
// the command that made it. collect writes exactly these.
const (
	FileAKS      = "aks-show.json"
	FileVNet     = "network-vnet-show.json"
	FilePeerings = "network-vnet-peering-list.json"
	FileZones    = "network-private-dns-zone-list.json"
	FileACR      = "acr-show.json"
	FileRoles    = "role-assignment-list.json"
	// FileVNets lists the node resource group's VNets: on an AKS-managed
	// VNet (no vnetSubnetId in the pools) the node subnet is there.
	FileVNets      = "network-vnet-list.json"
	filePrefSubnet = "network-vnet-subnet-show-"
	filePrefRT     = "network-route-table-show-"
	filePrefNSG    = "network-nsg-show-"
	filePrefLinks  = "network-private-dns-link-vnet-list-"
	filePrefRecs   = "network-private-dns-record-set-a-list-"
	filePrefPE     = "network-private-endpoint-show-"
	filePrefRoutes = "network-nic-show-effective-route-table-"
)

// ACRZone is the private DNS zone of ACR private endpoints.
const ACRZone = "privatelink.azurecr.io"

func FileSubnet(name string) string     { return filePrefSubnet + name + ".json" }
func FileRouteTable(name string) string { return filePrefRT + name + ".json" }
func FileNSG(name string) string        { return filePrefNSG + name + ".json" }
func FileLinks(zone string) string      { return filePrefLinks + zone + ".json" }
func FileRecords(zone string) string    { return filePrefRecs + zone + ".json" }
func FilePE(name string) string         { return filePrefPE + name + ".json" }
func FileRoutes(nic string) string      { return filePrefRoutes + nic + ".json" }

// Commands that produce each file, for warnings and docs.
func cmdAKS(rg, name string) string { return fmt.Sprintf("az aks show -g %s -n %s", rg, name) }
func cmdVNet(rg, name string) string {
	return fmt.Sprintf("az network vnet show -g %s -n %s", rg, name)
}
func cmdVNets(nodeRG string) string { return fmt.Sprintf("az network vnet list -g %s", nodeRG) }
func cmdSubnet(rg, vnet, name string) string {
	return fmt.Sprintf("az network vnet subnet show -g %s --vnet-name %s -n %s", rg, vnet, name)
}
func cmdRT(rg, name string) string {
	return fmt.Sprintf("az network route-table show -g %s -n %s", rg, name)
}
func cmdNSG(rg, name string) string { return fmt.Sprintf("az network nsg show -g %s -n %s", rg, name) }
func cmdPeerings(rg, vnet string) string {
	return fmt.Sprintf("az network vnet peering list -g %s --vnet-name %s", rg, vnet)
}
func cmdZones() string { return "az network private-dns zone list" }
func cmdLinks(rg, zone string) string {
	return fmt.Sprintf("az network private-dns link vnet list -g %s -z %s", rg, zone)
}
func cmdRecords(rg, zone string) string {
	return fmt.Sprintf("az network private-dns record-set a list -g %s -z %s", rg, zone)
}
func cmdACR(name string) string { return fmt.Sprintf("az acr show -n %s", name) }
func cmdPE(rg, name string) string {
	return fmt.Sprintf("az network private-endpoint show -g %s -n %s", rg, name)
}
func cmdRoles(scope string) string {
	return fmt.Sprintf("az role assignment list --scope %s --include-inherited", scope)
}
func cmdRoutes(rg, nic string) string {
	return fmt.Sprintf("az network nic show-effective-route-table -g %s -n %s", rg, nic)
}
