// Package armfake is a loopback HTTPS server that answers the Azure
// Resource Manager REST calls `pullpath azure collect` makes, with bodies in
// ARM's shape (properties nested, list pages as {"value": [...],
// "nextLink": ...}) as the REST API reference gives them. No Azure
// emulator runs here, so this is the one fake the live path is tested
// against; the Azure SDK for Go's own clients talk to it through
// arm.ClientOptions with a test cloud configuration and a static
// credential.
//
// It serves an account from an azure.Model (loaded from a fixture folder),
// so the live path and --from read the same account.
package armfake

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	azaudit "github.com/pullpath/pullpath/internal/audit/azure"
)

// Server is the fake ARM endpoint.
type Server struct {
	*httptest.Server
	PageSize int // items per list page (every list is paged)

	mu        sync.Mutex
	resources map[string][]byte // lower-cased ARM id -> body
	lists     map[string][]json.RawMessage
	posts     map[string][]byte // lower-cased path -> body of a POST action
	roles     []json.RawMessage
	roleNames map[string]string // role definition id (lower) -> roleName
	calls     map[string]int    // "GET kind" -> count
	denied    map[string]string // "GET kind" -> the action ARM names in its refusal
	Requests  int
}

// New serves m's account.
func New(m *azaudit.Model) *Server {
	s := &Server{PageSize: 2, resources: map[string][]byte{}, lists: map[string][]json.RawMessage{},
		posts: map[string][]byte{}, roleNames: map[string]string{}, calls: map[string]int{}, denied: map[string]string{}}
	s.load(m)
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	// clients that close idle connections make the server log handshake EOFs
	s.Server.Config.ErrorLog = log.New(io.Discard, "", 0)
	s.Server.StartTLS()
	return s
}

