#!/usr/bin/env python3
"""Writes the gcp audit's fixtures: folders of `gcloud ... --format=json`
outputs (gcloud's JSON printer: 2-space indent, sorted keys, the REST
resource as the API returns it, int64 fields as strings), one healthy
cluster per path (Private Google Access with the private VIP; Cloud NAT;
a hub-and-spoke Shared VPC with the zones in the host project; gcr.io) and
one folder per failing check, each differing from its healthy twin by the
one object the check names. Run from this folder: python3 gen.py. The Go
tests read the folders; nothing runs this in CI."""
import copy, json, os, shutil

C = "https://www.googleapis.com/compute/v1/"
SCOPES_DEFAULT = ["https://www.googleapis.com/auth/devstorage.read_only", "https://www.googleapis.com/auth/logging.write",
                  "https://www.googleapis.com/auth/monitoring", "https://www.googleapis.com/auth/service.management.readonly",
                  "https://www.googleapis.com/auth/servicecontrol", "https://www.googleapis.com/auth/trace.append"]
PRIVATE_VIP = ["199.36.153.8", "199.36.153.9", "199.36.153.10", "199.36.153.11"]
RESTRICTED_VIP = ["199.36.153.4", "199.36.153.5", "199.36.153.6", "199.36.153.7"]
_id = [6021578410932650000]
def nid():
    _id[0] += 7919
    return str(_id[0])

class World:
    def __init__(self, project, number, cluster, region, net_project, network, subnets, node_tag, image_project, repo,
                 sa=None, scopes=None, private=True):
        self.project, self.number, self.cluster, self.region = project, number, cluster, region
        self.net_project, self.network, self.subnets, self.node_tag = net_project, network, subnets, node_tag
        self.image_project, self.repo = image_project, repo
        self.sa = sa or f"{number}-compute@developer.gserviceaccount.com"
        self.scopes = scopes or SCOPES_DEFAULT
        self.private = private
        self.files = {}
    def net_url(self):
        return f"{C}projects/{self.net_project}/global/networks/{self.network}"
    def subnet_url(self, name):
        return f"{C}projects/{self.net_project}/regions/{self.region}/subnetworks/{name}"
    def dig(self):
        return f"{C}projects/{self.net_project}/global/gateways/default-internet-gateway"

def cluster(w, pools):
    # pools: [(name, subnet, count, sa, scopes, private)]
    nps = []
    for name, subnet, count, sa, scopes, private in pools:
        nps.append({"autoscaling": {"enabled": True, "locationPolicy": "BALANCED", "maxNodeCount": 6, "minNodeCount": 1},
                    "config": {"diskSizeGb": 100, "diskType": "pd-balanced", "imageType": "COS_CONTAINERD", "machineType": "e2-standard-4",
                               "metadata": {"disable-legacy-endpoints": "true"}, "oauthScopes": scopes,
                               "serviceAccount": "default" if sa.endswith("-compute@developer.gserviceaccount.com") else sa,
                               "shieldedInstanceConfig": {"enableIntegrityMonitoring": True}, "workloadMetadataConfig": {"mode": "GKE_METADATA"}},
                    "initialNodeCount": count,
                    "instanceGroupUrls": [f"{C}projects/{w.project}/zones/{w.region}-a/instanceGroupManagers/gke-{w.cluster}-{name}-1a2b3c4d-grp"],
                    "locations": [f"{w.region}-a", f"{w.region}-b"], "management": {"autoRepair": True, "autoUpgrade": True},
                    "maxPodsConstraint": {"maxPodsPerNode": "110"}, "name": name,
                    "networkConfig": {"enablePrivateNodes": private, "podIpv4CidrBlock": "10.64.0.0/14", "podRange": "pods",
                                      "subnetwork": f"projects/{w.net_project}/regions/{w.region}/subnetworks/{subnet}"},
                    "podIpv4CidrSize": 24, "selfLink": f"https://container.googleapis.com/v1/projects/{w.project}/locations/{w.region}/clusters/{w.cluster}/nodePools/{name}",
                    "status": "RUNNING", "upgradeSettings": {"maxSurge": 1, "strategy": "SURGE"}, "version": "1.31.5-gke.1169000"})
    first = pools[0][1]
    return {"addonsConfig": {"gcePersistentDiskCsiDriverConfig": {"enabled": True}, "networkPolicyConfig": {"disabled": True}},
            "autopilot": {}, "clusterIpv4Cidr": "10.64.0.0/14", "createTime": "2025-02-11T08:21:17+00:00",
            "currentMasterVersion": "1.31.5-gke.1169000", "currentNodeCount": sum(p[2] for p in pools), "endpoint": "172.16.0.2",
            "id": "4f2a9c1e5b6d47e8a9f0b1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2",
            "ipAllocationPolicy": {"clusterIpv4CidrBlock": "10.64.0.0/14", "clusterSecondaryRangeName": "pods", "servicesIpv4CidrBlock": "10.68.0.0/20",
                                   "servicesSecondaryRangeName": "services", "stackType": "IPV4", "useIpAliases": True},
            "location": w.region, "locations": [f"{w.region}-a", f"{w.region}-b"],
            "loggingService": "logging.googleapis.com/kubernetes", "monitoringService": "monitoring.googleapis.com/kubernetes",
            "name": w.cluster, "network": w.network,
            "networkConfig": {"datapathProvider": "ADVANCED_DATAPATH", "defaultSnatStatus": {}, "network": f"projects/{w.net_project}/global/networks/{w.network}",
                              "serviceExternalIpsConfig": {}, "subnetwork": f"projects/{w.net_project}/regions/{w.region}/subnetworks/{first}"},
            "nodePools": nps,
            "privateClusterConfig": {"enablePrivateNodes": w.private, "masterIpv4CidrBlock": "172.16.0.0/28", "privateEndpoint": "172.16.0.2",
                                     "publicEndpoint": "34.123.45.67"},
            "releaseChannel": {"channel": "REGULAR"},
            "selfLink": f"https://container.googleapis.com/v1/projects/{w.project}/locations/{w.region}/clusters/{w.cluster}",
            "servicesIpv4Cidr": "10.68.0.0/20", "status": "RUNNING", "subnetwork": first,
            "workloadIdentityConfig": {"workloadPool": f"{w.project}.svc.id.goog"}, "zone": w.region}

