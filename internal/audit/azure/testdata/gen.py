#!/usr/bin/env python3
"""Writes the audit's fixtures: a healthy hub-and-spoke account (the private
endpoint sits beyond the hub's VPN gateway) and one folder per failing check,
each in the Azure CLI's real shapes (properties flattened; SDK-based az aks /
az acr / az role print null for absent fields, AAZ-based az network commands
omit them; 2-space indent, sorted keys). Run from this folder:
python3 gen.py. The Go tests read the folders; nothing runs this in CI."""
import copy, json, os, shutil

SUB = "3f2b6c1e-8d4a-4b7e-9c1f-2a5d6e7f8a9b"
TENANT = "72f988bf-86f1-41af-91ab-2d7cd011db47"
def rid(rg, prov, *parts):
    return f"/subscriptions/{SUB}/resourceGroups/{rg}/providers/{prov}/" + "/".join(parts)

NODE_RG = "MC_rg-aks_aks-prod_eastus"
VNET = rid("rg-net", "Microsoft.Network", "virtualNetworks", "vnet-aks")
HUB = rid("rg-hub", "Microsoft.Network", "virtualNetworks", "vnet-hub")
SUBNETS = {"system": ("snet-system", "10.10.0.0/22", "rt-system", "nsg-system"),
           "apps": ("snet-apps", "10.10.4.0/22", "rt-apps", "nsg-apps")}
KUBELET_OBJ = "5d6e7f80-1a2b-4c3d-8e9f-0a1b2c3d4e5f"
ACR = rid("rg-acr", "Microsoft.ContainerRegistry", "registries", "contosoacr")
PE = rid("rg-shared", "Microsoft.Network", "privateEndpoints", "pe-contosoacr")
ZONE = rid("rg-dns", "Microsoft.Network", "privateDnsZones", "privatelink.azurecr.io")
PE_ADDRS = {"contosoacr.azurecr.io": "10.50.1.4",
            "contosoacr.eastus.data.azurecr.io": "10.50.1.5",
            "contosoacr.westeurope.data.azurecr.io": "10.50.1.6"}
ACRPULL = "7f951dda-4ed3-4680-a7ca-43fe172d538d"

def subnet_id(pool):
    return VNET + "/subnets/" + SUBNETS[pool][0]

def vmss(pool):
    return f"aks-{pool}-12345678-vmss"

def aks():
    pools = []
    for pool, count, mode in (("system", 3, "System"), ("apps", 5, "User")):
        pools.append({"availabilityZones": ["1", "2", "3"], "count": count, "enableAutoScaling": False,
                      "maxPods": 110, "mode": mode, "name": pool, "nodeImageVersion": "AKSUbuntu-2204gen2containerd-202411.12.0",
                      "orchestratorVersion": "1.30.5", "osDiskSizeGb": 128, "osType": "Linux", "podSubnetId": None,
                      "powerState": {"code": "Running"}, "provisioningState": "Succeeded", "type": "VirtualMachineScaleSets",
                      "vmSize": "Standard_D4s_v5", "vnetSubnetId": subnet_id(pool), "nodeTaints": None, "tags": None})
    return {"aadProfile": None, "addonProfiles": None, "agentPoolProfiles": pools, "apiServerAccessProfile": None,
            "azurePortalFqdn": "aks-prod-dns-4f1e2a.portal.hcp.eastus.azmk8s.io", "dnsPrefix": "aks-prod-dns",
            "enableRbac": True, "fqdn": "aks-prod-dns-4f1e2a.hcp.eastus.azmk8s.io",
            "id": rid("rg-aks", "Microsoft.ContainerService", "managedClusters", "aks-prod"),
            "identity": {"principalId": "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0", "tenantId": TENANT, "type": "SystemAssigned", "userAssignedIdentities": None},
            "identityProfile": {"kubeletidentity": {"clientId": "9a8b7c6d-5e4f-4a3b-2c1d-0e9f8a7b6c5d", "objectId": KUBELET_OBJ,
                                                    "resourceId": rid(NODE_RG, "Microsoft.ManagedIdentity", "userAssignedIdentities", "aks-prod-agentpool")}},
            "kubernetesVersion": "1.30.5", "location": "eastus", "name": "aks-prod",
            "networkProfile": {"dnsServiceIp": "10.0.0.10", "loadBalancerSku": "standard", "networkPlugin": "azure",
                               "networkPolicy": None, "outboundType": "loadBalancer", "serviceCidr": "172.16.0.0/16", "podCidr": None},
            "nodeResourceGroup": NODE_RG, "powerState": {"code": "Running"}, "provisioningState": "Succeeded",
            "resourceGroup": "rg-aks", "servicePrincipalProfile": {"clientId": "msi"}, "sku": {"name": "Base", "tier": "Standard"},
            "tags": None, "type": "Microsoft.ContainerService/ManagedClusters"}

def ref(i):
    return {"id": i, "resourceGroup": i.split("/")[4]}

def subnet(pool):
    name, cidr, rt, nsg = SUBNETS[pool]
    ipc = f"/subscriptions/{SUB}/resourceGroups/{NODE_RG}/providers/Microsoft.Compute/virtualMachineScaleSets/{vmss(pool)}/virtualMachines/0/networkInterfaces/{vmss(pool)}/ipConfigurations/ipconfig1"
    return {"addressPrefix": cidr, "etag": 'W/"7c1d2e3f-0000-0000-0000-000000000001"', "id": subnet_id(pool),
            "ipConfigurations": [ref(ipc)], "name": name,
            "networkSecurityGroup": ref(rid("rg-net", "Microsoft.Network", "networkSecurityGroups", nsg)),
            "privateEndpointNetworkPolicies": "Disabled", "privateLinkServiceNetworkPolicies": "Enabled",
            "provisioningState": "Succeeded", "resourceGroup": "rg-net",
            "routeTable": ref(rid("rg-net", "Microsoft.Network", "routeTables", rt)),
            "type": "Microsoft.Network/virtualNetworks/subnets"}

