// Package gcpfake is a loopback HTTP server that answers the Google Cloud
// REST calls `pullpath gcp collect` makes, with bodies in the APIs' own
// JSON (Compute's {"items": [...], "nextPageToken": ...} pages and
// aggregated lists, Cloud DNS's {"managedZones"|"rrsets"|"policies": ...},
// Container's cluster, Resource Manager's and Artifact Registry's IAM
// policies, Access Context Manager's perimeters). No Google emulator runs
// these APIs, so this is the one fake the live path is tested against:
// google.golang.org/api's own clients talk to it through
// option.WithEndpoint and a static token.
//
// It serves a cluster from a gcp.Model loaded from a fixture folder, so the
// live path and --from read the same configuration.
package gcpfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/oauth2"
	"google.golang.org/api/option"

	gcpaudit "github.com/pullpath/pullpath/internal/audit/gcp"
)

// Token is the static bearer token the fake accepts.
const Token = "ya29.pullpath-fake-token"

// Server is the fake Google Cloud endpoint.
type Server struct {
	*httptest.Server
	// PageSize caps every list page (the client's maxResults/pageSize is
	// honoured below it), so every list is paged in tests.
	PageSize int

	// MetadataEmail, when set, makes the server answer as the GCE
	// metadata server too (GCE_METADATA_HOST=HOST:PORT), as Application
	// Default Credentials read it on a VM: the default service account's
	// email and an access token (Token) for it. Empty: a VM without a
	// service account (404, as the metadata server answers then).
	MetadataEmail string

	m        *gcpaudit.Model
	org      string
	mu       sync.Mutex
	calls    map[string]int
	denied   [][2]string
	Requests int
}

// Deny makes every call whose path holds part answer 403
// PERMISSION_DENIED, as Google's APIs refuse an identity without
// permission.
func (s *Server) Deny(part, permission string) {
	s.mu.Lock()
	s.denied = append(s.denied, [2]string{part, permission})
	s.mu.Unlock()
}