def instances(w, pools):
    out = []
    n = 0
    for name, subnet, count, sa, scopes, private in pools:
        for i in range(count):
            n += 1
            zone = f"{w.region}-{'ab'[i % 2]}"
            nic = {"fingerprint": "Yx2bqBrP3Fw=", "kind": "compute#networkInterface", "name": "nic0",
                   "network": w.net_url(), "networkIP": f"10.{w.subnets[subnet][1]}.{i + 2}", "stackType": "IPV4_ONLY",
                   "subnetwork": w.subnet_url(subnet),
                   "aliasIpRanges": [{"ipCidrRange": f"10.64.{n}.0/24", "subnetworkRangeName": "pods"}]}
            if not private:
                nic["accessConfigs"] = [{"kind": "compute#accessConfig", "name": "external-nat", "natIP": f"34.30.{n}.{i + 10}",
                                         "networkTier": "PREMIUM", "type": "ONE_TO_ONE_NAT"}]
            iname = f"gke-{w.cluster}-{name}-1a2b3c4d-{'xk9q7m2zp4'[i % 10]}{n:03d}"
            out.append({"canIpForward": True, "cpuPlatform": "AMD Rome", "creationTimestamp": "2025-02-11T00:33:41.180-08:00",
                        "id": nid(), "kind": "compute#instance",
                        "labels": {"goog-gke-node": "", "goog-k8s-cluster-location": w.region, "goog-k8s-cluster-name": w.cluster,
                                   "goog-k8s-node-pool-name": name},
                        "machineType": f"{C}projects/{w.project}/zones/{zone}/machineTypes/e2-standard-4", "name": iname,
                        "networkInterfaces": [nic],
                        "selfLink": f"{C}projects/{w.project}/zones/{zone}/instances/{iname}",
                        "serviceAccounts": [{"email": sa, "scopes": scopes}], "status": "RUNNING",
                        "tags": {"fingerprint": "2mD8H0n1TQ8=", "items": [w.node_tag]}, "zone": f"{C}projects/{w.project}/zones/{zone}"})
    return out

def network(w, peerings=None):
    d = {"autoCreateSubnetworks": False, "creationTimestamp": "2024-11-02T03:14:00.000-07:00", "id": nid(), "kind": "compute#network",
         "mtu": 1460, "name": w.network, "networkFirewallPolicyEnforcementOrder": "AFTER_CLASSIC_FIREWALL",
         "routingConfig": {"routingMode": "REGIONAL"}, "selfLink": w.net_url(), "selfLinkWithId": f"{C}projects/{w.net_project}/global/networks/{nid()}",
         "subnetworks": [w.subnet_url(s) for s in w.subnets]}
    if peerings:
        d["peerings"] = peerings
    return d

def subnet(w, name, pga=True):
    cidr, third = w.subnets[name]
    return {"creationTimestamp": "2024-11-02T03:15:00.000-07:00", "enableFlowLogs": False, "fingerprint": "nZZb3iYQvQc=",
            "gatewayAddress": cidr.rsplit(".", 1)[0][:-1] + cidr.split(".")[2] + ".1" if False else ".".join(cidr.split("/")[0].split(".")[:3]) + ".1",
            "id": nid(), "ipCidrRange": cidr, "kind": "compute#subnetwork", "name": name, "network": w.net_url(),
            "privateIpGoogleAccess": pga, "privateIpv6GoogleAccess": "DISABLE_GOOGLE_ACCESS", "purpose": "PRIVATE",
            "region": f"{C}projects/{w.net_project}/regions/{w.region}",
            "secondaryIpRanges": [{"ipCidrRange": "10.64.0.0/14", "rangeName": "pods"}, {"ipCidrRange": "10.68.0.0/20", "rangeName": "services"}],
            "selfLink": w.subnet_url(name), "stackType": "IPV4_ONLY"}

def route(w, name, dest, prio=1000, desc="", tags=None, **hop):
    r = {"creationTimestamp": "2024-11-02T03:16:00.000-07:00", "description": desc, "destRange": dest, "id": nid(), "kind": "compute#route",
         "name": name, "network": w.net_url(), "priority": prio, "routeStatus": "ACTIVE", "routeType": "STATIC",
         "selfLink": f"{C}projects/{w.net_project}/global/routes/{name}"}
    if tags:
        r["tags"] = tags
    r.update(hop)
    return r

def subnet_routes(w):
    out = []
    for i, (s, (cidr, _)) in enumerate(sorted(w.subnets.items())):
        r = route(w, f"default-route-{i}c7e2f4a9b1d3e5{i:02d}", cidr, 0, f"Default local route to the subnetwork {cidr}.", nextHopNetwork=w.net_url())
        r["routeType"] = "SUBNET"
        out.append(r)
    return out

def default_route(w, name="default-route-6c2b1e0f9a8d7c6b"):
    return route(w, name, "0.0.0.0/0", 1000, "Default route to the Internet.", nextHopGateway=w.dig())