def peering(**kw):
    p = {"allowForwardedTraffic": True, "allowGatewayTransit": False, "allowVirtualNetworkAccess": True,
         "doNotVerifyRemoteGateways": False, "etag": 'W/"7c1d2e3f-0000-0000-0000-000000000002"',
         "id": VNET + "/virtualNetworkPeerings/aks-to-hub", "name": "aks-to-hub", "peeringState": "Connected",
         "peeringSyncLevel": "FullyInSync", "provisioningState": "Succeeded",
         "remoteAddressSpace": {"addressPrefixes": ["10.0.0.0/16"]},
         "remoteVirtualNetwork": ref(HUB), "remoteVirtualNetworkAddressSpace": {"addressPrefixes": ["10.0.0.0/16"]},
         "resourceGroup": "rg-net", "resourceGuid": "1a2b3c4d-0000-0000-0000-000000000003",
         "type": "Microsoft.Network/virtualNetworks/virtualNetworkPeerings", "useRemoteGateways": True}
    p.update(kw)
    return p

def vnet(peerings, dns=None):
    v = {"addressSpace": {"addressPrefixes": ["10.10.0.0/16"]}, "enableDdosProtection": False,
         "etag": 'W/"7c1d2e3f-0000-0000-0000-000000000004"', "id": VNET, "location": "eastus", "name": "vnet-aks",
         "provisioningState": "Succeeded", "resourceGroup": "rg-net", "resourceGuid": "1a2b3c4d-0000-0000-0000-000000000005",
         "subnets": [subnet(p) for p in SUBNETS], "type": "Microsoft.Network/virtualNetworks",
         "virtualNetworkPeerings": peerings}
    if dns is not None:
        v["dhcpOptions"] = {"dnsServers": dns}
    return v

def route_table(pool, routes=(), disable_bgp=False):
    name = SUBNETS[pool][2]
    i = rid("rg-net", "Microsoft.Network", "routeTables", name)
    rs = []
    for rn, prefix, hop, ip in routes:
        r = {"addressPrefix": prefix, "etag": 'W/"7c1d2e3f-0000-0000-0000-000000000006"', "id": i + "/routes/" + rn,
             "name": rn, "nextHopType": hop, "provisioningState": "Succeeded", "resourceGroup": "rg-net",
             "type": "Microsoft.Network/routeTables/routes"}
        if ip:
            r["nextHopIpAddress"] = ip
        rs.append(r)
    return {"disableBgpRoutePropagation": disable_bgp, "etag": 'W/"7c1d2e3f-0000-0000-0000-000000000007"', "id": i,
            "location": "eastus", "name": name, "provisioningState": "Succeeded", "resourceGroup": "rg-net",
            "resourceGuid": "1a2b3c4d-0000-0000-0000-000000000008", "routes": rs,
            "subnets": [ref(subnet_id(pool))], "type": "Microsoft.Network/routeTables"}

def rule(nsg, name, prio, access, direction, proto, src, dst, port, default=False):
    kind = "defaultSecurityRules" if default else "securityRules"
    return {"access": access, "description": None if not default else f"{name} default rule",
            "destinationAddressPrefix": dst, "destinationAddressPrefixes": [], "destinationPortRange": port,
            "destinationPortRanges": [], "direction": direction, "etag": 'W/"7c1d2e3f-0000-0000-0000-000000000009"',
            "id": rid("rg-net", "Microsoft.Network", "networkSecurityGroups", nsg, kind, name), "name": name,
            "priority": prio, "protocol": proto, "provisioningState": "Succeeded", "resourceGroup": "rg-net",
            "sourceAddressPrefix": src, "sourceAddressPrefixes": [], "sourcePortRange": "*", "sourcePortRanges": [],
            "type": f"Microsoft.Network/networkSecurityGroups/{kind}"}

def nsg(pool, extra=()):
    name = SUBNETS[pool][3]
    d = [rule(name, "AllowVnetInBound", 65000, "Allow", "Inbound", "*", "VirtualNetwork", "VirtualNetwork", "*", True),
         rule(name, "AllowAzureLoadBalancerInBound", 65001, "Allow", "Inbound", "*", "AzureLoadBalancer", "*", "*", True),
         rule(name, "DenyAllInBound", 65500, "Deny", "Inbound", "*", "*", "*", "*", True),
         rule(name, "AllowVnetOutBound", 65000, "Allow", "Outbound", "*", "VirtualNetwork", "VirtualNetwork", "*", True),
         rule(name, "AllowInternetOutBound", 65001, "Allow", "Outbound", "*", "*", "Internet", "*", True),
         rule(name, "DenyAllOutBound", 65500, "Deny", "Outbound", "*", "*", "*", "*", True)]
    custom = [rule(name, "allow-https-from-lb", 100, "Allow", "Inbound", "Tcp", "AzureLoadBalancer", "*", "443")]
    custom += [rule(name, *e) for e in extra]
    for r in d + custom:
        for k in ("description",):
            if r[k] is None:
                del r[k]
    return {"defaultSecurityRules": d, "etag": 'W/"7c1d2e3f-0000-0000-0000-00000000000a"',
            "id": rid("rg-net", "Microsoft.Network", "networkSecurityGroups", name), "location": "eastus", "name": name,
            "provisioningState": "Succeeded", "resourceGroup": "rg-net", "resourceGuid": "1a2b3c4d-0000-0000-0000-00000000000b",
            "securityRules": custom, "subnets": [ref(subnet_id(pool))], "type": "Microsoft.Network/networkSecurityGroups"}