// New serves m's configuration; the registry project's organization is
// org (its access policy is "accessPolicies/987654321098").
func New(m *gcpaudit.Model) *Server {
	s := &Server{PageSize: 2, m: m, org: "301234567890", calls: map[string]int{}}
	if m.Project != nil && m.Project.Parent != nil {
		s.org = m.Project.Parent.Id
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// Options are the client options that reach the fake: pass them with
// Endpoint = s.URL.
func (s *Server) Options() []option.ClientOption {
	return []option.ClientOption{option.WithTokenSource(oauth2.StaticTokenSource(&oauth2.Token{AccessToken: Token, TokenType: "Bearer"}))}
}

// Calls is how many requests each kind of call got ("compute routes", "dns rrsets", ...).
func (s *Server) Calls() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for k, v := range s.calls {
		out[k] = v
	}
	return out
}

func gerr(w http.ResponseWriter, code int, status, msg string) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": code, "message": msg, "status": status,
		"errors": []any{map[string]any{"message": msg, "domain": "global", "reason": strings.ToLower(status)}}}})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) count(kind string) {
	s.mu.Lock()
	s.Requests++
	s.calls[kind]++
	s.mu.Unlock()
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if rest, ok := strings.CutPrefix(r.URL.Path, "/computeMetadata/v1/"); ok {
		s.metadata(w, r, rest)
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+Token {
		s.count("unauthenticated")
		gerr(w, http.StatusUnauthorized, "UNAUTHENTICATED", "Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential.")
		return
	}
	s.mu.Lock()
	denied := s.denied
	s.mu.Unlock()
	for _, d := range denied {
		if strings.Contains(r.URL.Path, d[0]) {
			s.count("denied")
			gerr(w, http.StatusForbidden, "PERMISSION_DENIED", fmt.Sprintf("Required %q permission(s) for %q.", d[1], r.URL.Path))
			return
		}
	}
	service, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	parts := strings.Split(rest, "/")
	q := r.URL.Query()
	switch service {
	case "container":
		s.count("container clusters")
		c := s.m.Cluster
		want := fmt.Sprintf("v1/projects/%s/locations/%s/clusters/%s", s.m.ClusterProject(), s.m.Location(), c.Name)
		if r.Method == http.MethodGet && rest == want {
			writeJSON(w, c)
			return
		}
	case "compute":
		s.compute(w, r, parts[1:], q)
		return
	case "dns":
		s.dns(w, r, parts[2:], q)
		return
	case "artifactregistry":
		if r.Method == http.MethodGet && strings.HasSuffix(rest, "/vpcscConfig") {
			s.count("artifactregistry vpcscConfig")
			if s.m.VPCSC != nil && "v1/"+s.m.VPCSC.Name == rest {
				writeJSON(w, s.m.VPCSC)
				return
			}
			gerr(w, http.StatusNotFound, "NOT_FOUND", "Requested entity was not found.")
			return
		}
		if r.Method == http.MethodGet && !strings.Contains(rest, ":") && strings.Contains(rest, "/repositories/") {
			s.count("artifactregistry repositories")
			if repo, ok := s.m.Repos[lastSeg(rest)]; ok && "v1/"+repo.Name == rest {
				writeJSON(w, repo)
				return
			}
			gerr(w, http.StatusNotFound, "NOT_FOUND", "Requested entity was not found.")
			return
		}
		s.count("artifactregistry getIamPolicy")
		if name, ok := strings.CutSuffix(rest, ":getIamPolicy"); ok && r.Method == http.MethodGet {
			if p, ok := s.m.RepoPolicies[lastSeg(name)]; ok && strings.HasPrefix(name, "v1/projects/") {
				writeJSON(w, p)
				return
			}
			gerr(w, http.StatusNotFound, "NOT_FOUND", fmt.Sprintf("Requested entity was not found."))
			return
		}
	case "secretmanager":
		s.count("secretmanager getIamPolicy")
		if name, ok := strings.CutSuffix(rest, ":getIamPolicy"); ok && r.Method == http.MethodGet {
			if p, ok := s.m.SecretPolicies[lastSeg(name)]; ok && strings.HasPrefix(name, "v1/projects/") {
				writeJSON(w, p)
				return
			}
			gerr(w, http.StatusNotFound, "NOT_FOUND", "Secret ["+strings.TrimPrefix(name, "v1/")+"] not found or has no versions.")
			return
		}
	case "cloudresourcemanager":
		s.crm(w, r, rest)
		return
	case "accesscontextmanager":
		s.acm(w, r, rest, q)
		return
	}
	s.count("not found")
	gerr(w, http.StatusNotFound, "NOT_FOUND", fmt.Sprintf("The requested URL %s was not found on this server.", r.URL.Path))
}

// metadata answers as the GCE metadata server does for a VM's default
// service account (the Metadata-Flavor header both ways).
func (s *Server) metadata(w http.ResponseWriter, r *http.Request, rest string) {
	s.count("metadata " + lastSeg(rest))
	w.Header().Set("Metadata-Flavor", "Google")
	switch {
	case r.Header.Get("Metadata-Flavor") != "Google":
		http.Error(w, "Missing Metadata-Flavor:Google header.", http.StatusForbidden)
	case s.MetadataEmail != "" && rest == "instance/service-accounts/default/token":
		writeJSON(w, map[string]any{"access_token": Token, "expires_in": 3599, "token_type": "Bearer"})
	case s.MetadataEmail != "" && rest == "instance/service-accounts/default/email":
		w.Header().Set("Content-Type", "application/text")
		fmt.Fprint(w, s.MetadataEmail)
	default:
		http.Error(w, "Not Found", http.StatusNotFound)
	}
}

func lastSeg(p string) string { return p[strings.LastIndex(p, "/")+1:] }

// window is one page of n items: [start, end) and the next token.
func (s *Server) window(n int, q url.Values, param string) (int, int, string) {
	size := s.PageSize
	if v, err := strconv.Atoi(q.Get(param)); err == nil && v > 0 && (size <= 0 || v < size) {
		size = v
	}
	if size <= 0 {
		size = n
	}
	start, _ := strconv.Atoi(q.Get("pageToken"))
	start = min(max(start, 0), n)
	end := min(start+size, n)
	next := ""
	if end < n {
		next = strconv.Itoa(end)
	}
	return start, end, next
}

func pageOf[T any](s *Server, items []T, q url.Values, param string) ([]T, string) {
	a, b, next := s.window(len(items), q, param)
	return append([]T{}, items[a:b]...), next
}

// networkFilter honours the one Compute filter collect sends: network="URL".
func networkFilter(q url.Values) string {
	f := q.Get("filter")
	if v, ok := strings.CutPrefix(f, "network="); ok {
		return strings.Trim(v, `"`)
	}
	return ""
}

func sameNet(a, b string) bool {
	i, j := strings.Index(a, "projects/"), strings.Index(b, "projects/")
	return i >= 0 && j >= 0 && a[i:] == b[j:]
}

func (s *Server) compute(w http.ResponseWriter, r *http.Request, p []string, q url.Values) {
	// p: projects/P/...
	if len(p) < 3 || p[0] != "projects" || r.Method != http.MethodGet {
		s.count("compute ?")
		gerr(w, http.StatusNotFound, "NOT_FOUND", "The resource was not found")
		return
	}
	proj, p := p[1], p[2:]
	m := s.m
	netProj := m.NetworkProject()
	switch {
	case len(p) == 2 && p[0] == "aggregated" && p[1] == "instances" && proj == m.ClusterProject():
		s.count("compute instances")
		items := m.Instances
		if f := q.Get("filter"); f != "" {
			want := strings.TrimPrefix(f, "labels.goog-k8s-cluster-name=")
			items = items[:0:0]
			for _, in := range m.Instances {
				if in.Labels["goog-k8s-cluster-name"] == want {
					items = append(items, in)
				}
			}
		}
		page, next := pageOf(s, items, q, "maxResults")
		byZone := map[string]any{}
		for _, in := range page {
			z := "zones/" + lastSeg(in.Zone)
			e, _ := byZone[z].(map[string]any)
			if e == nil {
				e = map[string]any{"instances": []any{}}
			}
			e["instances"] = append(e["instances"].([]any), in)
			byZone[z] = e
		}
		writeJSON(w, map[string]any{"kind": "compute#instanceAggregatedList", "items": byZone, "nextPageToken": next})
		return
	case len(p) == 4 && p[0] == "zones" && p[2] == "instances" && proj == m.ClusterProject():
		s.count("compute instance")
		for _, in := range m.Instances {
			if in.Name == p[3] && lastSeg(in.Zone) == p[1] {
				writeJSON(w, in)
				return
			}
		}
		gerr(w, http.StatusNotFound, "NOT_FOUND", fmt.Sprintf("The resource 'projects/%s/zones/%s/instances/%s' was not found", proj, p[1], p[3]))
		return
	case len(p) == 3 && p[0] == "global" && p[1] == "networks" && proj == netProj:
		s.count("compute networks")
		if m.Network != nil && m.Network.Name == p[2] {
			writeJSON(w, m.Network)
			return
		}
	case len(p) == 4 && p[0] == "regions" && p[2] == "subnetworks":
		s.count("compute subnetworks")
		if sn, ok := m.Subnets[strings.ToLower(fmt.Sprintf("projects/%s/regions/%s/subnetworks/%s", proj, p[1], p[3]))]; ok {
			writeJSON(w, sn)
			return
		}
	case len(p) == 2 && p[0] == "global" && p[1] == "routes" && proj == netProj:
		s.count("compute routes")
		items := m.Routes[:0:0]
		for _, x := range m.Routes {
			if f := networkFilter(q); f == "" || sameNet(x.Network, f) {
				items = append(items, x)
			}
		}
		page, next := pageOf(s, items, q, "maxResults")
		writeJSON(w, map[string]any{"kind": "compute#routeList", "items": page, "nextPageToken": next})
		return
	case len(p) == 2 && p[0] == "global" && p[1] == "firewalls" && proj == netProj:
		s.count("compute firewalls")
		items := m.Firewalls[:0:0]
		for _, x := range m.Firewalls {
			if f := networkFilter(q); f == "" || sameNet(x.Network, f) {
				items = append(items, x)
			}
		}
		page, next := pageOf(s, items, q, "maxResults")
		writeJSON(w, map[string]any{"kind": "compute#firewallList", "items": page, "nextPageToken": next})
		return
	case len(p) == 3 && p[0] == "regions" && p[2] == "routers" && proj == netProj:
		s.count("compute routers")
		items := m.Routers[:0:0]
		for _, x := range m.Routers {
			if lastSeg(x.Region) == p[1] && (networkFilter(q) == "" || sameNet(x.Network, networkFilter(q))) {
				items = append(items, x)
			}
		}
		page, next := pageOf(s, items, q, "maxResults")
		writeJSON(w, map[string]any{"kind": "compute#routerList", "items": page, "nextPageToken": next})
		return
	}
	s.count("compute ?")
	gerr(w, http.StatusNotFound, "NOT_FOUND", fmt.Sprintf("The resource 'projects/%s/%s' was not found", proj, strings.Join(p, "/")))
}

func (s *Server) dns(w http.ResponseWriter, r *http.Request, p []string, q url.Values) {
	// p (after dns/v1): projects/P/managedZones[/Z/rrsets] | projects/P/policies
	m := s.m
	if len(p) < 3 || p[0] != "projects" || p[1] != m.NetworkProject() || r.Method != http.MethodGet {
		s.count("dns ?")
		gerr(w, http.StatusNotFound, "NOT_FOUND", "The 'parameters.project' resource named '"+strings.Join(p, "/")+"' does not exist.")
		return
	}
	switch {
	case len(p) == 3 && p[2] == "managedZones":
		s.count("dns managedZones")
		page, next := pageOf(s, m.Zones, q, "maxResults")
		writeJSON(w, map[string]any{"kind": "dns#managedZonesListResponse", "managedZones": page, "nextPageToken": next})
		return
	case len(p) == 3 && p[2] == "policies":
		s.count("dns policies")
		page, next := pageOf(s, m.Policies, q, "maxResults")
		writeJSON(w, map[string]any{"kind": "dns#policiesListResponse", "policies": page, "nextPageToken": next})
		return
	case len(p) == 5 && p[2] == "managedZones" && p[4] == "rrsets":
		s.count("dns rrsets")
		recs, ok := m.Records[p[3]]
		if !ok {
			gerr(w, http.StatusNotFound, "NOT_FOUND", "The 'parameters.managedZone' resource named '"+p[3]+"' does not exist.")
			return
		}
		items := recs[:0:0]
		for _, x := range recs {
			if (q.Get("name") == "" || strings.EqualFold(x.Name, q.Get("name"))) && (q.Get("type") == "" || x.Type == q.Get("type")) {
				items = append(items, x)
			}
		}
		page, next := pageOf(s, items, q, "maxResults")
		writeJSON(w, map[string]any{"kind": "dns#resourceRecordSetsListResponse", "rrsets": page, "nextPageToken": next})
		return
	}
	s.count("dns ?")
	gerr(w, http.StatusNotFound, "NOT_FOUND", "not found")
}

func (s *Server) crm(w http.ResponseWriter, r *http.Request, rest string) {
	m := s.m
	proj := ""
	if m.Project != nil {
		proj = m.Project.ProjectId
	}
	switch {
	case r.Method == http.MethodPost && rest == "v1/projects/"+proj+":getIamPolicy" && m.ProjectPolicy != nil:
		s.count("crm getIamPolicy")
		writeJSON(w, m.ProjectPolicy)
		return
	case r.Method == http.MethodGet && rest == "v1/projects/"+proj:
		s.count("crm projects")
		writeJSON(w, m.Project)
		return
	case r.Method == http.MethodGet && strings.HasPrefix(rest, "v1/projects/") && m.NodeProjects[strings.TrimPrefix(rest, "v1/projects/")] != nil:
		s.count("crm projects")
		writeJSON(w, m.NodeProjects[strings.TrimPrefix(rest, "v1/projects/")])
		return
	case r.Method == http.MethodPost && rest == "v1/projects/"+proj+":getAncestry":
		s.count("crm getAncestry")
		writeJSON(w, map[string]any{"ancestor": []any{map[string]any{"resourceId": map[string]any{"type": "project", "id": proj}},
			map[string]any{"resourceId": map[string]any{"type": "organization", "id": s.org}}}})
		return
	}
	s.count("crm ?")
	gerr(w, http.StatusForbidden, "PERMISSION_DENIED", "The caller does not have permission")
}

func (s *Server) acm(w http.ResponseWriter, r *http.Request, rest string, q url.Values) {
	const policy = "accessPolicies/987654321098"
	switch {
	case r.Method == http.MethodGet && rest == "v1/accessPolicies" && q.Get("parent") == "organizations/"+s.org:
		s.count("acm accessPolicies")
		writeJSON(w, map[string]any{"accessPolicies": []any{map[string]any{"name": policy, "parent": "organizations/" + s.org, "title": "default policy"}}})
		return
	case r.Method == http.MethodGet && rest == "v1/"+policy+"/servicePerimeters":
		s.count("acm servicePerimeters")
		if !s.m.PerimetersKnown {
			gerr(w, http.StatusForbidden, "PERMISSION_DENIED", "Permission 'accesscontextmanager.servicePerimeters.list' denied on resource '"+policy+"' (or it may not exist).")
			return
		}
		page, next := pageOf(s, s.m.Perimeters, q, "pageSize")
		writeJSON(w, map[string]any{"servicePerimeters": page, "nextPageToken": next})
		return
	}
	s.count("acm ?")
	gerr(w, http.StatusForbidden, "PERMISSION_DENIED", "The caller does not have permission")
}