def fw(w, name, direction, prio, allowed=None, denied=None, dest=None, src=None, tags=None, sas=None, desc=""):
    f = {"creationTimestamp": "2025-02-11T00:30:12.000-08:00", "description": desc, "direction": direction, "disabled": False,
         "id": nid(), "kind": "compute#firewall", "logConfig": {"enable": False}, "name": name, "network": w.net_url(), "priority": prio,
         "selfLink": f"{C}projects/{w.net_project}/global/firewalls/{name}"}
    if allowed is not None:
        f["allowed"] = allowed
    if denied is not None:
        f["denied"] = denied
    if dest:
        f["destinationRanges"] = dest
    if src:
        f["sourceRanges"] = src
    if tags:
        f["targetTags"] = tags
    if sas:
        f["targetServiceAccounts"] = sas
    return f

def gke_firewalls(w):
    h = w.node_tag[:-5]
    return [fw(w, f"{h}-all", "INGRESS", 1000, allowed=[{"IPProtocol": p} for p in ("tcp", "udp", "icmp", "esp", "ah", "sctp")], src=["10.64.0.0/14"], tags=[w.node_tag]),
            fw(w, f"{h}-master", "INGRESS", 1000, allowed=[{"IPProtocol": "tcp", "ports": ["10250", "443"]}], src=["172.16.0.0/28"], tags=[w.node_tag]),
            fw(w, f"{h}-vms", "INGRESS", 1000, allowed=[{"IPProtocol": "icmp"}, {"IPProtocol": "tcp", "ports": ["1-65535"]}, {"IPProtocol": "udp", "ports": ["1-65535"]}],
               src=[c for c, _ in w.subnets.values()], tags=[w.node_tag])]

def router(w, nat):
    return {"bgp": {"advertiseMode": "DEFAULT", "asn": 64514, "keepaliveInterval": 20}, "creationTimestamp": "2024-11-02T03:20:00.000-07:00",
            "encryptedInterconnectRouter": False, "id": nid(), "kind": "compute#router", "name": f"{w.network}-router",
            "nats": [nat] if nat else [], "network": w.net_url(), "region": f"{C}projects/{w.net_project}/regions/{w.region}",
            "selfLink": f"{C}projects/{w.net_project}/regions/{w.region}/routers/{w.network}-router"}

def nat(name="nat-1", ranges="ALL_SUBNETWORKS_ALL_IP_RANGES", subnetworks=None, ips=None, min_ports=None):
    n = {"enableEndpointIndependentMapping": False, "endpointTypes": ["ENDPOINT_TYPE_VM"], "logConfig": {"enable": False, "filter": "ALL"},
         "name": name, "natIpAllocateOption": "MANUAL_ONLY" if ips else "AUTO_ONLY", "sourceSubnetworkIpRangesToNat": ranges, "type": "PUBLIC"}
    if subnetworks:
        n["subnetworks"] = subnetworks
    if ips:
        n["natIps"] = ips
    if min_ports:
        n["minPortsPerVm"] = min_ports
    return n

def zone(w, name, dns, networks=None, **extra):
    z = {"cloudLoggingConfig": {"kind": "dns#managedZoneCloudLoggingConfig"}, "creationTime": "2024-11-02T10:22:31.114Z",
         "description": "Private Google Access", "dnsName": dns, "id": nid(), "kind": "dns#managedZone", "name": name,
         "nameServers": ["ns-gcp-private.googledomains.com."],
         "privateVisibilityConfig": {"kind": "dns#managedZonePrivateVisibilityConfig",
                                     "networks": [{"kind": "dns#managedZonePrivateVisibilityConfigNetwork", "networkUrl": n} for n in (networks or [w.net_url()])]},
         "visibility": "private"}
    z.update(extra)
    return z

def rr(name, typ, datas, ttl=300):
    return {"kind": "dns#resourceRecordSet", "name": name, "rrdatas": datas, "ttl": ttl, "type": typ}

def pga_records(apex, vip):
    return [rr(apex, "NS", ["ns-gcp-private.googledomains.com."], 21600),
            rr(apex, "SOA", ["ns-gcp-private.googledomains.com. cloud-dns-hostmaster.google.com. 1 21600 3600 259200 300"], 21600),
            rr(apex, "A", vip), rr("*." + apex, "CNAME", [apex])]

def googleapis_records(vip, name="private.googleapis.com."):
    return [rr("googleapis.com.", "NS", ["ns-gcp-private.googledomains.com."], 21600),
            rr("googleapis.com.", "SOA", ["ns-gcp-private.googledomains.com. cloud-dns-hostmaster.google.com. 1 21600 3600 259200 300"], 21600),
            rr(name, "A", vip), rr("*.googleapis.com.", "CNAME", [name])]

def iam(bindings, etag="BwYcX2b3Lk8=", version=None):
    d = {"bindings": [{"members": m, "role": r} for r, m in bindings], "etag": etag}
    if version:
        d["version"] = version
    return d

def repository(project, location, name, remote=None):
    # gcloud artifacts repositories describe --format=json: the REST Repository
    r = {"createTime": "2024-11-04T09:12:44.118270Z", "format": "DOCKER", "mode": "STANDARD_REPOSITORY",
         "name": f"projects/{project}/locations/{location}/repositories/{name}", "satisfiesPzi": True, "sizeBytes": "1843921733",
         "updateTime": "2025-02-10T16:02:11.501244Z", "vulnerabilityScanningConfig": {"enablementConfig": "INHERITED",
         "enablementState": "SCANNING_DISABLED", "enablementStateReason": "API containerscanning.googleapis.com is not enabled."}}
    if remote:
        r["mode"] = "REMOTE_REPOSITORY"
        r["remoteRepositoryConfig"] = remote
        r["description"] = "Docker Hub through Artifact Registry"
    return r

def project(pid, number, org="301234567890"):
    return {"createTime": "2023-01-10T09:00:00.000Z", "lifecycleState": "ACTIVE", "name": pid, "parent": {"id": org, "type": "organization"},
            "projectId": pid, "projectNumber": number}