def eroute(prefixes, hop, source="Default", ips=(), name=None, state="Active", disable_bgp=False):
    return {"addressPrefix": list(prefixes), "disableBgpRoutePropagation": disable_bgp, "name": name,
            "nextHopIpAddress": list(ips), "nextHopType": hop, "source": source, "state": state}

def effective(pool, gateway=True, peered=True, user=(), disable_bgp=False, invalid_gateway=False):
    rs = [eroute(["10.10.0.0/16"], "VnetLocal", disable_bgp=disable_bgp)]
    if peered:
        rs.append(eroute(["10.0.0.0/16"], "VNetPeering", disable_bgp=disable_bgp))
    if gateway and not disable_bgp:
        rs.append(eroute(["10.50.0.0/16"], "VirtualNetworkGateway", "VirtualNetworkGateway", ["10.0.255.4"],
                         state="Invalid" if invalid_gateway else "Active"))
        rs.append(eroute(["192.168.0.0/20"], "VirtualNetworkGateway", "VirtualNetworkGateway", ["10.0.255.4"]))
    for rn, prefix, hop, ip in user:
        rs.append(eroute([prefix], hop, "User", [ip] if ip else [], name=rn, disable_bgp=disable_bgp))
    rs.append(eroute(["0.0.0.0/0"], "Internet", disable_bgp=disable_bgp))
    for p in ("10.0.0.0/8", "127.0.0.0/8", "100.64.0.0/10", "172.16.0.0/12", "25.33.80.0/20", "25.41.3.0/25"):
        rs.append(eroute([p], "None", disable_bgp=disable_bgp))
    return {"nextLink": None, "value": rs}

def zones():
    return [{"etag": "5b4c3d2e-0000-0000-0000-00000000000c", "id": ZONE, "internalId": None, "location": "global",
             "maxNumberOfRecordSets": 25000, "maxNumberOfVirtualNetworkLinks": 1000,
             "maxNumberOfVirtualNetworkLinksWithRegistration": 100, "name": "privatelink.azurecr.io",
             "numberOfRecordSets": 4, "numberOfVirtualNetworkLinks": 2, "numberOfVirtualNetworkLinksWithRegistration": 0,
             "provisioningState": "Succeeded", "resourceGroup": "rg-dns", "tags": {}, "type": "Microsoft.Network/privateDnsZones"}]

def link(name, vnet_id, state="Completed"):
    return {"etag": '"5b4c3d2e-0000-0000-0000-00000000000d"', "id": ZONE + "/virtualNetworkLinks/" + name,
            "location": "global", "name": name, "provisioningState": "Succeeded", "registrationEnabled": False,
            "resolutionPolicy": "Default", "resourceGroup": "rg-dns", "tags": {},
            "type": "Microsoft.Network/privateDnsZones/virtualNetworkLinks",
            "virtualNetwork": {"id": vnet_id, "resourceGroup": vnet_id.split("/")[4]}, "virtualNetworkLinkState": state}

def record(name, ips):
    return {"aRecords": [{"ipv4Address": ip} for ip in ips], "etag": "5b4c3d2e-0000-0000-0000-00000000000e",
            "fqdn": name + ".privatelink.azurecr.io.", "id": ZONE + "/A/" + name, "isAutoRegistered": False,
            "metadata": None, "name": name, "resourceGroup": "rg-dns", "ttl": 10, "type": "Microsoft.Network/privateDnsZones/A"}

def soa():
    return None

def records(skip=(), override=None):
    out = []
    for host, ip in PE_ADDRS.items():
        name = host[:-len(".azurecr.io")]
        if name in skip:
            continue
        ips = (override or {}).get(name, [ip])
        out.append(record(name, ips))
    return out

def acr(status="Approved", pna="Disabled", conns=True, mode=None):
    pec = [{"id": ACR + "/privateEndpointConnections/pe-contosoacr.6f1c2d3e", "name": "pe-contosoacr.6f1c2d3e",
            "privateEndpoint": ref(PE),
            "privateLinkServiceConnectionState": {"actionsRequired": "None", "description": "Auto-Approved" if status == "Approved" else "please approve", "status": status},
            "provisioningState": "Succeeded", "resourceGroup": "rg-acr", "systemData": None,
            "type": "Microsoft.ContainerRegistry/registries/privateEndpointConnections"}] if conns else []
    r = {"adminUserEnabled": False, "anonymousPullEnabled": False, "creationDate": "2024-03-11T09:12:44.123456+00:00",
         "dataEndpointEnabled": True,
         "dataEndpointHostNames": ["contosoacr.eastus.data.azurecr.io", "contosoacr.westeurope.data.azurecr.io"],
         "encryption": {"keyVaultProperties": None, "status": "disabled"}, "id": ACR, "identity": None,
         "location": "eastus", "loginServer": "contosoacr.azurecr.io", "name": "contosoacr",
         "networkRuleBypassOptions": "AzureServices", "networkRuleSet": {"defaultAction": "Deny", "ipRules": []},
         "policies": {"azureAdAuthenticationAsArmPolicy": {"status": "enabled"}, "exportPolicy": {"status": "enabled"},
                      "quarantinePolicy": {"status": "disabled"}, "retentionPolicy": {"days": 7, "lastUpdatedTime": None, "status": "disabled"},
                      "softDeletePolicy": {"lastUpdatedTime": None, "retentionDays": 7, "status": "disabled"},
                      "trustPolicy": {"status": "disabled", "type": "Notary"}},
         "privateEndpointConnections": pec, "provisioningState": "Succeeded", "publicNetworkAccess": pna,
         "resourceGroup": "rg-acr", "sku": {"name": "Premium", "tier": "Premium"}, "status": None, "systemData": None,
         "tags": {}, "type": "Microsoft.ContainerRegistry/registries", "zoneRedundancy": "Disabled"}
    if mode:
        r["roleAssignmentMode"] = mode
    return r