func raw(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func key(id string) string { return strings.ToLower(strings.TrimSuffix(id, "/")) }

func (s *Server) put(id string, v any) {
	if id != "" {
		s.resources[key(id)] = raw(v)
	}
}

func (s *Server) load(m *azaudit.Model) {
	c := cluster(m)
	s.resources[key(*m.Cluster.ID)] = c
	sub := strings.Split(strings.Trim(*m.Cluster.ID, "/"), "/")[1]
	s.lists[key("/subscriptions/"+sub+"/providers/Microsoft.ContainerService/managedClusters")] = []json.RawMessage{c}
	if m.ManagedSubnet != "" && m.VNet != nil {
		// an AKS-managed VNet: listed in the node resource group
		s.lists[key(strings.TrimSuffix(*m.VNet.ID, "/"+*m.VNet.Name))] = []json.RawMessage{raw(m.VNet)}
	}
	if m.VNet != nil {
		s.put(*m.VNet.ID, m.VNet)
		var ps []json.RawMessage
		for _, p := range m.Peerings {
			ps = append(ps, raw(p))
		}
		s.lists[key(*m.VNet.ID+"/virtualNetworkPeerings")] = ps
	}
	for _, sn := range m.Subnets {
		s.put(*sn.ID, sn)
	}
	for _, rt := range m.RouteTables {
		s.put(*rt.ID, rt)
	}
	for _, g := range m.NSGs {
		s.put(*g.ID, g)
	}
	for _, pe := range m.PrivateEndpoints {
		s.put(*pe.ID, pe)
	}
	var zones []json.RawMessage
	for _, z := range m.Zones {
		zones = append(zones, raw(z))
		s.put(*z.ID, z)
	}
	s.lists[key("/subscriptions/"+sub+"/providers/Microsoft.Network/privateDnsZones")] = zones
	if zid := m.ZoneID(); zid != "" {
		var ls []json.RawMessage
		for _, l := range m.Links {
			ls = append(ls, raw(l))
		}
		s.lists[key(zid+"/virtualNetworkLinks")] = ls
	}
	for _, r := range m.Records {
		s.put(*r.ID, r)
	}
	if r := m.Registry; r != nil {
		body := map[string]any{}
		_ = json.Unmarshal(raw(r), &body)
		if p, ok := body["properties"].(map[string]any); ok {
			// fields this SDK version does not model, where ARM puts them
			if m.RoleAssignmentMode != "" {
				p["roleAssignmentMode"] = m.RoleAssignmentMode
			}
			if m.EndpointProtocol != "" {
				p["endpointProtocol"] = m.EndpointProtocol
			}
		}
		s.resources[key(*r.ID)] = raw(body)
		s.lists[key("/subscriptions/"+sub+"/providers/Microsoft.ContainerRegistry/registries")] = []json.RawMessage{raw(body)}
	}
	if r := m.Registry; r != nil {
		// the artifact cache: the registry's rules and credential sets
		var rules, sets []json.RawMessage
		for _, cr := range m.CacheRules {
			rules = append(rules, raw(cr))
		}
		for _, cs := range m.CredentialSets {
			sets = append(sets, raw(cs))
		}
		s.lists[key(*r.ID+"/cacheRules")] = rules
		s.lists[key(*r.ID+"/credentialSets")] = sets
	}
	var vaults []json.RawMessage
	for _, v := range slices.Sorted(maps.Keys(m.Vaults)) {
		vaults = append(vaults, raw(m.Vaults[v]))
	}
	s.lists[key("/subscriptions/"+sub+"/providers/Microsoft.KeyVault/vaults")] = vaults
	all := append([]azaudit.RoleAssignment(nil), m.Roles...)
	for _, v := range slices.Sorted(maps.Keys(m.VaultRoles)) {
		all = append(all, m.VaultRoles[v]...)
	}
	seen := map[string]bool{}
	for _, ra := range all {
		if ra.ID != nil && seen[key(*ra.ID)] {
			continue
		}
		if ra.ID != nil {
			seen[key(*ra.ID)] = true
		}
		s.roles = append(s.roles, raw(ra.RoleAssignment))
		if ra.Properties != nil && ra.Properties.RoleDefinitionID != nil && ra.DefinitionName != "" {
			s.roleNames[key(*ra.Properties.RoleDefinitionID)] = ra.DefinitionName
		}
	}
	for _, nic := range m.NodeNICs() {
		routes, ok := m.Routes[strings.ToLower(nic.Name)]
		if !ok {
			continue
		}
		path := "/subscriptions/" + sub + "/resourceGroups/" + nic.ResourceGroup + "/providers/Microsoft.Network/networkInterfaces/" + nic.Name + "/effectiveRouteTable"
		s.posts[key(path)] = raw(map[string]any{"value": routes})
	}
}

// cluster is the cluster as ARM holds it: on an AKS-managed VNet the
// pools name no subnet (the loader placed them in the managed one).
func cluster(m *azaudit.Model) json.RawMessage {
	body := raw(m.Cluster)
	if m.ManagedSubnet == "" {
		return body
	}
	var c map[string]any
	_ = json.Unmarshal(body, &c)
	if p, ok := c["properties"].(map[string]any); ok {
		pools, _ := p["agentPoolProfiles"].([]any)
		for _, ap := range pools {
			if ap, ok := ap.(map[string]any); ok && strings.EqualFold(fmt.Sprint(ap["vnetSubnetID"]), m.ManagedSubnet) {
				delete(ap, "vnetSubnetID")
			}
		}
	}
	return raw(c)
}

// AddRegistry adds another registry to the subscription's list (a
// Premium registry with public access, in the model registry's resource
// group), so that a test can tell which one collect picked.
func (s *Server) AddRegistry(m *azaudit.Model, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := *m.Registry.ID
	id = id[:strings.LastIndex(id, "/")+1] + name
	body := raw(map[string]any{"id": id, "name": name, "type": "Microsoft.ContainerRegistry/registries", "location": *m.Registry.Location,
		"sku":        map[string]any{"name": "Premium", "tier": "Premium"},
		"properties": map[string]any{"loginServer": name + ".azurecr.io", "publicNetworkAccess": "Enabled", "provisioningState": "Succeeded"}})
	s.resources[key(id)] = body
	lk := key(strings.Join(strings.Split(id, "/")[:3], "/") + "/providers/Microsoft.ContainerRegistry/registries")
	s.lists[lk] = append(s.lists[lk], body)
}

// Deny makes every call of a kind ("GET managedClusters", as Calls names
// them) answer 403 AuthorizationFailed for action, as ARM refuses an
// identity no role grants it.
func (s *Server) Deny(call, action string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.denied[call] = action
}

// Calls is how many requests each kind of call got ("GET virtualNetworks", "POST effectiveRouteTable", ...).
func (s *Server) Calls() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for k, v := range s.calls {
		out[k] = v
	}
	return out
}

func kindOf(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	// the last type segment: .../TYPE/NAME or .../TYPE (a list) or .../ACTION
	if len(parts)%2 == 0 && len(parts) > 0 {
		return parts[len(parts)-2]
	}
	return parts[len(parts)-1]
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.Requests++
	s.calls[r.Method+" "+kindOf(r.URL.Path)]++
	action, denied := s.denied[r.Method+" "+kindOf(r.URL.Path)]
	s.mu.Unlock()
	if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer ") {
		armErr(w, http.StatusUnauthorized, "AuthenticationFailed", "no bearer token")
		return
	}
	if denied {
		// ARM's words for an identity without a role that grants the action.
		armErr(w, http.StatusForbidden, "AuthorizationFailed", fmt.Sprintf("The client '%s' with object id '%s' does not have authorization to perform action '%s' over scope '%s' or the scope is invalid. If access was recently granted, please refresh your credentials.",
			ObjectID, ObjectID, action, r.URL.Path))
		return
	}
	if r.URL.Query().Get("api-version") == "" {
		armErr(w, http.StatusBadRequest, "MissingApiVersionParameter", "The api-version query parameter (?api-version=) is required for all requests.")
		return
	}
	k := key(r.URL.Path)
	switch r.Method {
	case http.MethodPost:
		if body, ok := s.posts[k]; ok {
			writeJSON(w, body)
			return
		}
	case http.MethodGet:
		if scope, ok := strings.CutSuffix(k, "/providers/microsoft.authorization/roleassignments"); ok {
			s.page(w, r, filterRoles(s.roles, scope, r.URL.Query().Get("$filter")))
			return
		}
		if i := strings.Index(k, "/providers/microsoft.authorization/roledefinitions/"); i >= 0 {
			name, ok := s.roleNames[k]
			if !ok {
				armErr(w, http.StatusNotFound, "RoleDefinitionDoesNotExist", "The specified role definition does not exist.")
				return
			}
			writeJSON(w, raw(map[string]any{"id": r.URL.Path, "name": lastSeg(k), "type": "Microsoft.Authorization/roleDefinitions",
				"properties": map[string]any{"roleName": name, "type": "BuiltInRole"}}))
			return
		}
		if items, ok := s.lists[k]; ok {
			s.page(w, r, items)
			return
		}
		if body, ok := s.resources[k]; ok {
			writeJSON(w, body)
			return
		}
	}
	armErr(w, http.StatusNotFound, "ResourceNotFound", fmt.Sprintf("The Resource '%s' was not found.", r.URL.Path))
}