def write(folder, files):
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    os.makedirs(folder)
    for name, v in files.items():
        with open(os.path.join(folder, name), "w") as f:
            json.dump(v, f, indent=2, sort_keys=True)
            f.write("\n")

def subnet_file(s):
    return f"compute-networks-subnets-describe-{s}.json"

# --- 1. valid-healthy: private nodes, PGA on, pkg.dev/gcr.io/googleapis.com answer private.googleapis.com.
def healthy():
    w = World("shop-prod", "412345678901", "prod", "us-central1", "shop-prod", "prod-vpc",
              {"nodes-a": ("10.10.0.0/20", "10.0"), "nodes-b": ("10.10.16.0/20", "10.16")}, "gke-prod-4f2a9c1e-node", "shop-prod", "apps")
    pools = [("default-pool", "nodes-a", 3, w.sa, w.scopes, True), ("batch", "nodes-b", 2, w.sa, w.scopes, True)]
    f = {}
    f["container-clusters-describe.json"] = cluster(w, pools)
    f["compute-instances-list.json"] = instances(w, pools)
    f["compute-networks-describe.json"] = network(w)
    for s in w.subnets:
        f[subnet_file(s)] = subnet(w, s)
    f["compute-routes-list.json"] = subnet_routes(w) + [default_route(w),
        route(w, "private-googleapis", "199.36.153.8/30", 1000, "private.googleapis.com", nextHopGateway=w.dig())]
    f["compute-firewall-rules-list.json"] = gke_firewalls(w) + [
        fw(w, "allow-egress-googleapis-443", "EGRESS", 1000, allowed=[{"IPProtocol": "tcp", "ports": ["443"]}], dest=["199.36.153.8/30"], tags=[w.node_tag])]
    f["compute-routers-list.json"] = [router(w, nat("prod-nat"))]
    f["dns-managed-zones-list.json"] = [zone(w, "pkg-dev", "pkg.dev."), zone(w, "gcr-io", "gcr.io."), zone(w, "googleapis", "googleapis.com.")]
    f["dns-record-sets-list-pkg-dev.json"] = pga_records("pkg.dev.", PRIVATE_VIP)
    f["dns-record-sets-list-gcr-io.json"] = pga_records("gcr.io.", PRIVATE_VIP)
    f["dns-record-sets-list-googleapis.json"] = googleapis_records(PRIVATE_VIP)
    f["dns-policies-list.json"] = []
    f["artifacts-repositories-get-iam-policy-apps.json"] = iam([("roles/artifactregistry.reader", [f"serviceAccount:{w.sa}"])])
    f["artifacts-repositories-describe-apps.json"] = repository("shop-prod", "us-central1", "apps")
    f["projects-get-iam-policy.json"] = iam([("roles/container.defaultNodeServiceAccount", [f"serviceAccount:{w.sa}"]),
                                             ("roles/owner", ["user:platform-admin@example.com"])], "BwYcX2b3Lk9=", 1)
    f["projects-describe.json"] = project("shop-prod", "412345678901")
    f["access-context-manager-perimeters-list.json"] = []
    return w, pools, f

# --- 2. valid-nat: private nodes, PGA off, no private zones: Cloud NAT carries the pull to Google's public addresses.
def nat_world():
    w, pools, f = healthy()
    for s in w.subnets:
        f[subnet_file(s)]["privateIpGoogleAccess"] = False
    f["compute-routes-list.json"] = subnet_routes(w) + [default_route(w)]
    f["compute-firewall-rules-list.json"] = gke_firewalls(w)
    f["dns-managed-zones-list.json"] = []
    for k in [k for k in f if k.startswith("dns-record-sets-list-")]:
        del f[k]
    f["compute-routers-list.json"] = [router(w, nat("prod-nat", ips=[f"{C}projects/shop-prod/regions/us-central1/addresses/prod-nat-ip-1"], min_ports=64))]
    return w, pools, f