def pe(status="Approved", skip=(), manual=False):
    cfg = [{"fqdn": h, "ipAddresses": [ip]} for h, ip in PE_ADDRS.items() if h not in skip]
    conn = {"etag": 'W/"7c1d2e3f-0000-0000-0000-00000000000f"', "groupIds": ["registry"],
            "id": PE + ("/manualPrivateLinkServiceConnections/" if manual else "/privateLinkServiceConnections/") + "pe-contosoacr",
            "name": "pe-contosoacr",
            "privateLinkServiceConnectionState": {"actionsRequired": "None", "description": "Auto-Approved" if status == "Approved" else "please approve", "status": status},
            "privateLinkServiceId": ACR, "provisioningState": "Succeeded", "resourceGroup": "rg-shared",
            "type": "Microsoft.Network/privateEndpoints/privateLinkServiceConnections"}
    p = {"customDnsConfigs": cfg, "etag": 'W/"7c1d2e3f-0000-0000-0000-000000000010"', "id": PE, "location": "westus2",
         "name": "pe-contosoacr",
         "networkInterfaces": [ref(rid("rg-shared", "Microsoft.Network", "networkInterfaces", "pe-contosoacr.nic.3c4d5e6f"))],
         "provisioningState": "Succeeded", "resourceGroup": "rg-shared",
         "subnet": ref(rid("rg-shared", "Microsoft.Network", "virtualNetworks", "vnet-shared", "subnets", "snet-pe")),
         "type": "Microsoft.Network/privateEndpoints"}
    p["manualPrivateLinkServiceConnections" if manual else "privateLinkServiceConnections"] = [conn]
    return p

def role(name, role_id, role_name, principal, scope, ptype="ServicePrincipal", condition=None):
    return {"condition": condition, "conditionVersion": "2.0" if condition else None, "createdBy": "6c7d8e9f-0000-0000-0000-000000000011",
            "createdOn": "2024-03-11T09:30:02.000000+00:00", "delegatedManagedIdentityResourceId": None, "description": None,
            "id": scope + "/providers/Microsoft.Authorization/roleAssignments/" + name, "name": name,
            "principalId": principal, "principalName": "aks-prod-agentpool" if principal == KUBELET_OBJ else "ops@contoso.com",
            "principalType": ptype, "resourceGroup": scope.split("/")[4] if "/resourceGroups/" in scope else None,
            "roleDefinitionId": f"/subscriptions/{SUB}/providers/Microsoft.Authorization/roleDefinitions/{role_id}",
            "roleDefinitionName": role_name, "scope": scope, "type": "Microsoft.Authorization/roleAssignments",
            "updatedBy": "6c7d8e9f-0000-0000-0000-000000000011", "updatedOn": "2024-03-11T09:30:02.000000+00:00"}

def roles(kubelet=True, kubelet_role=(ACRPULL, "AcrPull")):
    out = [role("0e1f2a3b-0000-0000-0000-000000000012", "acdd72a7-3385-48ef-bd42-f606fba81ae7", "Reader",
                "4e5f6a7b-0000-0000-0000-000000000013", f"/subscriptions/{SUB}", ptype="User")]
    if kubelet:
        out.append(role("1f2a3b4c-0000-0000-0000-000000000014", kubelet_role[0], kubelet_role[1], KUBELET_OBJ, ACR))
    return out

def healthy():
    f = {"aks-show.json": aks(), "network-vnet-show.json": vnet([peering()]),
         "network-vnet-peering-list.json": [peering()],
         "network-private-dns-zone-list.json": zones(),
         "network-private-dns-link-vnet-list-privatelink.azurecr.io.json": [link("link-vnet-aks", VNET), link("link-vnet-hub", HUB)],
         "network-private-dns-record-set-a-list-privatelink.azurecr.io.json": records(),
         "acr-show.json": acr(), "network-private-endpoint-show-pe-contosoacr.json": pe(),
         "role-assignment-list.json": roles()}
    for pool in SUBNETS:
        name, _, rt, ng = SUBNETS[pool]
        f[f"network-vnet-subnet-show-{name}.json"] = subnet(pool)
        f[f"network-route-table-show-{rt}.json"] = route_table(pool)
        f[f"network-nsg-show-{ng}.json"] = nsg(pool)
        f[f"network-nic-show-effective-route-table-{vmss(pool)}.json"] = effective(pool)
    return f

def write(folder, files):
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    for name, body in files.items():
        with open(os.path.join(folder, name), "w") as fh:
            json.dump(body, fh, indent=2, sort_keys=True)
            fh.write("\n")

def variant(name, fn):
    f = healthy()
    fn(f)
    write(name, f)

E = "network-nic-show-effective-route-table-"
def apps_routes(f, **kw):
    f[E + vmss("apps") + ".json"] = effective("apps", **kw)

def all_routes(f, **kw):
    for p in SUBNETS:
        f[E + vmss(p) + ".json"] = effective(p, **kw)