func lastSeg(p string) string { return p[strings.LastIndex(p, "/")+1:] }

// page serves a list in pages of PageSize with nextLink, as ARM does.
func (s *Server) page(w http.ResponseWriter, r *http.Request, items []json.RawMessage) {
	start, _ := strconv.Atoi(r.URL.Query().Get("page"))
	end := start + s.PageSize
	if end > len(items) {
		end = len(items)
	}
	body := map[string]any{"value": append([]json.RawMessage{}, items[min(start, len(items)):end]...)}
	if end < len(items) {
		q := r.URL.Query()
		q.Set("page", strconv.Itoa(end))
		u := url.URL{Scheme: "https", Host: r.Host, Path: r.URL.Path, RawQuery: q.Encode()}
		body["nextLink"] = u.String()
	}
	writeJSON(w, raw(body))
}

// filterRoles is ARM's answer for a scope: the assignments at the scope,
// above it and below it (a subscription-wide listing holds every one),
// of one principal when the filter names one.
func filterRoles(all []json.RawMessage, scope, filter string) []json.RawMessage {
	const p = "principalId eq '"
	if f, err := url.QueryUnescape(filter); err == nil {
		filter = f
	}
	want := ""
	if i := strings.Index(filter, p); i >= 0 {
		want = strings.TrimSuffix(filter[i+len(p):], "'")
	}
	var out []json.RawMessage
	for _, r := range all {
		var ra struct {
			Properties struct {
				PrincipalID string `json:"principalId"`
				Scope       string `json:"scope"`
			} `json:"properties"`
		}
		if json.Unmarshal(r, &ra) != nil || want != "" && !strings.EqualFold(ra.Properties.PrincipalID, want) {
			continue
		}
		if sc := key(ra.Properties.Scope); sc == "" || related(sc, scope) {
			out = append(out, r)
		}
	}
	return out
}

// related: one scope holds the other (or they are the same).
func related(a, b string) bool {
	return a == b || strings.HasPrefix(a, b+"/") || strings.HasPrefix(b, a+"/") || a == "/" || b == ""
}

func writeJSON(w http.ResponseWriter, body []byte) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, _ = w.Write(body)
}

func armErr(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("x-ms-error-code", code)
	w.WriteHeader(status)
	_, _ = w.Write(raw(map[string]any{"error": map[string]any{"code": code, "message": msg}}))
}

// ClientOptions point the SDK's clients at the server: a test cloud whose
// Resource Manager endpoint is the server, its TLS client, no retries.
func (s *Server) ClientOptions() *arm.ClientOptions {
	return &arm.ClientOptions{ClientOptions: policy.ClientOptions{
		Cloud: cloud.Configuration{
			ActiveDirectoryAuthorityHost: s.URL + "/",
			Services: map[cloud.ServiceName]cloud.ServiceConfiguration{
				cloud.ResourceManager: {Audience: "https://management.core.test", Endpoint: s.URL},
			},
		},
		Transport: s.Client(),
		Retry:     policy.RetryOptions{MaxRetries: -1},
	}}
}

// The application the static credential's token is for, as Entra ID
// names a service principal in an access token's claims.
const (
	AppID    = "0f6a1c9e-5b7d-4e2a-9c3f-7a1d2e4b6c80"
	ObjectID = "3c9e2b7a-1d4f-4a6e-8b5c-9f0e1d2c3b4a"
	TenantID = "72f988bf-86f1-41af-91ab-2d7cd011db47"
)

// Credential is a static test credential: an unsigned token in a JWT's
// shape whose claims name AppID in TenantID (ARM here checks only that a
// bearer token is sent).
type Credential struct{}

func (Credential) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	seg := func(v any) string { return base64.RawURLEncoding.EncodeToString(raw(v)) }
	tok := seg(map[string]string{"alg": "none", "typ": "JWT"}) + "." +
		seg(map[string]string{"aud": "https://management.core.test", "appid": AppID, "idtyp": "app", "oid": ObjectID, "tid": TenantID}) + ".fake"
	return azcore.AccessToken{Token: tok, ExpiresOn: time.Now().Add(time.Hour)}, nil
}