# --- 3. valid-shared-vpc: hub-and-spoke Shared VPC; the host project holds the network and the zones; cluster and registry in service projects.
def shared_vpc():
    w = World("team-a", "712345678904", "team-a-prod", "europe-west1", "net-host", "shared-vpc",
              {"gke-team-a": ("10.40.0.0/20", "40.0"), "gke-team-a-batch": ("10.40.16.0/20", "40.16")}, "gke-team-a-prod-7d1e3b5a-node",
              "shared-artifacts", "base", sa="gke-nodes@team-a.iam.gserviceaccount.com", scopes=["https://www.googleapis.com/auth/cloud-platform"])
    pools = [("general", "gke-team-a", 3, w.sa, w.scopes, True), ("batch", "gke-team-a-batch", 2, w.sa, w.scopes, True)]
    f = {}
    f["container-clusters-describe.json"] = cluster(w, pools)
    f["compute-instances-list.json"] = instances(w, pools)
    f["compute-networks-describe.json"] = network(w, peerings=[{"autoCreateRoutes": True, "exchangeSubnetRoutes": True, "exportCustomRoutes": False,
        "exportSubnetRoutesWithPublicIp": True, "importCustomRoutes": True, "importSubnetRoutesWithPublicIp": False, "name": "shared-vpc-to-hub",
        "network": f"{C}projects/net-hub/global/networks/hub", "stackType": "IPV4_ONLY", "state": "ACTIVE", "stateDetails": "[2024-11-02T03:30:00.000-07:00]: Connected."}])
    for s in w.subnets:
        f[subnet_file(s)] = subnet(w, s)
    # no default route: the only way out is the private VIP
    f["compute-routes-list.json"] = subnet_routes(w) + [route(w, "private-googleapis", "199.36.153.8/30", 1000, "private.googleapis.com", nextHopGateway=w.dig()),
        route(w, "to-onprem", "10.0.0.0/8", 1000, "on-premises through the hub", nextHopIp="10.255.0.2")]
    f["compute-firewall-rules-list.json"] = gke_firewalls(w) + [
        fw(w, "deny-all-egress", "EGRESS", 65000, denied=[{"IPProtocol": "all"}], dest=["0.0.0.0/0"]),
        fw(w, "allow-egress-googleapis", "EGRESS", 1000, allowed=[{"IPProtocol": "tcp", "ports": ["443"]}], dest=["199.36.153.8/30"], sas=[w.sa])]
    f["compute-routers-list.json"] = []
    f["dns-managed-zones-list.json"] = [zone(w, "pkg-dev", "pkg.dev."), zone(w, "googleapis", "googleapis.com."),
                                        zone(w, "corp-internal", "corp.internal.", forwardingConfig={"kind": "dns#managedZoneForwardingConfig",
                                             "targetNameServers": [{"ipv4Address": "10.255.0.53", "kind": "dns#managedZoneForwardingConfigNameServerTarget"}]})]
    f["dns-record-sets-list-pkg-dev.json"] = pga_records("pkg.dev.", PRIVATE_VIP)
    f["dns-record-sets-list-googleapis.json"] = googleapis_records(PRIVATE_VIP)
    f["dns-policies-list.json"] = [{"description": "inbound forwarding for on-premises", "enableInboundForwarding": True, "enableLogging": False,
                                    "id": nid(), "kind": "dns#policy", "name": "shared-vpc-inbound",
                                    "networks": [{"kind": "dns#policyNetwork", "networkUrl": w.net_url()}]}]
    f["artifacts-repositories-describe-base.json"] = repository("shared-artifacts", "europe-west1", "base")
    f["artifacts-repositories-get-iam-policy-base.json"] = iam([("roles/artifactregistry.reader", [f"serviceAccount:{w.sa}", "group:platform@example.com"])])
    f["projects-get-iam-policy.json"] = iam([("roles/artifactregistry.admin", ["group:platform@example.com"])], "BwYd0a1Lk2c=", 1)
    f["projects-describe.json"] = project("shared-artifacts", "812345678905")
    # the nodes' projects (the cluster's, the network's host): perimeters list them by number
    f["projects-describe-team-a.json"] = project("team-a", "712345678904")
    f["projects-describe-net-host.json"] = project("net-host", "612345678903")
    f["access-context-manager-perimeters-list.json"] = []
    return w, pools, f

# --- IPv6: a dual-stack cluster (ipAllocationPolicy.stackType IPV4_IPV6) in dual-stack subnets with
# internal IPv6; no private zones, so pkg.dev answers Google's public addresses, AAAA included: the nodes
# dial IPv6 first. Private Google Access on, ::/0 to the default internet gateway; Cloud NAT for IPv4.
V6_RANGES = {"nodes-a": "fd20:a1b:c2d:0:0:0:0:0/64", "nodes-b": "fd20:a1b:c2d:1:0:0:0:0/64"}
def dualstack_world():
    w, pools, f = nat_world()
    pol = f["container-clusters-describe.json"]["ipAllocationPolicy"]
    pol.update({"stackType": "IPV4_IPV6", "ipv6AccessType": "INTERNAL"})
    for s in w.subnets:
        sub = f[subnet_file(s)]
        sub.update({"stackType": "IPV4_IPV6", "ipv6AccessType": "INTERNAL", "internalIpv6Prefix": V6_RANGES[s],
                    "privateIpGoogleAccess": True})
    f["compute-routes-list.json"].append(route(w, "default-route-v6-5e1d0c9b8a7f6e5d", "::/0", 1000, "Default route to the Internet.", nextHopGateway=w.dig()))
    return w, pools, f

def ipv6_fixtures(out):
    w, pools, f = dualstack_world()
    out["valid-dualstack"] = f
    # nodes-b: Private Google Access off; IPv4 still leaves through Cloud NAT, IPv6 is dropped.
    x = copy.deepcopy(f)
    x[subnet_file("nodes-b")]["privateIpGoogleAccess"] = False
    out["warn-ipv6-pga-off"] = x
    # no ::/0 route: IPv6 to Google goes nowhere.
    x = copy.deepcopy(f)
    x["compute-routes-list.json"] = [r for r in x["compute-routes-list.json"] if r["destRange"] != "::/0"]
    out["warn-ipv6-no-route"] = x
    # an egress deny for ::/0 (written for IPv6 only): IPv4 is untouched, IPv6 meets the deny.
    x = copy.deepcopy(f)
    x["compute-firewall-rules-list.json"].append(fw(w, "deny-egress-ipv6", "EGRESS", 1000, denied=[{"IPProtocol": "all"}], dest=["::/0"]))
    out["warn-ipv6-firewall-deny"] = x