write("valid-healthy", healthy())

# route: the apps pool's route table stops BGP propagation, so the VPN gateway's routes never reach it.
def route_bgp(f):
    f["network-route-table-show-rt-apps.json"] = route_table("apps", disable_bgp=True)
    apps_routes(f, disable_bgp=True)
variant("invalid-route-disable-bgp", route_bgp)

# route: a user route drops the registry's network.
def route_udr(f):
    f["network-route-table-show-rt-apps.json"] = route_table("apps", routes=[("block-shared", "10.50.0.0/16", "None", None)])
    apps_routes(f, invalid_gateway=True, user=[("block-shared", "10.50.0.0/16", "None", None)])
variant("invalid-route-udr-none", route_udr)

# peering: the cluster side does not use the hub's VPN gateway.
def peer_nogw(f):
    p = peering(useRemoteGateways=False)
    f["network-vnet-peering-list.json"] = [p]
    f["network-vnet-show.json"] = vnet([p])
    all_routes(f, gateway=False)
variant("invalid-peering-no-remote-gateways", peer_nogw)

# peering: the remote side was deleted.
def peer_disc(f):
    p = peering(peeringState="Disconnected", peeringSyncLevel="RemoteNotInSync")
    f["network-vnet-peering-list.json"] = [p]
    f["network-vnet-show.json"] = vnet([p])
    all_routes(f, gateway=False, peered=False)
variant("invalid-peering-disconnected", peer_disc)

# peering: an appliance in the hub forwards, and the cluster side refuses forwarded traffic.
def peer_fwd(f):
    p = peering(allowForwardedTraffic=False)
    f["network-vnet-peering-list.json"] = [p]
    f["network-vnet-show.json"] = vnet([p])
    user = [("to-shared-via-fw", "10.50.0.0/16", "VirtualAppliance", "10.0.2.4")]
    for pool in SUBNETS:
        f[f"network-route-table-show-{SUBNETS[pool][2]}.json"] = route_table(pool, routes=user)
        f[E + vmss(pool) + ".json"] = effective(pool, invalid_gateway=True, user=user)
variant("invalid-peering-forwarded-traffic", peer_fwd)

# nsg: the apps subnet's NSG denies 443 to the registry's network before the defaults allow it.
def nsg_deny(f):
    f["network-nsg-show-nsg-apps.json"] = nsg("apps", extra=[("deny-shared-443", 200, "Deny", "Outbound", "Tcp", "*", "10.50.0.0/16", "443")])
variant("invalid-nsg-deny-443", nsg_deny)

# dns servers: a custom DNS server the nodes have no route to.
def dns_servers(f):
    f["network-vnet-show.json"] = vnet([peering()], dns=["10.99.0.53"])
variant("invalid-dns-servers-unreachable", dns_servers)

# zone link: privatelink.azurecr.io is linked to the hub only.
def zone_link(f):
    f["network-private-dns-link-vnet-list-privatelink.azurecr.io.json"] = [link("link-vnet-hub", HUB)]
variant("invalid-dns-zone-not-linked", zone_link)

# records: the geo-replica's data endpoint has no A record.
def rec_missing(f):
    f["network-private-dns-record-set-a-list-privatelink.azurecr.io.json"] = records(skip=("contosoacr.westeurope.data",))
variant("invalid-dns-record-missing", rec_missing)

# records: the data endpoint's record points at an old address.
def rec_wrong(f):
    f["network-private-dns-record-set-a-list-privatelink.azurecr.io.json"] = records(override={"contosoacr.eastus.data": ["10.50.1.9"]})
variant("invalid-dns-record-wrong-address", rec_wrong)

# private endpoint: a manual connection request nobody approved.
def pe_pending(f):
    f["acr-show.json"] = acr(status="Pending")
    f["network-private-endpoint-show-pe-contosoacr.json"] = pe(status="Pending", manual=True)
variant("invalid-private-endpoint-pending", pe_pending)

# private endpoint: the geo-replica was added after the endpoint, which has no address for it.
def pe_cover(f):
    f["network-private-endpoint-show-pe-contosoacr.json"] = pe(skip=("contosoacr.westeurope.data.azurecr.io",))
    f["network-private-dns-record-set-a-list-privatelink.azurecr.io.json"] = records(skip=("contosoacr.westeurope.data",))
variant("invalid-private-endpoint-uncovered-replica", pe_cover)

# public access: no private endpoint, and public network access disabled.
def public(f):
    f["acr-show.json"] = acr(conns=False)
    del f["network-private-endpoint-show-pe-contosoacr.json"]
variant("invalid-public-access-disabled", public)

# identity: the kubelet identity holds no pull role.
def ident(f):
    f["role-assignment-list.json"] = roles(kubelet=False)
variant("invalid-identity-no-acrpull", ident)

# identity: an ABAC registry does not honor AcrPull.
def ident_abac(f):
    f["acr-show.json"] = acr(mode="AbacRepositoryPermissions")
variant("invalid-identity-abac-acrpull", ident_abac)

# healthy, ABAC registry with the repository reader role
def abac_ok(f):
    f["acr-show.json"] = acr(mode="AbacRepositoryPermissions")
    f["role-assignment-list.json"] = roles(kubelet_role=("b93aa761-3e63-49ed-ac28-beffa264f7ac", "Container Registry Repository Reader"))
variant("valid-abac-repository-reader", abac_ok)