# --- Issue 39: the GKE audit's precision classes. New folders come after the others so the ids
# (nid) of the folders above stay as they were.
def issue39_fixtures(out, w, pools, f):
    bsa = "batch-nodes@shop-prod.iam.gserviceaccount.com"
    p2 = [pools[0], ("batch", "nodes-b", 2, bsa, ["https://www.googleapis.com/auth/cloud-platform"], True)]
    # identity-reader through a group: the batch pool's account holds no reader role by name; the
    # project grants Artifact Registry Reader to a group the audit cannot expand: a fail for batch
    # naming the group (the default pool holds the role by name on the repository).
    x = copy.deepcopy(f)
    x["container-clusters-describe.json"] = cluster(w, p2)
    x["compute-instances-list.json"] = instances(w, p2)
    x["projects-get-iam-policy.json"]["bindings"].append({"members": ["group:gke-pullers@example.com"], "role": "roles/artifactregistry.reader"})
    out["invalid-identity-group-only"] = x
    # identity-reader under a condition: the repository grants the batch account the reader role
    # with an IAM condition (policy version 3): a warn, the condition is not evaluated.
    y = copy.deepcopy(x)
    pol = y["artifacts-repositories-get-iam-policy-apps.json"]
    pol["version"] = 3
    pol["bindings"].append({"condition": {"description": "batch pulls until the migration ends",
        "expression": "request.time < timestamp(\"2027-01-01T00:00:00Z\")", "title": "until-2027"},
        "members": [f"serviceAccount:{bsa}"], "role": "roles/artifactregistry.reader"})
    out["warn-identity-conditional"] = y
    # firewall-egress-443, an allow that misses a pool (by service account): egress is denied at
    # 65000 and allowed to the VIP at 1000 for the default pool's account only; the batch pool runs
    # as its own account (a reader of the repository): the change adds it to that rule.
    x = copy.deepcopy(f)
    x["container-clusters-describe.json"] = cluster(w, p2)
    x["compute-instances-list.json"] = instances(w, p2)
    x["artifacts-repositories-get-iam-policy-apps.json"]["bindings"][0]["members"].append(f"serviceAccount:{bsa}")
    x["compute-firewall-rules-list.json"] = gke_firewalls(w) + [
        fw(w, "deny-all-egress", "EGRESS", 65000, denied=[{"IPProtocol": "all"}], dest=["0.0.0.0/0"]),
        fw(w, "allow-egress-googleapis-443", "EGRESS", 1000, allowed=[{"IPProtocol": "tcp", "ports": ["443"]}], dest=["199.36.153.8/30"], sas=[w.sa])]
    out["invalid-firewall-allow-misses-pool-sa"] = x
    # the same by network tag: the default pool carries the tag egress-google (config.tags, and on
    # its instances beside GKE's node tag), the allow targets that tag only.
    x = copy.deepcopy(f)
    x["container-clusters-describe.json"]["nodePools"][0]["config"]["tags"] = ["egress-google"]
    for inst in x["compute-instances-list.json"]:
        if inst["labels"]["goog-k8s-node-pool-name"] == "default-pool":
            inst["tags"]["items"].append("egress-google")
    x["compute-firewall-rules-list.json"] = gke_firewalls(w) + [
        fw(w, "deny-all-egress", "EGRESS", 65000, denied=[{"IPProtocol": "all"}], dest=["0.0.0.0/0"]),
        fw(w, "allow-egress-googleapis-443", "EGRESS", 1000, allowed=[{"IPProtocol": "tcp", "ports": ["443"]}], dest=["199.36.153.8/30"], tags=["egress-google"])]
    out["invalid-firewall-allow-misses-pool-tag"] = x
    # vpc-sc, the nodes' project number: both pools run as a custom account (so no default compute
    # account tells shop-prod's number) and pull from shop-artifacts, inside a perimeter that
    # restricts Artifact Registry. valid-vpc-sc-number-from-project: shop-prod's own describe gives
    # its number, the perimeter holds both. invalid-vpc-sc-outside-number-unknown: that file is
    # not given, the perimeter lists only shop-artifacts' number, which the folder names: the nodes
    # are outside, decided without their number. warn-vpc-sc-number-unknown: the perimeter also
    # lists a number no file names (it may be shop-prod's): undecided.
    p3 = [("default-pool", "nodes-a", 3, bsa, ["https://www.googleapis.com/auth/cloud-platform"], True),
          ("batch", "nodes-b", 2, bsa, ["https://www.googleapis.com/auth/cloud-platform"], True)]
    x = copy.deepcopy(f)
    x["container-clusters-describe.json"] = cluster(w, p3)
    x["compute-instances-list.json"] = instances(w, p3)
    x["artifacts-repositories-get-iam-policy-apps.json"] = iam([("roles/artifactregistry.reader", [f"serviceAccount:{bsa}"])])
    x["projects-describe.json"] = project("shop-artifacts", "512345678902")
    x["projects-get-iam-policy.json"] = iam([("roles/owner", ["user:platform-admin@example.com"])], "BwYd1b2Lk3c=", 1)
    x["projects-describe-shop-prod.json"] = project("shop-prod", "412345678901")
    x["artifacts-repositories-describe-apps.json"] = repository("shop-artifacts", "us-central1", "apps")
    perim = {"name": "accessPolicies/987654321098/servicePerimeters/artifacts_perimeter", "perimeterType": "PERIMETER_TYPE_REGULAR",
             "status": {"resources": ["projects/512345678902", "projects/412345678901"],
                        "restrictedServices": ["artifactregistry.googleapis.com", "storage.googleapis.com"], "vpcAccessibleServices": {}},
             "title": "artifacts_perimeter"}
    x["access-context-manager-perimeters-list.json"] = [perim]
    out["valid-vpc-sc-number-from-project"] = x
    y = copy.deepcopy(x)
    del y["projects-describe-shop-prod.json"]
    y["access-context-manager-perimeters-list.json"][0]["status"]["resources"] = ["projects/512345678902"]
    out["invalid-vpc-sc-outside-number-unknown"] = y
    z = copy.deepcopy(y)
    z["access-context-manager-perimeters-list.json"][0]["status"]["resources"].append("projects/998877665544")
    out["warn-vpc-sc-number-unknown"] = z

def main():
    out = {}
    w, pools, f = healthy()
    out["valid-healthy"] = f
    nw, _, nf = nat_world()
    out["valid-nat"] = nf
    sw, spools, sf = shared_vpc()
    out["valid-shared-vpc"] = sf
    # gcr.io images: the project grants the node account Storage Object Viewer (Container Registry's buckets)
    g = copy.deepcopy(f)
    del g["artifacts-repositories-get-iam-policy-apps.json"]  # optional for gcr.io
    del g["artifacts-repositories-describe-apps.json"]
    g["projects-get-iam-policy.json"]["bindings"].append({"members": [f"serviceAccount:{w.sa}"], "role": "roles/storage.objectViewer"})
    out["valid-gcr"] = g  # audited with gcr.io/shop-prod/web:1.4.2

    # dns-zone: the pkg.dev zone lost its wildcard: us-central1-docker.pkg.dev is NXDOMAIN.
    x = copy.deepcopy(f)
    x["dns-record-sets-list-pkg-dev.json"] = [r for r in x["dns-record-sets-list-pkg-dev.json"] if not r["name"].startswith("*.")]
    out["invalid-dns-zone-no-wildcard"] = x
    # dns-zone: the pkg.dev zone answers a public address, not the VIP.
    x = copy.deepcopy(f)
    for r in x["dns-record-sets-list-pkg-dev.json"]:
        if r["type"] == "A":
            r["rrdatas"] = ["142.250.157.82"]
    out["invalid-dns-zone-public-answer"] = x
    # dns-zone, GCR: googleapis.com has no wildcard: storage.googleapis.com (the layers) is NXDOMAIN while gcr.io answers.
    x = copy.deepcopy(g)
    x["dns-record-sets-list-googleapis.json"] = [r for r in x["dns-record-sets-list-googleapis.json"] if not r["name"].startswith("*.")]
    out["invalid-gcr-storage-no-wildcard"] = x
    # dns-policy (warn): alternative name servers bound to the network.
    x = copy.deepcopy(f)
    x["dns-policies-list.json"] = [{"alternativeNameServerConfig": {"kind": "dns#policyAlternativeNameServerConfig",
        "targetNameServers": [{"forwardingPath": "private", "ipv4Address": "10.200.0.53", "kind": "dns#policyAlternativeNameServerConfigTargetNameServer"}]},
        "description": "", "enableInboundForwarding": False, "enableLogging": False, "id": nid(), "kind": "dns#policy", "name": "corp-resolvers",
        "networks": [{"kind": "dns#policyNetwork", "networkUrl": w.net_url()}]}]
    out["invalid-dns-policy-alternative-servers"] = x
    # private-google-access: off on nodes-b while the zones answer the VIP.
    x = copy.deepcopy(f)
    x[subnet_file("nodes-b")]["privateIpGoogleAccess"] = False
    out["invalid-pga-off"] = x
    # private-google-access: no PGA and no Cloud NAT on the NAT world.
    x = copy.deepcopy(nf)
    x["compute-routers-list.json"] = [router(nw, None)]
    out["invalid-pga-off-no-nat"] = x
    # route: the default route was deleted and no route covers 199.36.153.8/30.
    x = copy.deepcopy(f)
    x["compute-routes-list.json"] = subnet_routes(w)
    out["invalid-route-no-vip-route"] = x
    # route: 0.0.0.0/0 through an inspection appliance (an internal load balancer) wins over the default route, and no /30 for the VIP.
    x = copy.deepcopy(f)
    x["compute-routes-list.json"] = subnet_routes(w) + [default_route(w),
        route(w, "egress-via-ngfw", "0.0.0.0/0", 900, "all egress through the inspection appliance", nextHopIlb=f"{C}projects/shop-prod/regions/us-central1/forwardingRules/ngfw-ilb")]
    out["invalid-route-appliance"] = x
    # firewall-egress-443: a deny of all egress at priority 1000 ties the allow for the VIP: the deny wins.
    x = copy.deepcopy(f)
    x["compute-firewall-rules-list.json"].append(fw(w, "deny-all-egress", "EGRESS", 1000, denied=[{"IPProtocol": "all"}], dest=["0.0.0.0/0"], tags=[w.node_tag]))
    out["invalid-firewall-deny-443"] = x
    # cloud-nat: the NAT serves nodes-a only.
    x = copy.deepcopy(nf)
    n = x["compute-routers-list.json"][0]["nats"][0]
    n["sourceSubnetworkIpRangesToNat"] = "LIST_OF_SUBNETWORKS"
    n["subnetworks"] = [{"name": nw.subnet_url("nodes-a"), "sourceIpRangesToNat": ["ALL_IP_RANGES"]}]
    out["invalid-nat-not-covering"] = x
    # cloud-nat: one NAT IP, 32768 ports per VM, 5 nodes: 163840 ports wanted, 64512 given.
    x = copy.deepcopy(nf)
    x["compute-routers-list.json"][0]["nats"][0]["minPortsPerVm"] = 32768
    out["invalid-nat-ports"] = x
    # access-scopes: the batch pool was created with logging and monitoring scopes only.
    x = copy.deepcopy(f)
    few = ["https://www.googleapis.com/auth/logging.write", "https://www.googleapis.com/auth/monitoring"]
    p2 = [pools[0], ("batch", "nodes-b", 2, w.sa, few, True)]
    x["container-clusters-describe.json"] = cluster(w, p2)
    x["compute-instances-list.json"] = instances(w, p2)
    out["invalid-access-scopes"] = x
    # identity-reader: the batch pool runs as a custom service account without a reader role.
    x = copy.deepcopy(f)
    bsa = "batch-nodes@shop-prod.iam.gserviceaccount.com"
    p2 = [pools[0], ("batch", "nodes-b", 2, bsa, ["https://www.googleapis.com/auth/cloud-platform"], True)]
    x["container-clusters-describe.json"] = cluster(w, p2)
    x["compute-instances-list.json"] = instances(w, p2)
    out["invalid-identity-no-reader"] = x
    # vpc-sc: the registry moved to shop-artifacts, inside a perimeter that restricts Artifact Registry; shop-prod is outside.
    x = copy.deepcopy(f)
    x["projects-describe.json"] = project("shop-artifacts", "512345678902")
    x["projects-describe-shop-prod.json"] = project("shop-prod", "412345678901")
    x["artifacts-repositories-describe-apps.json"] = repository("shop-artifacts", "us-central1", "apps")
    x["projects-get-iam-policy.json"] = iam([("roles/owner", ["user:platform-admin@example.com"])], "BwYd1b2Lk3c=", 1)
    x["access-context-manager-perimeters-list.json"] = [{"name": "accessPolicies/987654321098/servicePerimeters/artifacts_perimeter",
        "perimeterType": "PERIMETER_TYPE_REGULAR", "status": {"resources": ["projects/512345678902"],
        "restrictedServices": ["artifactregistry.googleapis.com", "storage.googleapis.com"], "vpcAccessibleServices": {}},
        "title": "artifacts_perimeter"}]
    out["invalid-vpc-sc-outside-perimeter"] = x
    # the healthy perimeter: both projects inside (audited with the shop-artifacts image).
    y = copy.deepcopy(x)
    y["access-context-manager-perimeters-list.json"][0]["status"]["resources"].append("projects/412345678901")
    out["valid-vpc-sc-both-inside"] = y
    ipv6_fixtures(out)
    issue39_fixtures(out, w, pools, f)
    # dns-zone not bound (issue 39, class 1): in the Shared VPC built without a default route, the
    # pkg.dev zone of the host project is bound to another network (legacy-vpc), not shared-vpc:
    # the nodes get Google's public addresses, which no route and no egress rule lets them reach;
    # the change is the binding. -no-records: the zone's records are not in the folder either.
    x = copy.deepcopy(sf)
    for z in x["dns-managed-zones-list.json"]:
        if z["name"] == "pkg-dev":
            z["privateVisibilityConfig"]["networks"] = [{"kind": "dns#managedZonePrivateVisibilityConfigNetwork",
                                                         "networkUrl": f"{C}projects/net-host/global/networks/legacy-vpc"}]
    out["invalid-dns-zone-not-bound"] = x
    y = copy.deepcopy(x)
    del y["dns-record-sets-list-pkg-dev.json"]
    out["invalid-dns-zone-not-bound-no-records"] = y
    remote_fixtures(out, w, f)