# proxy: the cluster's httpProxyConfig sends the registry through the proxy: noProxy holds the
# private endpoints' subnet (an IP entry, which Go never matches against a name), not .azurecr.io.
def proxy_cfg(no_proxy):
    return {"httpProxy": "http://proxy.contoso.internal:3128/", "httpsProxy": "http://proxy.contoso.internal:3128/",
            "noProxy": no_proxy, "trustedCa": None,
            "effectiveNoProxy": no_proxy + ["konnectivity", "168.63.129.16", "169.254.169.254", "10.0.0.0/16", "10.244.0.0/16",
                                            "kubernetes.default.svc", "aks-prod-dns-4f1e2a.hcp.eastus.azmk8s.io"]}
def proxy_private(f):
    f["aks-show.json"]["httpProxyConfig"] = proxy_cfg(["localhost", "127.0.0.1", "10.10.0.0/16", "10.50.1.0/24", ".svc", ".cluster.local"])
variant("warn-proxy-private-endpoint-through-proxy", proxy_private)

# proxy, healthy: noProxy holds .azurecr.io, so the nodes reach the private endpoint directly.
def proxy_ok(f):
    f["aks-show.json"]["httpProxyConfig"] = proxy_cfg(["localhost", "127.0.0.1", "10.10.0.0/16", ".azurecr.io", ".svc", ".cluster.local"])
variant("valid-proxy-noproxy-registry", proxy_ok)
# ipv6: a dual-stack cluster (networkProfile.ipFamilies [IPv4, IPv6], dual-stack node subnets)
# pulling from a registry with the IPv6 dual-stack endpoint protocol over its public endpoints
# (IPv6 is not served over private endpoints: the registry here has none).
V6_SUBNETS = {"system": "fd00:10:10::/64", "apps": "fd00:10:11::/64"}
def dualstack(f):
    f["aks-show.json"]["networkProfile"].update({"ipFamilies": ["IPv4", "IPv6"], "podCidrs": ["10.244.0.0/16", "fd12:3456:789a::/64"],
                                                 "serviceCidrs": ["172.16.0.0/16", "fd12:3456:789a:1::/108"]})
    r = acr(pna="Enabled", conns=False)
    r["networkRuleSet"] = {"defaultAction": "Allow", "ipRules": []}
    r["endpointProtocol"] = "IPv4AndIPv6"
    f["acr-show.json"] = r
    del f["network-private-endpoint-show-pe-contosoacr.json"]
    f["network-private-dns-record-set-a-list-privatelink.azurecr.io.json"] = []
    v = f["network-vnet-show.json"]
    v["addressSpace"]["addressPrefixes"].append("fd00:10:10::/48")
    for pool in SUBNETS:
        name = SUBNETS[pool][0]
        s = f[f"network-vnet-subnet-show-{name}.json"]
        s["addressPrefixes"] = [s.pop("addressPrefix"), V6_SUBNETS[pool]]
        for vs in v["subnets"]:
            if vs["name"] == name:
                vs["addressPrefixes"] = [vs.pop("addressPrefix"), V6_SUBNETS[pool]]
        rs = f[E + vmss(pool) + ".json"]["value"]
        rs.insert(1, eroute(["fd00:10:10::/48"], "VnetLocal"))
        rs.append(eroute(["::/0"], "Internet"))
variant("valid-dualstack-public", dualstack)
# ipv6: the apps pool's route table drops ::/0 (next hop None): IPv6 to the registry goes nowhere.
def v6_route_none(f):
    dualstack(f)
    user = [("no-ipv6-egress", "::/0", "None", None)]
    f["network-route-table-show-rt-apps.json"] = route_table("apps", routes=user)
    rs = f[E + vmss("apps") + ".json"]["value"]
    for r in rs:
        if r["addressPrefix"] == ["::/0"]:
            r["state"] = "Invalid"
    rs.append(eroute(["::/0"], "None", "User", name="no-ipv6-egress"))
variant("warn-ipv6-route-none", v6_route_none)
# ipv6: the apps subnet's NSG allows 443 out to IPv4 only, then denies the rest: IPv6 meets the deny.
def v6_nsg(f):
    dualstack(f)
    f["network-nsg-show-nsg-apps.json"] = nsg("apps", extra=[
        ("allow-https-v4", 200, "Allow", "Outbound", "Tcp", "*", "0.0.0.0/0", "443"),
        ("deny-internet", 300, "Deny", "Outbound", "*", "*", "Internet", "*")])
variant("warn-ipv6-nsg-v4-only", v6_nsg)