# --- Remote repositories (issue 39): us-central1-docker.pkg.dev/shop-prod/dockerhub is an Artifact
# Registry remote repository caching Docker Hub with a username and a Secret Manager secret version;
# the Artifact Registry service agent of shop-prod (412345678901) must read the secret, and inside a
# perimeter the project's vpcsc-config for us-central1 must be ALLOW.
AGENT = "service-412345678901@gcp-sa-artifactregistry.iam.gserviceaccount.com"
def remote_fixtures(out, w, f):
    r = copy.deepcopy(f)
    del r["artifacts-repositories-get-iam-policy-apps.json"], r["artifacts-repositories-describe-apps.json"]
    r["artifacts-repositories-get-iam-policy-dockerhub.json"] = iam([("roles/artifactregistry.reader", [f"serviceAccount:{w.sa}"])], "BwYe2c4Lm1A=")
    r["artifacts-repositories-describe-dockerhub.json"] = repository("shop-prod", "us-central1", "dockerhub", remote={
        "description": "Docker Hub", "dockerRepository": {"publicRepository": "DOCKER_HUB"},
        "upstreamCredentials": {"usernamePasswordCredentials": {"passwordSecretVersion": "projects/shop-prod/secrets/dockerhub-token/versions/3",
                                                                "username": "shopbot"}}})
    r["secrets-get-iam-policy-dockerhub-token.json"] = iam([("roles/secretmanager.secretAccessor", [f"serviceAccount:{AGENT}"])], "BwYe2c4Lm2B=")
    r["artifacts-vpcsc-config.json"] = {"name": "projects/shop-prod/locations/us-central1/vpcscConfig", "vpcscPolicy": "DENY"}
    out["valid-remote-dockerhub"] = r
    # the secret's policy names only its admin: the service agent cannot read the token
    x = copy.deepcopy(r)
    x["secrets-get-iam-policy-dockerhub-token.json"] = iam([("roles/secretmanager.admin", ["user:platform-admin@example.com"])], "BwYe2c4Lm3C=")
    out["invalid-remote-secret-no-accessor"] = x
    # the agent reads it only under a condition (policy version 3): undecided
    x = copy.deepcopy(r)
    pol = x["secrets-get-iam-policy-dockerhub-token.json"]
    pol["version"] = 3
    pol["bindings"][0]["condition"] = {"expression": "request.time < timestamp(\"2026-06-30T00:00:00Z\")", "title": "token-rotation-window"}
    out["warn-remote-secret-conditional"] = x
    # shop-prod inside a perimeter that restricts Artifact Registry, vpcsc-config DENY: the cache cannot
    # reach Docker Hub; ALLOW: it can
    x = copy.deepcopy(r)
    x["access-context-manager-perimeters-list.json"] = [{"name": "accessPolicies/987654321098/servicePerimeters/prod_perimeter",
        "perimeterType": "PERIMETER_TYPE_REGULAR", "status": {"resources": ["projects/412345678901"],
        "restrictedServices": ["artifactregistry.googleapis.com", "storage.googleapis.com"], "vpcAccessibleServices": {}},
        "title": "prod_perimeter"}]
    out["invalid-remote-vpcsc-deny"] = x
    y = copy.deepcopy(x)
    y["artifacts-vpcsc-config.json"]["vpcscPolicy"] = "ALLOW"
    out["valid-remote-vpcsc-allow"] = y
    for name, files in out.items():
        write(name, files)

if __name__ == "__main__":
    main()