# An AKS-managed VNet (issue 42): no pool names a vnetSubnetId; AKS made the VNet
# aks-vnet-12345678 in the node resource group with one subnet, aks-subnet, holding
# every pool's scale set, and its own route table and NSG there. The VNet is read
# from `az network vnet list -g NODE_RG` (the CLI's array), not vnet show. The
# rest is the healthy account (the VNet peers the hub, whose VPN gateway reaches
# the registry's private endpoint).
def managed_vnet():
    f = healthy()
    sys_name, _, sys_rt, sys_nsg = SUBNETS["system"]
    for name in (f"network-vnet-subnet-show-{sys_name}.json", f"network-route-table-show-{sys_rt}.json", f"network-nsg-show-{sys_nsg}.json"):
        del f[name]
    apps = f["network-vnet-subnet-show-snet-apps.json"]
    apps["ipConfigurations"] = [ref(c["id"].replace("aks-apps-", "aks-system-")) for c in apps["ipConfigurations"]] + apps["ipConfigurations"]
    f["network-route-table-show-rt-apps.json"]["subnets"] = [ref(subnet_id("apps"))]
    v = f.pop("network-vnet-show.json")
    v["subnets"] = [apps]
    v["addressSpace"]["addressPrefixes"] = ["10.10.0.0/16"]
    f["network-vnet-list.json"] = [v]
    for p in f["aks-show.json"]["agentPoolProfiles"]:
        p["vnetSubnetId"] = None
    # the system pool's NIC now sits in the one subnet: its effective routes are the apps pool's
    text = json.dumps(f)
    for old, new in (("resourceGroups/rg-net/", f"resourceGroups/{NODE_RG}/"), ('"resourceGroup": "rg-net"', f'"resourceGroup": "{NODE_RG}"'),
                     ("vnet-aks", "aks-vnet-12345678"), ("snet-apps", "aks-subnet"),
                     ("rt-apps", "aks-agentpool-12345678-routetable"), ("nsg-apps", "aks-agentpool-12345678-nsg")):
        text = text.replace(old, new)
    f = json.loads(text)
    files = {}
    for name, body in f.items():
        for old, new in (("snet-apps", "aks-subnet"), ("rt-apps", "aks-agentpool-12345678-routetable"), ("nsg-apps", "aks-agentpool-12345678-nsg")):
            name = name.replace(old, new)
        files[name] = body
    write("valid-aks-managed-vnet", files)
managed_vnet()

# ACR's artifact cache (issue 39): the healthy account plus a wildcard cache rule
# library/* <- docker.io/library/* with credential set dockerhub (a Docker Hub
# user name and token as Key Vault secrets in kv-contoso-acr, an Azure RBAC vault
# where the set's system-assigned identity holds Key Vault Secrets User), and an
# anonymous rule for mcr.microsoft.com/dotnet/runtime. The image is
# contosoacr.azurecr.io/library/nginx:1.27. Shapes: az acr cache list and az acr
# credential-set list print the SDK's objects flattened (null for absent fields);
# az keyvault show prints the vault with properties nested.
CS_PRINCIPAL = "8c9d0e1f-2a3b-4c5d-9e6f-7a8b9c0d1e2f"
VAULT = rid("rg-security", "Microsoft.KeyVault", "vaults", "kv-contoso-acr")
KV_SECRETS_USER = "4633458b-17de-408a-b874-0445c86b69e6"
SYSDATA = {"createdAt": "2026-10-01T08:00:00+00:00", "createdBy": "ops@contoso.com", "createdByType": "User",
           "lastModifiedAt": "2026-10-01T08:00:00+00:00", "lastModifiedBy": "ops@contoso.com", "lastModifiedByType": "User"}

def cache_rule(name, source, target, cred=None):
    return {"creationDate": "2026-10-01T08:00:00+00:00", "credentialSetResourceId": ACR + "/credentialSets/" + cred if cred else None,
            "id": ACR + "/cacheRules/" + name, "name": name, "provisioningState": "Succeeded", "resourceGroup": "rg-acr",
            "sourceRepository": source, "systemData": SYSDATA, "targetRepository": target,
            "type": "Microsoft.ContainerRegistry/registries/cacheRules"}

def cred_set(name="dockerhub", login="docker.io", health="Healthy", secrets=True):
    cred = {"credentialHealth": {"errorCode": None, "errorMessage": None, "status": health}, "name": "Credential1",
            "passwordSecretIdentifier": "https://kv-contoso-acr.vault.azure.net/secrets/dockerhub-token" if secrets else None,
            "usernameSecretIdentifier": "https://kv-contoso-acr.vault.azure.net/secrets/dockerhub-user"}
    return {"authCredentials": [cred], "creationDate": "2026-10-01T08:00:00+00:00", "id": ACR + "/credentialSets/" + name,
            "identity": {"principalId": CS_PRINCIPAL, "tenantId": TENANT, "type": "SystemAssigned", "userAssignedIdentities": None},
            "loginServer": login, "name": name, "provisioningState": "Succeeded", "resourceGroup": "rg-acr", "systemData": SYSDATA,
            "type": "Microsoft.ContainerRegistry/registries/credentialSets"}

def key_vault(rbac=True, policies=()):
    return {"id": VAULT, "location": "eastus", "name": "kv-contoso-acr",
            "properties": {"accessPolicies": list(policies), "createMode": None, "enablePurgeProtection": None,
                           "enableRbacAuthorization": rbac, "enableSoftDelete": True, "enabledForDeployment": False,
                           "networkAcls": None, "provisioningState": "Succeeded", "publicNetworkAccess": "Enabled",
                           "sku": {"family": "A", "name": "standard"}, "softDeleteRetentionInDays": 90,
                           "tenantId": TENANT, "vaultUri": "https://kv-contoso-acr.vault.azure.net/"},
            "resourceGroup": "rg-security", "systemData": SYSDATA, "tags": {}, "type": "Microsoft.KeyVault/vaults"}

def policy(secrets):
    return {"applicationId": None, "objectId": CS_PRINCIPAL, "tenantId": TENANT,
            "permissions": {"certificates": [], "keys": [], "secrets": list(secrets), "storage": []}}

def cached(f, rbac=True):
    f["acr-cache-list.json"] = [cache_rule("dockerhub-library", "docker.io/library/*", "library/*", "dockerhub"),
                                cache_rule("mcr-dotnet-runtime", "mcr.microsoft.com/dotnet/runtime", "dotnet/runtime")]
    f["acr-credential-set-list.json"] = [cred_set()]
    if rbac:
        f["keyvault-show-kv-contoso-acr.json"] = key_vault()
        f["role-assignment-list-keyvault-kv-contoso-acr.json"] = [
            role("2a3b4c5d-0000-0000-0000-000000000021", KV_SECRETS_USER, "Key Vault Secrets User", CS_PRINCIPAL, VAULT)]
    else:
        f["keyvault-show-kv-contoso-acr.json"] = key_vault(False, [policy(["get", "list"])])
    return f

def cache_variant(name, fn, rbac=True):
    f = cached(healthy(), rbac)
    fn(f)
    write(name, f)

def cache_fixtures():
    cache_variant("valid-cache-rule", lambda f: None)
    cache_variant("valid-cache-access-policy", lambda f: None, rbac=False)
    def no_set(f):
        f["acr-credential-set-list.json"] = []
        del f["keyvault-show-kv-contoso-acr.json"], f["role-assignment-list-keyvault-kv-contoso-acr.json"]
    cache_variant("invalid-cache-credential-set-missing", no_set)
    cache_variant("invalid-cache-credential-set-login-server", lambda f: f.update({"acr-credential-set-list.json": [cred_set(login="ghcr.io")]}))
    cache_variant("invalid-cache-credentials-unhealthy", lambda f: f.update({"acr-credential-set-list.json": [cred_set(health="Unhealthy")]}))
    cache_variant("invalid-cache-keyvault-no-role", lambda f: f.update({"role-assignment-list-keyvault-kv-contoso-acr.json": []}))
    cache_variant("invalid-cache-access-policy-no-get",
                  lambda f: f.update({"keyvault-show-kv-contoso-acr.json": key_vault(False, [policy(["list"])])}), rbac=False)
    def anonymous(f):
        f["acr-cache-list.json"][0] = cache_rule("dockerhub-library", "docker.io/library/*", "library/*")
        for n in ("acr-credential-set-list.json", "keyvault-show-kv-contoso-acr.json", "role-assignment-list-keyvault-kv-contoso-acr.json"):
            del f[n]
    cache_variant("warn-cache-docker-hub-anonymous", anonymous)
cache_fixtures()

# The lab's AKS account (internal/diagnose/testdata): the account whose
# cluster is the lab's pool-private-zone-not-linked scenario (its nodes'
# providerIDs name subscription 0000..., node resource group
# mc_lab_lab_koreacentral and the VMSS of pools system and user), so that
# diagnose's live Azure audit against the ARM fake reads the account the lab
# cluster runs in. The VNet 10.224.0.0/12 holds both pools' subnet
# (aks-subnet; AKS puts every pool in one VNet) and the registry's private
# endpoint (10.225.1.0/24); its DNS server is the custom one at 10.225.0.5,
# which forwards to Azure DNS from the node VNet, and privatelink.azurecr.io
# is linked to the hub only: the object to change is the zone's link to
# vnet-lab. The same builders as above, with the lab's names and addresses.
def lab_account():
    global SUB, NODE_RG, VNET, HUB, SUBNETS, ACR, PE, ZONE, PE_ADDRS
    SUB = "00000000-0000-0000-0000-000000000000"
    NODE_RG = "mc_lab_lab_koreacentral"
    VNET = rid("rg-net", "Microsoft.Network", "virtualNetworks", "vnet-lab")
    HUB = rid("rg-hub", "Microsoft.Network", "virtualNetworks", "vnet-hub")
    SUBNETS = {"system": ("aks-subnet", "10.224.0.0/24", "rt-aks", "nsg-aks"),
               "apps": ("aks-subnet", "10.224.0.0/24", "rt-aks", "nsg-aks")}  # pool user (renamed below)
    ACR = rid("rg-acr", "Microsoft.ContainerRegistry", "registries", "myacr")
    PE = rid("rg-net", "Microsoft.Network", "privateEndpoints", "pe-myacr")
    ZONE = rid("rg-dns", "Microsoft.Network", "privateDnsZones", "privatelink.azurecr.io")
    PE_ADDRS = {"myacr.azurecr.io": "10.225.1.5", "myacr.koreacentral.data.azurecr.io": "10.225.1.6"}
    f = healthy()
    f["network-vnet-show.json"] = vnet([peering()], dns=["10.225.0.5"])
    f["network-vnet-show.json"]["subnets"] = f["network-vnet-show.json"]["subnets"][:1]
    f["network-private-dns-link-vnet-list-privatelink.azurecr.io.json"] = [link("link-vnet-hub", HUB)]
    f["network-private-endpoint-show-pe-contosoacr.json"] = pe()
    text = json.dumps(f)
    for old, new in (("pe-contosoacr", "pe-myacr"), ("contosoacr", "myacr"), ("westeurope", "koreacentral"),
                     ("eastus", "koreacentral"), ("aks-prod-agentpool", "lab-agentpool"), ("aks-prod-dns", "lab-dns"),
                     ("managedClusters/aks-prod", "managedClusters/lab"), ('"aks-prod"', '"lab"'),
                     ("resourceGroups/rg-aks/", "resourceGroups/lab/"), ('"rg-aks"', '"lab"'),
                     ('"name": "apps"', '"name": "user"'), ("aks-apps-", "aks-user-"), ("10.10.0.0/16", "10.224.0.0/12"), ("10.50.0.0/16", "10.225.1.0/24")):
        text = text.replace(old, new)
    f = json.loads(text)
    acr_show = f["acr-show.json"]
    acr_show["dataEndpointHostNames"] = ["myacr.koreacentral.data.azurecr.io"]
    files = {}
    for name, body in f.items():
        files[name.replace("contosoacr", "myacr").replace("aks-apps-", "aks-user-")] = body
    write("../../../diagnose/testdata/azure-pool-private-zone-not-linked", files)
lab_account()
